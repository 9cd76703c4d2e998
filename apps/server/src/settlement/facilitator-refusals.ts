/**
 * What a caller is told when the facilitator refuses a payment or its settlement: a refusal reason of this service
 * and a sentence of its own. The facilitator's `invalidMessage` / `errorMessage` (library text, call arguments,
 * contract addresses, RPC URLs) never reaches the caller; it goes to the log with the request id.
 */
import type { PaymentRefusalReason } from "@agent-tools/schema";

export interface CallerRefusal {
  reason: PaymentRefusalReason;
  sentence: string;
}

/** x402's reason codes for an `exact` or `upto` EVM payment (`@x402/evm`), as sentences a caller can act on. */
const SENTENCES: [pattern: RegExp, refusal: CallerRefusal][] = [
  [
    /permit2_allowance_required/,
    {
      reason: "invalid_payment",
      sentence:
        "the payer has not approved Permit2 (0x000000000022D473030F116dDEE9F6B43aC78BA3) to move the asset: an upto " +
        "payment needs that one-time approval",
    },
  ],
  [
    /insufficient_(balance|funds)/,
    { reason: "insufficient_funds", sentence: "the payer's balance does not cover the price" },
  ],
  [/signature/, { reason: "invalid_payment", sentence: "the payment's signature is not the payer's" }],
  [/valid_before|expired/, { reason: "invalid_payment", sentence: "the payment authorization has expired" }],
  [/valid_after/, { reason: "invalid_payment", sentence: "the payment authorization is not valid yet" }],
  [/value|amount/, { reason: "invalid_payment", sentence: "the payment's amount is not the price quoted" }],
  [/recipient|pay_to/, { reason: "invalid_payment", sentence: "the payment is not made out to this service's payee" }],
  [/network/, { reason: "invalid_payment", sentence: "the payment is for another network" }],
  [/token_name|token_version|asset/, { reason: "invalid_payment", sentence: "the payment is not in the asset quoted" }],
  [/scheme/, { reason: "invalid_payment", sentence: "the payment is not of the exact scheme quoted" }],
  [/transaction|simulation/, { reason: "invalid_payment", sentence: "the payment would fail on chain" }],
];

/** A reason code fit to show as it is: x402's are short snake_case identifiers. */
const CODE = /^[a-z0-9_]{1,80}$/;

/** The caller's reason and sentence for a facilitator's `invalidReason` at verify. */
export function verifyRefusal(invalidReason: string | undefined): CallerRefusal {
  const code = invalidReason && CODE.test(invalidReason) ? invalidReason : undefined;
  const known = code ? SENTENCES.find(([pattern]) => pattern.test(code)) : undefined;
  if (known) return { reason: known[1].reason, sentence: `${known[1].sentence} (${code})` };
  return {
    reason: "invalid_payment",
    sentence: code ? `the facilitator refused the payment (${code})` : "the facilitator refused the payment",
  };
}

/** The caller's sentence for a settlement the facilitator refused (nothing was charged). */
export function settlementRefusal(errorReason: string | undefined): CallerRefusal {
  const code = errorReason && CODE.test(errorReason) ? errorReason : undefined;
  const known = code ? SENTENCES.find(([pattern]) => pattern.test(code)) : undefined;
  const why = known ? `: ${known[1].sentence}` : "";
  return {
    reason: "settlement_failed",
    sentence: `the payment could not be settled${why}${code ? ` (${code})` : ""}; nothing was charged`,
  };
}

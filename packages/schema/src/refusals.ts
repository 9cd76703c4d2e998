/**
 * Why a paid call got 402 instead of its answer: a closed set of reasons. The 402's `error` (x402's
 * `PaymentRequired.error`, a string) is `<reason>: <a sentence for people>`; clients read the reason with
 * {@link parsePaymentRefusal} and switch on it, never on the sentence.
 */
export const PAYMENT_REFUSAL_REASONS = {
  /** No `PAYMENT-SIGNATURE` came with the request: pay the price quoted and send the request again. */
  payment_required: "no payment came with the request",
  /** The payment is not a valid x402 v2 `exact` payment of the price quoted (amount, asset, payee, network, time, signature, funds). */
  invalid_payment: "the payment does not pay the price quoted",
  /** The payment is in x402's version 1 format; this service speaks version 2 (`@x402/fetch`, `@x402/axios`). */
  unsupported_x402_version: "the payment is of another x402 version",
  /** The payer's balance does not cover this payment together with the payments it has in flight. */
  insufficient_funds: "the payer's balance does not cover the payment",
  /** The same payment authorization is being used by another request right now. */
  payment_in_use: "the payment is in use by another request",
  /** The payment authorization already bought a call. */
  payment_already_used: "the payment already bought a call",
  /** The facilitator could not take the payment; nothing was charged and the answer was withheld. */
  settlement_failed: "the payment could not be settled",
  /** The `SIGN-IN-WITH-X` header is invalid: signature, origin, age, chain or a spent nonce. */
  invalid_siwx: "the sign-in was refused",
  /** Anonymous access is off: sign in as a holder (`SIGN-IN-WITH-X`) to be quoted. */
  sign_in_required: "a sign-in is required",
  // x402's `batch-settlement` codes (its EVM binding, "Error Codes"): a channel payment refused for the scheme's own
  // reason. The corrective 402 of the first two carries the channel's state, and its `error` is the bare code.
  /** The voucher's cumulative amount is not the channel's charged total plus this price: see `extra.channelState`. */
  invalid_batch_settlement_evm_cumulative_amount_mismatch: "the voucher is out of step with the channel",
  /** The voucher's cumulative amount is below what was already claimed on chain. */
  invalid_batch_settlement_evm_cumulative_below_claimed: "the voucher is below what was claimed",
  /** The voucher asks more than the channel's balance (with the deposit it comes with). */
  invalid_batch_settlement_evm_cumulative_exceeds_balance: "the channel's balance does not cover the voucher",
  /** Another call holds the channel: send the next voucher once it answered. */
  invalid_batch_settlement_evm_channel_busy: "another call is using the channel",
  /** No channel with a balance has this id: deposit first. */
  invalid_batch_settlement_evm_channel_not_found: "no such channel",
  /** The channel's terms do not hash to the id the voucher names. */
  invalid_batch_settlement_evm_channel_id_mismatch: "the channel id does not match its terms",
  /** The channel's receiver is not the service's `payTo`. */
  invalid_batch_settlement_evm_receiver_mismatch: "the channel pays another receiver",
  /** The channel's receiver authorizer is not the one quoted. */
  invalid_batch_settlement_evm_receiver_authorizer_mismatch: "the channel names another receiver authorizer",
  /** The channel's token is not the asset quoted. */
  invalid_batch_settlement_evm_token_mismatch: "the channel holds another token",
  /** The channel's withdrawal delay is not the one quoted. */
  invalid_batch_settlement_evm_withdraw_delay_mismatch: "the channel's withdrawal delay differs",
  /** The voucher is not signed by the channel's payer authorizer. */
  invalid_batch_settlement_evm_voucher_signature: "the voucher's signature is not the payer's",
  /** The channel payload is malformed. */
  invalid_batch_settlement_evm_voucher_payload: "the channel payload is malformed",
  /** A cooperative refund was asked of a channel with nothing left to give back. */
  invalid_batch_settlement_evm_refund_no_balance: "nothing is left to refund",
  /** A cooperative refund's amount is not a positive whole number within what is refundable. */
  invalid_batch_settlement_evm_refund_amount_invalid: "the refund amount is invalid",
} as const;

/** Why the service refused a payment or a sign-in (the keys of {@link PAYMENT_REFUSAL_REASONS}). */
export type PaymentRefusalReason = keyof typeof PAYMENT_REFUSAL_REASONS;

const REASONS = new Set<string>(Object.keys(PAYMENT_REFUSAL_REASONS));

/** The reasons whose 402 `error` is the reason alone, as x402's `batch-settlement` client reads it. */
const BARE_REASONS = new Set<string>([
  "invalid_batch_settlement_evm_cumulative_amount_mismatch",
  "invalid_batch_settlement_evm_cumulative_below_claimed",
]);

/** Whether `value` is one of the service's payment refusal reasons. */
export function isPaymentRefusalReason(value: unknown): value is PaymentRefusalReason {
  return typeof value === "string" && REASONS.has(value);
}

/**
 * The `error` of a 402: the reason, then a sentence saying what happened and what to do, ended with a full stop
 * when it has no mark of its own.
 */
export function paymentRefusal(reason: PaymentRefusalReason, sentence: string): string {
  // x402's channel clients compare these two with `===` to recover their channel's state (the corrective 402).
  if (BARE_REASONS.has(reason)) return reason;
  return `${reason}: ${/[.!?]$/.test(sentence) ? sentence : `${sentence}.`}`;
}

/**
 * The reason and the sentence of a 402's `error`. `reason` is undefined when the error does not start with one of
 * {@link PAYMENT_REFUSAL_REASONS} (another service, or no error at all).
 */
export function parsePaymentRefusal(error: string | undefined): {
  reason: PaymentRefusalReason | undefined;
  message: string;
} {
  if (!error) return { reason: undefined, message: "" };
  const colon = error.indexOf(":");
  const head = colon < 0 ? error : error.slice(0, colon);
  if (!isPaymentRefusalReason(head)) return { reason: undefined, message: error };
  return { reason: head, message: colon < 0 ? PAYMENT_REFUSAL_REASONS[head] : error.slice(colon + 1).trim() };
}

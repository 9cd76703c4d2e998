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
} as const;

/** Why the service refused a payment or a sign-in (the keys of {@link PAYMENT_REFUSAL_REASONS}). */
export type PaymentRefusalReason = keyof typeof PAYMENT_REFUSAL_REASONS;

const REASONS = new Set<string>(Object.keys(PAYMENT_REFUSAL_REASONS));

/** Whether `value` is one of the service's payment refusal reasons. */
export function isPaymentRefusalReason(value: unknown): value is PaymentRefusalReason {
  return typeof value === "string" && REASONS.has(value);
}

/**
 * The `error` of a 402: the reason, then a sentence saying what happened and what to do, ended with a full stop
 * when it has no mark of its own.
 */
export function paymentRefusal(reason: PaymentRefusalReason, sentence: string): string {
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

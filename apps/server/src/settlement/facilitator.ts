import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";

/** x402's reason for an EIP-3009 authorization the token reports used (`authorizationState`). */
export const AUTHORIZATION_USED = "invalid_exact_evm_nonce_already_used";

/** The built-in facilitator's reason for a settlement sent whose receipt did not come in time: not known yet. */
export const SETTLEMENT_PENDING = "settlement_pending";

/**
 * What the service needs from an x402 facilitator: verify a payment, then settle it. A settlement that was sent
 * but not seen through answers `success: false` with its `transaction`: the payer may be charged, so the call's
 * ledger claim is kept for the reconciler.
 */
export interface Facilitator {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
}

/**
 * One facilitator for every scheme the service takes: a payment of a scheme in `bySchemes` goes to its own
 * facilitator (`upto`'s, bound to the facilitator address its payer signed), any other to `others`.
 */
export function facilitatorBySchemes(
  others: Facilitator,
  bySchemes: Readonly<Record<string, Facilitator>>,
): Facilitator {
  const of = (requirements: PaymentRequirements) =>
    (Object.hasOwn(bySchemes, requirements.scheme) ? bySchemes[requirements.scheme] : undefined) ?? others;
  return {
    verify: (payload, requirements) => of(requirements).verify(payload, requirements),
    settle: (payload, requirements) => of(requirements).settle(payload, requirements),
  };
}

import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";

/**
 * What the service needs from an x402 facilitator: verify a payment, then settle it. A settlement that was sent
 * but not seen through answers `success: false` with its `transaction`: the payer may be charged, so the call's
 * ledger claim is kept for the reconciler.
 */
export interface Facilitator {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
}

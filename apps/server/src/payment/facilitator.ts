import { HTTPFacilitatorClient } from "@x402/core/server";
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

/** Any x402 v2 facilitator reached over HTTP (`FACILITATOR_URL`). */
export function createHttpFacilitator(url: string): Facilitator {
  const client = new HTTPFacilitatorClient({ url });
  return {
    verify: (payload, requirements) => client.verify(payload, requirements),
    settle: (payload, requirements) => client.settle(payload, requirements),
  };
}

import type { PaymentRequirements, ToolRoute } from "@agent-tools/schema";
import type { PaymentPayload } from "@x402/core/types";
import type { Response } from "express";
import type { Address } from "viem";
import type { IndexedToken } from "../chain/collection-index.js";

/** What the steps of a paid call learn, in order (validate, identify, policy, price, pay). */
export interface CallState {
  route: ToolRoute;
  /** The request validated by the route's schema, defaults applied. */
  params: { tokenId: number } & Record<string, unknown>;
  /** The signed-in caller, when a valid `SIGN-IN-WITH-X` came with the request. */
  caller?: Address;
  /** The SIWX nonce to spend once this call is served. */
  signInNonce?: string;
  token: IndexedToken;
  /** The one price point that applies to this caller. */
  price: { point: "standard" | "discounted"; requirements: PaymentRequirements };
  /** The verified payment, and the replay key it holds until it settles or is given back. */
  payment: {
    payload: PaymentPayload;
    replayKey: string;
    payer: Address;
    /**
     * Gives the payment and the sign-in nonce back for another call. `keepClaim` leaves the ledger's claim
     * pending, for a settlement whose outcome is unknown (the reconciler decides it from the chain).
     */
    release(options?: { keepClaim?: boolean }): Promise<void>;
  };
}

/** The state of the call this response belongs to (filled step by step). */
export function callState(res: Response): Partial<CallState> & Pick<CallState, "route"> {
  return res.locals.call as Partial<CallState> & Pick<CallState, "route">;
}

export function startCall(res: Response, route: ToolRoute): void {
  res.locals.call = { route };
}

import { type PaymentTerms, type PricePoint, routePaymentRequirements, type ToolRoute } from "@agent-tools/schema";
import type { Response } from "express";
import type { SettlementLedger } from "../store/settlement-ledger.js";
import { buildPaymentRequired, sendPaymentRequired } from "./challenge.js";
import type { Facilitator } from "./facilitator.js";
import type { ReplayGuard } from "./replay-guard.js";

/** Everything the payment steps share: terms, facilitator, replay guards, sign-in settings. */
export interface PaymentService {
  publicUrl: string;
  terms: PaymentTerms;
  facilitator: Facilitator;
  /** EIP-3009 authorizations in flight or settled, in this instance (a fast first check). */
  payments: ReplayGuard;
  /** The durable record of payments: claimed before a call runs, settled before its answer leaves. */
  ledger: SettlementLedger;
  /** SIWX nonces of calls in flight or served. */
  signInNonces: ReplayGuard;
  /** CAIP-2 chains accepted in sign-in messages. */
  signInChains: string[];
  anonymousAccess: boolean;
  now: () => Date;
  /**
   * Answers 402 quoting `point` of `route` (the standard point for an anonymous caller when `point` is
   * undefined, or the discounted point when anonymous access is off).
   */
  challenge(res: Response, route: ToolRoute, point: PricePoint | undefined, error: string): void;
}

export type PaymentServiceOptions = Omit<PaymentService, "challenge">;

export function createPaymentService(options: PaymentServiceOptions): PaymentService {
  return {
    ...options,
    challenge(res, route, point, error) {
      const quoted = point ?? (options.anonymousAccess ? "standard" : "discounted");
      const paymentRequired = buildPaymentRequired(
        route,
        [routePaymentRequirements(options.terms, route, quoted)],
        error,
        {
          publicUrl: options.publicUrl,
          signInChains: options.signInChains,
          now: options.now,
        },
      );
      sendPaymentRequired(res, paymentRequired);
    },
  };
}

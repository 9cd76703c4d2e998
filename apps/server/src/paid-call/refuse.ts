import {
  type PaymentRefusalReason,
  type PricePoint,
  paymentRefusal,
  routePaymentRequirements,
  type ToolRoute,
} from "@agent-tools/schema";
import { buildPaymentRequired, type CallMethod } from "./challenge.js";
import type { PaidCallDeps, Refusal } from "./paid-call-types.js";
import type { PaymentService } from "./payment-service.js";

/** Refuses a call with 402: its reason and sentence in x402's `PaymentRequired`, quoting `point` (counted). */
export type Refuse = (
  route: ToolRoute,
  method: CallMethod,
  point: PricePoint | undefined,
  reason: PaymentRefusalReason,
  sentence: string,
) => { admitted: false; settled: false; refusal: Refusal };

export function createRefuser(
  payments: PaymentService,
  metrics: PaidCallDeps["metrics"],
  refusalCounts?: PaidCallDeps["refusalCounts"],
): Refuse {
  return (route, method, point, reason, sentence) => {
    const quoted = point ?? (payments.anonymousAccess ? "standard" : "discounted");
    refusalCounts?.add(reason);
    metrics?.refusals.inc({ reason });
    metrics?.paidCalls.inc({ route: route.path, price_point: quoted, outcome: "refused" });
    const paymentRequired = buildPaymentRequired(
      route,
      [routePaymentRequirements(payments.terms, route, quoted)],
      paymentRefusal(reason, sentence),
      {
        publicUrl: payments.publicUrl,
        signInChains: payments.signInChains,
        now: payments.now,
        ...(payments.receipts ? { offers: payments.receipts.offersFor } : {}),
      },
      method,
    );
    return { admitted: false, settled: false, refusal: { reason, paymentRequired } };
  };
}

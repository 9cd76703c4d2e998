import { paymentRefusal, routeAccepts } from "@agent-tools/schema";
import { buildPaymentRequired } from "./challenge.js";
import type { PaidCallDeps, Refuse } from "./paid-call-types.js";
import type { PaymentService } from "./payment-service.js";

export function createRefuser(
  payments: PaymentService,
  metrics: PaidCallDeps["metrics"],
  refusalCounts?: PaidCallDeps["refusalCounts"],
): Refuse {
  return (route, method, point, reason, sentence, extra) => {
    const quoted = point ?? (payments.anonymousAccess ? "standard" : "discounted");
    refusalCounts?.add(reason);
    metrics?.refusals.inc({ reason });
    metrics?.paidCalls.inc({ route: route.path, price_point: quoted, outcome: "refused" });
    const accepts = routeAccepts(payments.terms, route, quoted).map((accept) =>
      extra && accept.scheme === extra.scheme ? { ...accept, extra: { ...accept.extra, ...extra.fields } } : accept,
    );
    const paymentRequired = buildPaymentRequired(
      route,
      accepts,
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

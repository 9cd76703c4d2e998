import { type PaidRouteName, paidRoutes, type ToolRoute } from "@agent-tools/schema";
import { Router } from "express";
import type { CollectionIndex } from "../chain/collection-index.js";
import { HttpError } from "../http/errors.js";
import { enforcePolicy } from "../middleware/enforce-policy.js";
import { identifyCaller } from "../middleware/identify-caller.js";
import { priceCall } from "../middleware/price-call.js";
import { requirePayment } from "../middleware/require-payment.js";
import { runPaidTool } from "../middleware/run-paid-tool.js";
import { timed } from "../middleware/server-timing.js";
import { validateToolRequest } from "../middleware/validate-tool-request.js";
import type { PaymentService } from "../payment/payment-service.js";
import type { Tool } from "../tools/types.js";

export type ToolSet = { [N in PaidRouteName]?: Tool<N> };

/**
 * Every paid tool route, POST (JSON body) and GET (query parameters), through the same steps in DESIGN's
 * order: validate, identify, policy, price, pay, run and settle. A route whose tool is not in `tools` still
 * answers 400 / 403 / 402 and then 501.
 */
export function toolRoutesRouter(deps: {
  tools: ToolSet;
  payments: PaymentService;
  collection: CollectionIndex;
}): Router {
  const router = Router();
  for (const [name, route] of Object.entries(paidRoutes) as [PaidRouteName, ToolRoute][]) {
    const tool = deps.tools[name] as Tool<never> | undefined;
    const steps = [
      timed("validate", validateToolRequest(route)),
      timed("identify", identifyCaller(deps.payments)),
      timed("policy", enforcePolicy(deps.collection)),
      timed("price", priceCall(deps.payments)),
      requirePayment(deps.payments),
      runPaidTool(tool ?? notBuiltYet(name), deps),
    ];
    const only = "method" in route ? route.method : undefined;
    if (only !== "get") router.post(route.path, ...steps);
    if (only !== "post") router.get(route.path, ...steps);
  }
  return router;
}

/** Stand-in for a tool that is not built yet: 501 after the payment was verified, which gives the payment back. */
function notBuiltYet(name: PaidRouteName): Tool<never> {
  return async () => {
    throw new HttpError("not_implemented", `The ${name} tool is not available yet; you were not charged.`);
  };
}

import { type PaidRouteName, paidRoutes, type ToolRoute } from "@agent-tools/schema";
import { Router } from "express";
import type { CallLimiter } from "../../../limits/call-limiter.js";
import { ipLimits } from "../middleware/ip-limits.js";
import { type PaidRouteDeps, paidRoute } from "../paid-route.js";

/**
 * Every paid tool route, POST (JSON body) and GET (query parameters), each a paid call (validate, identify,
 * policy, price, pay, run, settle). A route whose tool is not in `tools` still answers 400 / 403 / 402 and then 501.
 */
export function toolRoutesRouter(deps: PaidRouteDeps & { perIp: CallLimiter }): Router {
  const router = Router();
  // Per client address, before anything else of the paid call (docs/decisions.md, "Limits").
  const limited = ipLimits(deps.perIp);
  for (const [name, route] of Object.entries(paidRoutes) as [PaidRouteName, ToolRoute][]) {
    const handler = paidRoute(name, deps);
    const only = "method" in route ? route.method : undefined;
    if (only !== "get") router.post(route.path, limited, handler);
    if (only !== "post") router.get(route.path, limited, handler);
  }
  return router;
}

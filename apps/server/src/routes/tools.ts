import { type PaidRouteName, paidRoutes, type ToolRoute } from "@agent-tools/schema";
import { Router } from "express";
import { HttpError } from "../http/errors.js";
import { type PaidRouteDeps, paidRoute } from "../http/paid-route.js";
import type { Tool, ToolSet } from "../tools/types.js";

/**
 * Every paid tool route, POST (JSON body) and GET (query parameters), each a paid call (validate, identify,
 * policy, price, pay, run, settle). A route whose tool is not in `tools` still answers 400 / 403 / 402 and then 501.
 */
export function toolRoutesRouter(deps: PaidRouteDeps & { tools: ToolSet }): Router {
  const router = Router();
  for (const [name, route] of Object.entries(paidRoutes) as [PaidRouteName, ToolRoute][]) {
    const handler = paidRoute(route, (deps.tools[name] as Tool<never> | undefined) ?? notBuiltYet(name), deps);
    const only = "method" in route ? route.method : undefined;
    if (only !== "get") router.post(route.path, handler);
    if (only !== "post") router.get(route.path, handler);
  }
  return router;
}

/** Stand-in for a tool that is not built yet: 501 after the payment was verified, which gives the payment back. */
function notBuiltYet(name: PaidRouteName): Tool<never> {
  return async () => {
    throw new HttpError("not_implemented", `The ${name} tool is not available yet; you were not charged.`);
  };
}

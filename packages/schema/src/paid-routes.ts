import type { z } from "zod";
import { examples } from "./examples.js";
import { type ToolRouteDefinition, toolRoutes } from "./routes.js";
import {
  dispatchRequestSchema,
  dispatchResponseSchema,
  listMissionsRequestSchema,
  listMissionsResponseSchema,
} from "./tools/dispatch.js";

/** The mission queue: POST queues a mission, GET lists them. Paid and priced like the tools. */
export const dispatchRoutes = {
  dispatch: {
    path: "/dispatch",
    method: "post",
    successStatus: 202,
    revealedOnly: true,
    paidAhead: true,
    operationId: "serviceDispatch",
    slug: "dispatch",
    summary: "Queue a mission",
    description:
      "Post-reveal mission queue: queues a deferred run of one of the tools for the agent (for example an allowlist " +
      "scan at 08:00 UTC) and answers 202 with the mission. The call pays for the run; the result is kept with the " +
      "mission (`GET /dispatch`). A mission runs once; an upstream failure is retried with backoff before the " +
      "mission is marked failed. Revealed agents only. Requires an Epic-tier or higher agent token (Elite clearance).",
    minimumClearance: "Elite",
    tags: ["missions", "dispatch"],
    request: dispatchRequestSchema,
    response: dispatchResponseSchema,
    sampleInput: {
      tokenId: 5,
      mission: { tool: "allowlist-scan", params: { type: "upcoming", limit: 10 } },
      runAt: "2026-11-23T08:00:00.000Z",
    },
    sampleOutput: examples.dispatch,
  },
  missions: {
    path: "/dispatch",
    method: "get",
    revealedOnly: true,
    operationId: "serviceListMissions",
    slug: "dispatch-missions",
    summary: "List missions",
    description:
      "The agent's missions, newest first, with their status, result or error, and counts by status. A mission " +
      "belongs to whoever bought it: the listing shows the missions paid by this call's payer and, signed in, those " +
      "the holder queued signed in. " +
      "Revealed agents only. Requires an Epic-tier or higher agent token (Elite clearance).",
    minimumClearance: "Elite",
    tags: ["missions", "dispatch"],
    request: listMissionsRequestSchema,
    response: listMissionsResponseSchema,
    sampleInput: { tokenId: 5, status: "done", limit: 20 },
    sampleOutput: examples.missions,
  },
} as const satisfies Record<string, ToolRouteDefinition>;

/** Every paid route: the tools and the mission queue. */
export const paidRoutes = { ...toolRoutes, ...dispatchRoutes } as const;

/** The name of a paid route: a tool, or the mission queue (`dispatch`, `missions`). */
export type PaidRouteName = keyof typeof paidRoutes;
/** The definition of any paid route (a tool's, or the mission queue's). */
export type ToolRoute = (typeof paidRoutes)[PaidRouteName];
/** Request body a caller sends (defaults may be left out). */
export type ToolInput<T extends PaidRouteName> = z.input<(typeof paidRoutes)[T]["request"]>;
/** Request after validation, defaults applied: what a tool receives. */
export type ToolParams<T extends PaidRouteName> = z.output<(typeof paidRoutes)[T]["request"]>;
/** The answer of the paid route `T`, as its contract types it after parsing. */
export type ToolOutput<T extends PaidRouteName> = z.output<(typeof paidRoutes)[T]["response"]>;

/** Every paid route's name, in the order of the route table. */
export const paidRouteNames = Object.keys(paidRoutes) as PaidRouteName[];

/** The HTTP method a catalog or manifest names for a route: its one method, else POST (GET also answers). */
export function routeMethod(route: ToolRoute): "POST" | "GET" {
  return "method" in route && route.method === "get" ? "GET" : "POST";
}

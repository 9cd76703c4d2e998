import type { ToolRoute } from "@agent-tools/schema";
import type { Tool, ToolContext } from "./types.js";

/**
 * Runs a tool as its route does, for a paid call and for a queued mission alike: the validated request in, the
 * answer out, checked against the route's contract before anyone is charged for it.
 */
export async function runTool(
  route: ToolRoute,
  tool: Tool<never>,
  params: { tokenId: number } & Record<string, unknown>,
  context: ToolContext,
): Promise<unknown> {
  return route.response.parse(await tool(params as never, context));
}

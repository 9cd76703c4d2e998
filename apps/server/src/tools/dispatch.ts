import { type MissionTool, missionParamsSchema } from "@agent-tools/schema";
import { ServiceError } from "../errors/service-error.js";
import type { MissionQueue } from "../store/mission-queue.js";
import type { Tool } from "./types.js";
import { resolveWallet } from "./wallet.js";

/** "in 20 hours", "in 5 minutes", "now". */
export function fromNow(at: Date, now: Date): string {
  const seconds = Math.round((at.getTime() - now.getTime()) / 1000);
  if (seconds < 60) return "now";
  const [value, unit] =
    seconds < 3600
      ? [Math.round(seconds / 60), "minute"]
      : seconds < 172_800
        ? [Math.round(seconds / 3600), "hour"]
        : [Math.round(seconds / 86_400), "day"];
  return `in ${value} ${unit}${value === 1 ? "" : "s"}`;
}

/** Whether the tool, with these params, reads a wallet (named, or else the caller's). */
function needsWallet(tool: MissionTool, params: Record<string, unknown>): boolean {
  if (tool === "allowlist-scan" || tool === "portfolio") return true;
  return tool === "drop-radar" && params.checkWalletEligibility === true;
}

/**
 * `POST /dispatch`: queues a deferred run of a tool for the agent. The mission is bound to the call's payment:
 * it runs once that payment is settled, and goes away with it if the call fails.
 */
export function createDispatchTool(deps: { missions: MissionQueue; wake: () => void }): Tool<"dispatch"> {
  return async (input, context) => {
    const { payment } = context;
    if (!payment) throw new Error("a mission is queued by a paid call");
    const tool = input.mission.tool as MissionTool;
    const params = missionParamsSchema(tool).parse(input.mission.params) as Record<string, unknown>;
    // The wallet tools default to the signed-in caller; a mission queued anonymously has none to default to.
    if (needsWallet(tool, params) && !resolveWallet(params.walletAddress as string | undefined, context.caller)) {
      throw new ServiceError(
        "invalid_request",
        `A ${tool} mission queued without signing in must name mission.params.walletAddress.`,
        [{ field: "mission.params.walletAddress", message: "required when not signed in" }],
      );
    }
    const now = context.now();
    // A time in the past means now.
    const runAt = new Date(Math.max(input.runAt ? Date.parse(input.runAt) : 0, now.getTime()));
    const mission = await deps.missions.add({
      tokenId: input.tokenId,
      tool,
      params,
      caller: context.caller ?? null,
      requestedBy: context.caller ?? payment.payer,
      paymentKey: payment.key,
      runAt,
    });
    if (runAt.getTime() - now.getTime() < 1000) deps.wake();
    return {
      generatedAt: now.toISOString(),
      mission,
      brief:
        `Mission queued for agent #${input.tokenId}: ${tool} runs ${fromNow(runAt, now) === "now" ? "now" : `at ${runAt.toISOString()} (${fromNow(runAt, now)})`}. ` +
        `See its result with GET /dispatch?tokenId=${input.tokenId}.`,
    };
  };
}

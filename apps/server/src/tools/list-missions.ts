import type { Mission, MissionStatus } from "@agent-tools/schema";
import { countWork } from "../metering/work-meter.js";
import type { MissionCounts, MissionQueue } from "../store/mission-queue.js";
import type { Tool } from "./types.js";

function countsPhrase(counts: MissionCounts): string {
  const parts = (Object.entries(counts) as [MissionStatus, number][])
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${status}`);
  return parts.join(", ");
}

function latestPhrase(latest: Mission): string {
  if (latest.status === "done") return `The latest, ${latest.tool}, finished at ${latest.finishedAt}.`;
  if (latest.status === "failed")
    return `The latest, ${latest.tool}, failed: ${latest.error?.message ?? "no reason kept"}`;
  if (latest.status === "running") return `The latest, ${latest.tool}, is running (attempt ${latest.attempts}).`;
  return `The latest, ${latest.tool}, runs at ${latest.runAt}.`;
}

/**
 * `GET /dispatch`: the agent's missions that the caller bought, newest first: those paid by this call's payer, and,
 * signed in, those the holder queued signed in. A previous owner's missions and anyone else's stay theirs.
 */
export function createListMissionsTool(deps: { missions: MissionQueue }): Tool<"missions"> {
  return async (input, context) => {
    const { payment } = context;
    if (!payment) throw new Error("missions are listed by a paid call");
    const owner = { payer: payment.payer, ...(context.caller ? { caller: context.caller } : {}) };
    const scope = { tokenId: input.tokenId, owner };
    const [missions, counts] = await Promise.all([
      deps.missions.list({ ...scope, limit: input.limit, ...(input.status ? { status: input.status } : {}) }),
      deps.missions.counts(scope),
    ]);
    countWork("itemsExamined", missions.length);
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const whose =
      context.caller && context.caller !== payment.payer
        ? `of ${context.caller} or paid by ${payment.payer}`
        : `of ${payment.payer}`;
    const brief =
      total === 0
        ? `Agent #${input.tokenId} has no missions ${whose}. Queue one with POST /dispatch.`
        : `Agent #${input.tokenId} has ${total} mission${total === 1 ? "" : "s"} ${whose}: ${countsPhrase(counts)}. ` +
          (missions[0] ? latestPhrase(missions[0]) : `None is ${input.status}.`);
    return { tokenId: input.tokenId, generatedAt: context.now().toISOString(), counts, missions, brief };
  };
}

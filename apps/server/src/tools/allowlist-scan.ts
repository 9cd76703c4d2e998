import type { ToolOutput, ToolParams } from "@agent-tools/schema";
import { ServiceError, uncharged } from "../errors/service-error.js";
import { countWork } from "../metering/work-meter.js";
import { chainName } from "../upstream/marketplace/chains.js";
import { createMarketplaceDrops } from "../upstream/marketplace/drops.js";
import { collectDropSet, type DropSet } from "./drops/collect.js";
import { checkWallet, isRestricted, type StageCheck, stageOpen } from "./drops/eligibility.js";
import type { ActiveDrop } from "./drops/judge.js";
import { exclusionPhrase, feedPhrase, stagePhrase } from "./drops/wording.js";
import type { Tool, ToolDeps } from "./types.js";
import { requireWallet } from "./wallet.js";
import { plural, shortAddress, someOf } from "./wording.js";

type Entry = ToolOutput<"allowlistScan">["eligible"][number];

/** A drop whose allowlist or token-gated stages were checked for the wallet. */
interface Scanned {
  drop: ActiveDrop;
  /** The drop's restricted stages that have not ended, with the wallet's eligibility. */
  stages: StageCheck[];
  eligible: boolean;
}

function walletField(message: string) {
  return [{ field: "walletAddress", message }];
}

function entry(scanned: Scanned, now: Date): Entry {
  const { drop, stages } = scanned;
  const upcomingStarts = stages
    .map((s) => s.stage.startsAt?.getTime())
    .filter((t): t is number => t !== undefined && t > now.getTime());
  return {
    slug: drop.slug,
    name: drop.name,
    chain: drop.chain,
    openseaUrl: drop.openseaUrl,
    nextStageAt: upcomingStarts.length > 0 ? new Date(Math.min(...upcomingStarts)).toISOString() : null,
    stages: stages.map((s) => ({ stage: s.stage.name, eligible: s.eligible, reason: s.reason })),
  };
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                    Brief                                                     */
/* ----------------------------------------------------------------------------------------------------------- */

/**
 * "Copper Sunrise (does not meet the token gate)": why the wallet may mint in none of the drop's restricted stages,
 * each reason once, in the words of the answer's `stages[].reason` (the CLI's "why" column shows the same).
 */
function ineligiblePhrase(scanned: Scanned): string {
  const reasons = [...new Set(scanned.stages.filter((s) => !s.eligible).map((s) => s.reason ?? s.stage.name))];
  return reasons.length > 0 ? `${scanned.drop.name} (${reasons.join("; ")})` : scanned.drop.name;
}

/** "Quiet Orbit on Ethereum (Allowlist stage at 0.096 ETH opens in 2 days)": the first stage it may mint in. */
function eligiblePhrase(scanned: Scanned, now: Date): string {
  const stage = scanned.stages.find((s) => s.eligible)?.stage ?? scanned.drop.stage;
  return `${scanned.drop.name} on ${chainName(scanned.drop.chain)} (${stagePhrase(scanned.drop, now, stage)})`;
}

function brief(
  params: ToolParams<"allowlistScan">,
  set: DropSet,
  wallet: string,
  eligible: Scanned[],
  ineligible: Scanned[],
  now: Date,
): string {
  const feeds = feedPhrase(set.feeds);
  const where = params.chain ? ` on ${chainName(params.chain)}` : "";
  const publicOnly =
    set.notIncluded > 0
      ? `${plural(set.notIncluded, "other live or upcoming drop")} ${set.notIncluded === 1 ? "has" : "have"} only public stages, open to any wallet.`
      : undefined;
  const excluded = exclusionPhrase(set.excluded);
  const scanned = eligible.length + ineligible.length;
  if (scanned === 0) {
    return [
      `No live or upcoming drop in ${feeds}${where} has an allowlist or token-gated stage to check ${shortAddress(wallet)} against right now.`,
      publicOnly,
      excluded ? `${excluded}.` : undefined,
    ]
      .filter((s) => s !== undefined)
      .join(" ");
  }
  const sentences = [
    `Scanned ${plural(scanned, "live or upcoming drop")} with allowlist or token-gated stages in ${feeds}${where} ` +
      `for ${shortAddress(wallet)}: eligible for ${eligible.length}${ineligible.length > 0 ? `, not eligible for ${ineligible.length}` : ""}.`,
    eligible.length > 0
      ? `Eligible: ${someOf(
          eligible.map((s) => eligiblePhrase(s, now)),
          3,
        )}.`
      : undefined,
    ineligible.length === 0
      ? undefined
      : params.eligibleOnly
        ? `The ${plural(ineligible.length, "drop")} it is not eligible for ${ineligible.length === 1 ? "is" : "are"} left out of the answer (eligibleOnly).`
        : `Not eligible: ${someOf(ineligible.map(ineligiblePhrase), 4)}.`,
    publicOnly,
    excluded ? `${excluded}.` : undefined,
  ];
  return sentences.filter((s) => s !== undefined).join(" ");
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                     Tool                                                     */
/* ----------------------------------------------------------------------------------------------------------- */

/**
 * POST /allowlist-scan: the verifiably live or upcoming drops (drops/collect.ts) that have an allowlist or
 * token-gated stage still open or to come, checked for the wallet's eligibility. A drop is `eligible` when the
 * wallet may mint in at least one of those stages, `ineligible` when it may mint in none (public stages are open
 * to every wallet and decide nothing here). `limit` bounds the drops scanned.
 */
export function createAllowlistScanTool(deps: ToolDeps): Tool<"allowlistScan"> {
  const drops = createMarketplaceDrops(deps.marketplace);
  return async (params, context) => {
    const now = context.now();
    const wallet = requireWallet(params.walletAddress, context.caller, {
      message:
        "walletAddress is required for a caller who is not signed in: name the wallet to scan, or sign in to scan your own.",
      detail: "required when the caller is not signed in",
    });
    const token = deps.eligibilityToken(wallet);
    if (!token) {
      throw new ServiceError(
        "invalid_request",
        uncharged(
          `The marketplace answers mint eligibility only for wallets that authorized this service (scope read:eligibility), and ${wallet} has not.`,
        ),
        walletField("this wallet has not authorized eligibility reads at the marketplace"),
      );
    }

    const set = await collectDropSet(drops, {
      feed: params.type,
      chain: params.chain,
      scanChains: params.scanChains,
      watchSlugs: [],
      enrich: true,
      limit: params.limit,
      now,
      include: (drop) => drop.stages.some((stage) => isRestricted(stage) && stageOpen(stage, now)),
    });

    countWork("itemsExamined", set.available);
    const checks = await Promise.all(set.drops.map((drop) => checkWallet(drops, drop, token, now)));
    const scanned: Scanned[] = [];
    set.drops.forEach((drop, i) => {
      const check = checks[i]!;
      if (!check.checked) {
        // The drop went away between the listing and the check: nothing to scan.
        if (check.refused === "not_found") return;
        throw new ServiceError(
          "invalid_request",
          uncharged(`The marketplace would not read ${wallet}'s eligibility: ${check.error}.`),
          walletField(check.error),
        );
      }
      const stages = check.stages.filter((s) => isRestricted(s.stage));
      scanned.push({ drop, stages, eligible: stages.some((s) => s.eligible) });
    });
    const eligible = scanned.filter((s) => s.eligible);
    const ineligible = scanned.filter((s) => !s.eligible);

    return {
      type: params.type,
      generatedAt: now.toISOString(),
      scanned: scanned.length,
      eligibleCount: eligible.length,
      eligible: eligible.map((s) => entry(s, now)),
      ...(params.eligibleOnly ? {} : { ineligible: ineligible.map((s) => entry(s, now)) }),
      brief: brief(params, set, wallet, eligible, ineligible, now),
      ...(context.caller ? { caller: context.caller } : {}),
      // The clearance of the token named by tokenId, as the other radar tools echo it (for anonymous callers too).
      clearance: context.token.clearance,
    };
  };
}

import type { ToolOutput, ToolParams } from "@agent-tools/schema";
import { countWork } from "../metering/work-meter.js";
import { chainName } from "../upstream/marketplace/chains.js";
import type { DropStageInfo } from "../upstream/marketplace/drop-shapes.js";
import { createMarketplaceDrops, type MarketplaceDrops } from "../upstream/marketplace/drops.js";
import { collectDropSet, type DropSet } from "./drops/collect.js";
import { checkWallet, isRestricted, type WalletCheck } from "./drops/eligibility.js";
import type { ActiveDrop } from "./drops/judge.js";
import { dropPhrase, exclusionPhrase, feedPhrase } from "./drops/wording.js";
import type { Tool, ToolDeps } from "./types.js";
import { requireWallet, resolveWallet } from "./wallet.js";
import { plural, shortAddress, someOf } from "./wording.js";

type Drop = ToolOutput<"dropRadar">["drops"][number];
type WalletEligibility = Drop["walletEligibility"];

const notAsked: WalletEligibility = { wallet: null, checked: false, eligible: null, stages: [], error: null };

function wireStage(stage: DropStageInfo): Drop["stages"][number] {
  return {
    name: stage.name,
    kind: stage.kind,
    startsAt: stage.startsAt?.toISOString() ?? null,
    endsAt: stage.endsAt?.toISOString() ?? null,
    price: stage.price,
    maxPerWallet: stage.maxPerWallet,
  };
}

function wireEligibility(wallet: string, check: WalletCheck): WalletEligibility {
  if (!check.checked) return { wallet, checked: false, eligible: null, stages: [], error: check.error };
  return {
    wallet,
    checked: true,
    eligible: check.stages.some((s) => s.eligible),
    stages: check.stages.map((s) => ({ stage: s.stage.name, eligible: s.eligible, reason: s.reason })),
    error: null,
  };
}

function wireDrop(drop: ActiveDrop, walletEligibility: WalletEligibility): Drop {
  return {
    slug: drop.slug,
    name: drop.name,
    chain: drop.chain,
    imageUrl: drop.imageUrl,
    openseaUrl: drop.openseaUrl,
    contractAddress: drop.contractAddress,
    totalSupply: drop.totalSupply,
    maxSupply: drop.maxSupply,
    remaining: drop.remaining,
    stages: drop.stages.map(wireStage),
    walletEligibility,
  };
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                    Brief                                                     */
/* ----------------------------------------------------------------------------------------------------------- */

interface Checked {
  drop: ActiveDrop;
  check: WalletCheck | undefined;
}

function countSentence(set: DropSet, params: ToolParams<"dropRadar">): string {
  const { drops } = set;
  const feeds = feedPhrase(set.feeds);
  const excluded = exclusionPhrase(set.excluded);
  const where = params.chain ? ` on ${chainName(params.chain)}` : "";
  if (drops.length === 0) {
    return `No drop is verifiably live or upcoming${where} in ${feeds} right now${excluded ? `; ${excluded}` : ""}.`;
  }
  const live = drops.filter((d) => d.status === "live").length;
  const chains = new Set(drops.map((d) => d.chain)).size;
  const across = params.chain ? where : ` across ${plural(chains, "chain")}`;
  const beyond =
    set.available > drops.length ? ` (${set.available - drops.length} more beyond the limit of ${params.limit})` : "";
  return (
    `${plural(drops.length, "drop")} verifiably live or upcoming${across} in ${feeds}${beyond}: ` +
    `${live} live, ${drops.length - live} upcoming${excluded ? `; ${excluded}` : ""}.`
  );
}

function closingSentence(drops: ActiveDrop[], now: Date): string | undefined {
  const live = drops.filter((d) => d.status === "live").slice(0, 2);
  if (live.length === 0) return undefined;
  return `Closing soonest: ${oneThenOther(live.map((d) => dropPhrase(d, now)))}.`;
}

function openingSentence(drops: ActiveDrop[], now: Date): string | undefined {
  const upcoming = drops.filter((d) => d.status === "upcoming").slice(0, 2);
  if (upcoming.length === 0) return undefined;
  return `Next to open: ${oneThenOther(upcoming.map((d) => dropPhrase(d, now)))}.`;
}

function oneThenOther(items: string[]): string {
  return items.length === 2 ? `${items[0]}, then ${items[1]}` : items.join("");
}

function eligibilitySentence(wallet: string, checked: Checked[]): string | undefined {
  const who = `Wallet ${shortAddress(wallet)}`;
  const done = checked.filter((c) => c.check?.checked === true);
  const failed = checked.filter((c) => c.check?.checked === false);
  if (done.length === 0) {
    const error = failed[0]?.check?.checked === false ? failed[0].check.error : "no drop to check";
    return `${who}'s eligibility was not checked: ${error}.`;
  }
  const stagesOf = (c: Checked) => (c.check?.checked ? c.check.stages : []);
  const canMint = done.filter((c) => stagesOf(c).some((s) => s.eligible));
  const listed = done.filter((c) => stagesOf(c).some((s) => s.eligible && isRestricted(s.stage)));
  const unchecked = failed.length > 0 ? `; ${failed.length} could not be checked` : "";
  const of =
    canMint.length === done.length && done.length > 1
      ? `all ${plural(done.length, "drop")} checked`
      : `${canMint.length} of the ${plural(done.length, "drop")} checked`;
  if (canMint.length === 0)
    return `${who} is eligible for none of the ${plural(done.length, "drop")} checked${unchecked}.`;
  if (listed.length === 0) {
    return `${who} is eligible for ${of}, all through public stages: it is on none of their allowlists or token gates${unchecked}.`;
  }
  return (
    `${who} is eligible for ${of}, ${listed.length} of them through an allowlist or token gate ` +
    `(${someOf(listed.map((c) => c.drop.name))})${unchecked}.`
  );
}

function watchSentence(set: DropSet): string | undefined {
  const why: Record<string, string> = {
    not_found: "has no drop at the marketplace",
    other_chain: "is on another chain than the filter",
    ended: "has ended",
    undated: "has no dates",
    stale: "is stale (open-ended, started long ago)",
    sold_out: "is sold out",
  };
  const parts = set.watch.flatMap((w) => (w.found ? [] : [`${w.name ?? w.slug} ${why[w.reason] ?? "is not active"}`]));
  if (parts.length === 0) return undefined;
  return `Watched: ${someOf(parts, 3)}.`;
}

function perChainSentence(drops: ActiveDrop[]): string | undefined {
  const only = drops.filter((d) => d.perChainOnly).map((d) => d.name);
  if (only.length === 0) return undefined;
  const lead = only.length === 1 ? "One of them" : `${only.length} of them`;
  return `${lead} surfaced only in per-chain scans, missing from the unfiltered feeds: ${someOf(only, 2)}.`;
}

function brief(
  set: DropSet,
  params: ToolParams<"dropRadar">,
  now: Date,
  wallet: string | undefined,
  checked: Checked[],
): string {
  const sentences = [
    countSentence(set, params),
    closingSentence(set.drops, now),
    openingSentence(set.drops, now),
    wallet && params.checkWalletEligibility ? eligibilitySentence(wallet, checked) : undefined,
    watchSentence(set),
    perChainSentence(set.drops),
  ].filter((s) => s !== undefined);
  return sentences.slice(0, 5).join(" ");
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                     Tool                                                     */
/* ----------------------------------------------------------------------------------------------------------- */

/** The wallet's eligibility for each drop, or the reason none could be read. */
async function checkAll(
  drops: MarketplaceDrops,
  set: ActiveDrop[],
  wallet: string,
  token: string | undefined,
  now: Date,
): Promise<Checked[]> {
  if (!token) {
    const error = `${wallet} has not authorized this service to read its mint eligibility at the marketplace (scope read:eligibility)`;
    return set.map((drop) => ({ drop, check: { checked: false, error } }));
  }
  return Promise.all(set.map(async (drop) => ({ drop, check: await checkWallet(drops, drop, token, now) })));
}

/**
 * POST /drop-radar: the verifiably live or upcoming drops of the chosen feeds (see drops/judge.ts for the rules),
 * with each drop's mint stages and, when asked, the wallet's eligibility per stage.
 */
export function createDropRadarTool(deps: ToolDeps): Tool<"dropRadar"> {
  const drops = createMarketplaceDrops(deps.marketplace);
  return async (params, context) => {
    const now = context.now();
    const wallet = params.checkWalletEligibility
      ? requireWallet(params.walletAddress, context.caller, {
          message: "checkWalletEligibility needs a wallet: send walletAddress, or sign in to check your own.",
          detail: "required when checkWalletEligibility is true and the caller is not signed in",
        })
      : resolveWallet(params.walletAddress, context.caller);
    const checking = params.checkWalletEligibility && wallet !== undefined;
    const token = checking ? deps.eligibilityToken(wallet) : undefined;
    const set = await collectDropSet(drops, {
      feed: params.type,
      chain: params.chain,
      scanChains: params.scanChains,
      watchSlugs: params.watchSlugs,
      // Eligibility is per stage: it needs every stage of the drop, which only the detail has.
      enrich: params.enrich || token !== undefined,
      limit: params.limit,
      now,
    });
    // Every drop that qualified was looked at, those past the limit too.
    countWork("itemsExamined", set.available);
    const checked: Checked[] = checking
      ? await checkAll(drops, set.drops, wallet, token, now)
      : set.drops.map((drop) => ({ drop, check: undefined }));
    return {
      type: params.type,
      generatedAt: now.toISOString(),
      count: set.drops.length,
      drops: checked.map(({ drop, check }) =>
        wireDrop(drop, check && wallet ? wireEligibility(wallet, check) : notAsked),
      ),
      brief: brief(set, params, now, wallet, checked),
      ...(context.caller ? { caller: context.caller } : {}),
    };
  };
}

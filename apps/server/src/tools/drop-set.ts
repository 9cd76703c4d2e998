/**
 * The set of verifiably active or upcoming drops that /drop-radar and /allowlist-scan both work from.
 *
 * Where the drops come from:
 * - the discovery feeds: `all` reads featured, upcoming and recently_minted and merges them, deduplicated by slug;
 * - `chain` asks each feed for that chain only (`chains=<chain>`);
 * - without `chain`, `scanChains` also asks each feed for each of {@link KNOWN_DROP_CHAINS} on its own, in
 *   parallel: the unfiltered feed leaves out drops that a query naming their chain returns;
 * - `watchSlugs` are resolved directly by their detail, whether or not a feed lists them (the `chain` filter
 *   still applies to them); they are kept within the limit ahead of the feeds' drops.
 * Paging follows `next` until a query has read `limit` drops that may qualify, at most 5 pages (2 per
 * per-chain query).
 *
 * Which drops qualify ("verifiably active or upcoming"), judged at the scan's time from the stages' dates:
 * - a stage is live when it has started and has not ended; a stage without an end date (no end time, or a
 *   "never" sentinel from the year 2100 on) has not ended;
 * - excluded as **undated**: no stage has a start date (nothing says when, or whether, it mints);
 * - excluded as **ended**: every dated stage has ended;
 * - excluded as **stale**: the only live stages are open-ended (no end date) and started more than
 *   {@link STALE_AFTER_DAYS} days before the scan, and no stage is still to come: an open edition nobody
 *   closed is not a drop to act on;
 * - excluded as **sold out**: the detail shows total supply at or above max supply;
 * - from list data (no `enrich`), a drop listed with neither a live nor a next stage is excluded too (the list
 *   does not say whether it ended, sold out or was never dated);
 * - otherwise the drop is **live** (a stage mints now) or **upcoming** (a stage opens later).
 * `remaining` = maxSupply - totalSupply when both are known (detail data), otherwise null. Sorted: live drops
 * first, the one whose live stage closes soonest first (no end date last), then upcoming drops, opening
 * soonest first.
 */
import { chainSchema, slugSchema } from "@agent-tools/schema";
import { HttpError } from "../http/errors.js";
import {
  type DropStageInfo,
  type EligibilityRefusal,
  MARKETPLACE_DROP_FEEDS,
  type MarketplaceDrop,
  type MarketplaceDropDetail,
  type MarketplaceDropFeed,
  type MarketplaceDrops,
} from "../upstream/marketplace/drops.js";
import { UpstreamStatusError } from "../upstream/upstream-client.js";

/**
 * The chains `scanChains` queries one by one: the EVM chains the marketplace runs drops on. A chain the
 * marketplace stops knowing (it answers 400) is skipped, not fatal.
 */
export const KNOWN_DROP_CHAINS = [
  "ethereum",
  "base",
  "arbitrum",
  "optimism",
  "polygon",
  "zora",
  "blast",
  "ape_chain",
  "abstract",
  "shape",
  "unichain",
  "soneium",
  "ink",
  "bera_chain",
  "ronin",
  "avalanche",
] as const;

/** An open-ended stage that started more than this many days ago makes its drop stale (unless a stage is to come). */
export const STALE_AFTER_DAYS = 30;
const STALE_AFTER_MS = STALE_AFTER_DAYS * 24 * 60 * 60 * 1000;

/** Bounds of the feed paging: pages per query, for the unfiltered (or `chain`) feed and for per-chain scans. */
const MAX_PAGES = 5;
const MAX_PAGES_PER_CHAIN = 2;

export type ExclusionReason = "ended" | "undated" | "stale" | "sold_out" | "no_open_stage" | "not_found";

export type DropStatus = "live" | "upcoming";

/** A drop that is verifiably live or upcoming. */
export interface ActiveDrop {
  slug: string;
  name: string;
  chain: string;
  /** EIP-55. */
  contractAddress: string;
  imageUrl: string;
  openseaUrl: string;
  totalSupply: number | null;
  maxSupply: number | null;
  remaining: number | null;
  /** Detail data: every stage, in start order; list data: the live or next stage the list reports. */
  stages: DropStageInfo[];
  status: DropStatus;
  /** Live: the stage minting now; upcoming: the next stage to open. */
  stage: DropStageInfo;
  /** Built from the drop's detail (stages, supply) rather than list data. */
  detailed: boolean;
  watched: boolean;
  /** Found only by a per-chain query, never in an unfiltered feed. */
  perChainOnly: boolean;
}

export type WatchOutcome =
  | { slug: string; found: true; drop: ActiveDrop }
  | { slug: string; found: false; name?: string; chain?: string; reason: ExclusionReason | "other_chain" };

export interface DropSet {
  /** Sorted, at most `limit`. */
  drops: ActiveDrop[];
  /** Qualifying drops known before the limit was applied (with `enrich`, drops not examined count as listed). */
  available: number;
  /** Distinct drops left out, by reason. */
  excluded: Record<ExclusionReason, number>;
  /** Active drops the caller's `include` turned down. */
  notIncluded: number;
  watch: WatchOutcome[];
  feeds: MarketplaceDropFeed[];
}

export interface DropSetOptions {
  feed: "all" | MarketplaceDropFeed;
  chain?: string | undefined;
  scanChains: boolean;
  watchSlugs: readonly string[];
  /** Fetch each drop's detail (stages, supply) instead of using list data. */
  enrich: boolean;
  limit: number;
  now: Date;
  /** Which active drops qualify (judged on detail data when enriching); default all. */
  include?: (drop: ActiveDrop) => boolean;
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                   Judging                                                    */
/* ----------------------------------------------------------------------------------------------------------- */

type Verdict = { status: DropStatus; stage: DropStageInfo } | { excluded: ExclusionReason };

const time = (date: Date | null, missing: number) => date?.getTime() ?? missing;

/** Whether a drop with these stages (and supply) is live, upcoming or excluded at `now` (the rules above). */
export function judgeStages(
  stages: readonly DropStageInfo[],
  now: number,
  supply: { total: number | null; max: number | null } = { total: null, max: null },
): Verdict {
  if (supply.total !== null && supply.max !== null && supply.total >= supply.max) return { excluded: "sold_out" };
  const dated = stages.filter((s) => s.startsAt !== null);
  if (dated.length === 0) return { excluded: "undated" };
  const live = dated.filter((s) => time(s.startsAt, 0) <= now && time(s.endsAt, Number.POSITIVE_INFINITY) > now);
  const fresh = live.filter((s) => s.endsAt !== null || now - time(s.startsAt, 0) <= STALE_AFTER_MS);
  if (fresh.length > 0) {
    const closing = [...fresh].sort(
      (a, b) => time(a.endsAt, Number.POSITIVE_INFINITY) - time(b.endsAt, Number.POSITIVE_INFINITY),
    )[0]!;
    return { status: "live", stage: closing };
  }
  const next = dated.filter((s) => time(s.startsAt, 0) > now).sort((a, b) => time(a.startsAt, 0) - time(b.startsAt, 0));
  if (next[0]) return { status: "upcoming", stage: next[0] };
  return { excluded: live.length > 0 ? "stale" : "ended" };
}

function judgeListed(drop: MarketplaceDrop, now: number): Verdict {
  const stages = [drop.activeStage, drop.nextStage].filter((s) => s !== null);
  if (stages.length === 0) return { excluded: "no_open_stage" };
  return judgeStages(stages, now);
}

const isActive = (verdict: Verdict): verdict is { status: DropStatus; stage: DropStageInfo } => "status" in verdict;

/** A drop this service can put on the wire (a slug and chain it can name, an EVM contract). */
function representable(drop: MarketplaceDrop): boolean {
  return (
    drop.contractAddress !== null &&
    slugSchema.safeParse(drop.slug).success &&
    chainSchema.safeParse(drop.chain).success
  );
}

function activeDrop(
  drop: MarketplaceDrop | MarketplaceDropDetail,
  verdict: { status: DropStatus; stage: DropStageInfo },
  flags: { watched: boolean; perChainOnly: boolean },
): ActiveDrop {
  const detailed = "stages" in drop;
  const totalSupply = detailed ? drop.totalSupply : null;
  const maxSupply = detailed ? drop.maxSupply : null;
  return {
    slug: drop.slug,
    name: drop.name,
    chain: drop.chain,
    contractAddress: drop.contractAddress!,
    imageUrl: drop.imageUrl ?? "",
    openseaUrl: drop.openseaUrl,
    totalSupply,
    maxSupply,
    remaining: totalSupply !== null && maxSupply !== null ? Math.max(0, maxSupply - totalSupply) : null,
    stages: detailed ? drop.stages : [drop.activeStage, drop.nextStage].filter((s) => s !== null),
    status: verdict.status,
    stage: verdict.stage,
    detailed,
    watched: flags.watched,
    perChainOnly: flags.perChainOnly,
  };
}

function judgeDetail(detail: MarketplaceDropDetail, now: number): Verdict {
  return judgeStages(detail.stages, now, { total: detail.totalSupply, max: detail.maxSupply });
}

/** Live first, closing soonest (no end date last), then upcoming, opening soonest; then by name. */
export function dropOrder(a: ActiveDrop, b: ActiveDrop): number {
  if (a.status !== b.status) return a.status === "live" ? -1 : 1;
  const key = (d: ActiveDrop) =>
    d.status === "live" ? time(d.stage.endsAt, Number.POSITIVE_INFINITY) : time(d.stage.startsAt, 0);
  return key(a) - key(b) || a.name.localeCompare(b.name) || a.slug.localeCompare(b.slug);
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                  Collecting                                                  */
/* ----------------------------------------------------------------------------------------------------------- */

interface Query {
  feed: MarketplaceDropFeed;
  chain?: string;
  perChain: boolean;
}

interface Listed {
  drop: MarketplaceDrop;
  global: boolean;
}

const noExclusions = (): Record<ExclusionReason, number> => ({
  ended: 0,
  undated: 0,
  stale: 0,
  sold_out: 0,
  no_open_stage: 0,
  not_found: 0,
});

async function readQuery(drops: MarketplaceDrops, query: Query, want: number, now: number): Promise<MarketplaceDrop[]> {
  try {
    const { drops: read } = await drops.list({
      feed: query.feed,
      ...(query.chain ? { chain: query.chain } : {}),
      want,
      keep: (drop) => isActive(judgeListed(drop, now)),
      pageSize: Math.min(100, Math.max(20, want)),
      maxPages: query.perChain ? MAX_PAGES_PER_CHAIN : MAX_PAGES,
    });
    return read;
  } catch (error) {
    if (error instanceof UpstreamStatusError && error.upstreamStatus === 400) {
      // A chain of the known list the marketplace no longer takes: skip it.
      if (query.perChain) return [];
      if (query.chain) {
        throw new HttpError("invalid_request", `The marketplace does not know the chain '${query.chain}'.`, [
          { field: "chain", message: `the marketplace does not list drops for chain '${query.chain}'` },
        ]);
      }
    }
    throw error;
  }
}

/** Reads the feeds (and watched slugs) and returns the verifiably active or upcoming drops, sorted and limited. */
export async function collectDropSet(drops: MarketplaceDrops, options: DropSetOptions): Promise<DropSet> {
  const now = options.now.getTime();
  const feeds: MarketplaceDropFeed[] = options.feed === "all" ? [...MARKETPLACE_DROP_FEEDS] : [options.feed];
  const include = options.include ?? (() => true);
  // With a filter on top, the feeds must yield more candidates than the limit for the limit to be met.
  const want = options.include ? 50 : options.limit;

  const queries: Query[] = feeds.flatMap((feed) => {
    if (options.chain) return [{ feed, chain: options.chain, perChain: false }];
    const perChain = options.scanChains
      ? KNOWN_DROP_CHAINS.map((chain) => ({ feed, chain, perChain: true }) as Query)
      : [];
    return [{ feed, perChain: false }, ...perChain];
  });
  const watchSlugs = [...new Set(options.watchSlugs)];
  const [lists, watchedDetails] = await Promise.all([
    Promise.all(queries.map((query) => readQuery(drops, query, want, now))),
    Promise.all(watchSlugs.map((slug) => drops.detail(slug))),
  ]);

  // Merge the feeds, first listing wins; remember whether an unfiltered feed had the drop.
  const listed = new Map<string, Listed>();
  queries.forEach((query, i) => {
    for (const drop of lists[i]!) {
      if (options.chain && drop.chain !== options.chain) continue;
      if (!representable(drop)) continue;
      const known = listed.get(drop.slug);
      if (known) known.global ||= !query.perChain;
      else listed.set(drop.slug, { drop, global: !query.perChain });
    }
  });
  const perChainOnly = (slug: string) => options.scanChains && !options.chain && listed.get(slug)?.global === false;

  const excludedSlugs = new Map<string, ExclusionReason>();
  let notIncluded = 0;

  // Watched slugs, from their detail.
  const watch: WatchOutcome[] = [];
  const selected: ActiveDrop[] = [];
  watchSlugs.forEach((slug, i) => {
    const detail = watchedDetails[i];
    if (!detail || !representable(detail)) {
      watch.push({ slug, found: false, reason: "not_found" });
      return;
    }
    const about = { name: detail.name, chain: detail.chain };
    if (options.chain && detail.chain !== options.chain) {
      watch.push({ slug, found: false, ...about, reason: "other_chain" });
      return;
    }
    const verdict = judgeDetail(detail, now);
    if (!isActive(verdict)) {
      watch.push({ slug, found: false, ...about, reason: verdict.excluded });
      return;
    }
    const drop = activeDrop(detail, verdict, { watched: true, perChainOnly: perChainOnly(slug) });
    watch.push({ slug, found: true, drop });
    if (include(drop)) selected.push(drop);
    else notIncluded++;
  });
  const watched = new Set(watchSlugs);

  // The feeds' drops, judged on list data.
  const candidates: ActiveDrop[] = [];
  for (const { drop } of listed.values()) {
    if (watched.has(drop.slug)) continue;
    const verdict = judgeListed(drop, now);
    if (isActive(verdict)) {
      candidates.push(activeDrop(drop, verdict, { watched: false, perChainOnly: perChainOnly(drop.slug) }));
    } else {
      excludedSlugs.set(drop.slug, verdict.excluded);
    }
  }
  candidates.sort(dropOrder);

  let available: number;
  const limit = Math.max(0, options.limit - selected.length);
  if (!options.enrich) {
    const qualifying = candidates.filter((drop) => include(drop));
    notIncluded += candidates.length - qualifying.length;
    selected.push(...qualifying.slice(0, limit));
    available = selected.length + Math.max(0, qualifying.length - limit);
  } else {
    // Detail for the candidates in sort order, a batch at a time, until the limit is met.
    const picked: ActiveDrop[] = [];
    let next = 0;
    while (picked.length < limit && next < candidates.length) {
      const batch = candidates.slice(next, next + Math.min(50, limit - picked.length));
      next += batch.length;
      const details = await Promise.all(batch.map((drop) => drops.detail(drop.slug)));
      batch.forEach((listedDrop, i) => {
        const detail = details[i];
        if (!detail || !representable(detail)) {
          excludedSlugs.set(listedDrop.slug, "not_found");
          return;
        }
        const verdict = judgeDetail(detail, now);
        if (!isActive(verdict)) {
          excludedSlugs.set(listedDrop.slug, verdict.excluded);
          return;
        }
        const drop = activeDrop(detail, verdict, { watched: false, perChainOnly: listedDrop.perChainOnly });
        if (!include(drop)) notIncluded++;
        else if (picked.length < limit) picked.push(drop);
      });
    }
    selected.push(...picked);
    available = selected.length + (candidates.length - next);
  }

  const excluded = noExclusions();
  for (const reason of excludedSlugs.values()) excluded[reason]++;
  return {
    drops: selected.sort(dropOrder).slice(0, options.limit),
    available,
    excluded,
    notIncluded,
    watch,
    feeds,
  };
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                              Wallet eligibility                                              */
/* ----------------------------------------------------------------------------------------------------------- */

export interface StageCheck {
  stage: DropStageInfo;
  eligible: boolean;
  reason: string | null;
}

export type WalletCheck =
  | { checked: true; stages: StageCheck[] }
  | { checked: false; error: string; refused?: EligibilityRefusal };

/** A stage that has not ended (live, upcoming, or without dates). */
export function stageOpen(stage: DropStageInfo, now: Date): boolean {
  return stage.endsAt === null || stage.endsAt.getTime() > now.getTime();
}

export const isRestricted = (stage: DropStageInfo) => stage.kind !== "public";

function stageReason(stage: DropStageInfo, eligible: boolean, maxMintable: number | null): string | null {
  const cap = eligible && maxMintable !== null && maxMintable > 0 ? ` (up to ${maxMintable} per wallet)` : "";
  switch (stage.kind) {
    case "public":
      return eligible
        ? `public stage, open to every wallet${cap}`
        : `the marketplace reports this wallet cannot mint in this public stage${maxMintable === 0 ? " (its mint limit is used up)" : ""}`;
    case "allowlist":
      return eligible ? `on the allowlist${cap}` : "not on the allowlist";
    case "token_gated":
      return eligible ? `meets the token gate${cap}` : "does not meet the token gate";
    default:
      return eligible ? null : "not eligible";
  }
}

const refusals = {
  unauthorized: "the marketplace refused the wallet's access token (401)",
  forbidden: "the wallet's access token lacks the read:eligibility scope (403)",
  not_found: "the marketplace has no eligibility record for this drop (404)",
} as const;

/**
 * The wallet's eligibility for each stage of `drop` that has not ended, read with the wallet's access token.
 * The marketplace's refusals come back unchecked with the reason; outages throw (the call then fails, uncharged).
 */
export async function checkWallet(
  drops: MarketplaceDrops,
  drop: ActiveDrop,
  bearer: string,
  now: Date,
): Promise<WalletCheck> {
  const answer = await drops.eligibility(drop.slug, bearer);
  if ("refused" in answer) return { checked: false, error: refusals[answer.refused], refused: answer.refused };
  const byUuid = new Map(answer.stages.map((s) => [s.stageUuid, s]));
  const stages: StageCheck[] = [];
  for (const stage of drop.stages) {
    if (!stageOpen(stage, now) || stage.uuid === null) continue;
    const result = byUuid.get(stage.uuid);
    if (!result) continue;
    stages.push({ stage, eligible: result.eligible, reason: stageReason(stage, result.eligible, result.maxMintable) });
  }
  return { checked: true, stages };
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                   Wording                                                    */
/* ----------------------------------------------------------------------------------------------------------- */

const chainNames: Record<string, string> = {
  ethereum: "Ethereum",
  base: "Base",
  arbitrum: "Arbitrum",
  optimism: "Optimism",
  polygon: "Polygon",
  zora: "Zora",
  blast: "Blast",
  ape_chain: "ApeChain",
  abstract: "Abstract",
  shape: "Shape",
  unichain: "Unichain",
  soneium: "Soneium",
  ink: "Ink",
  bera_chain: "Berachain",
  ronin: "Ronin",
  avalanche: "Avalanche",
};

export function chainName(chain: string): string {
  return chainNames[chain] ?? chain;
}

export function listOf(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** "3 drops", "1 drop". */
export function plural(n: number, word: string, pluralWord = `${word}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? word : pluralWord}`;
}

/** Up to `max` names, then "and N more". */
export function someOf(names: readonly string[], max = 3): string {
  if (names.length <= max) return listOf(names);
  return `${names.slice(0, max).join(", ")} and ${names.length - max} more`;
}

export function shortWallet(address: string): string {
  return `${address.slice(0, 6)}…${address.slice(-4)}`;
}

/** "0.08 ETH", "25 USDC", "free"; "an unlisted price" when the currency is unknown. */
export function formatPrice(price: DropStageInfo["price"]): string {
  if (!price) return "an unlisted price";
  if (BigInt(price.amount) === 0n) return "free";
  const whole = BigInt(price.amount) / 10n ** BigInt(price.decimals);
  const fraction = (BigInt(price.amount) % 10n ** BigInt(price.decimals))
    .toString()
    .padStart(price.decimals, "0")
    .replace(/0+$/, "");
  return `${whole}${fraction ? `.${fraction}` : ""} ${price.currency}`;
}

/** "40 minutes", "5 hours", "2 days 3 hours", "12 days". */
export function duration(ms: number): string {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes < 60) return plural(minutes, "minute");
  const hours = Math.round(ms / 3_600_000);
  if (hours < 24) return plural(hours, "hour");
  const days = Math.floor(hours / 24);
  const rest = hours % 24;
  return days >= 7 || rest === 0
    ? plural(Math.round(hours / 24), "day")
    : `${plural(days, "day")} ${plural(rest, "hour")}`;
}

/** "the featured feed", "the featured, upcoming and recently minted feeds". */
export function feedPhrase(feeds: readonly MarketplaceDropFeed[]): string {
  const names = feeds.map((feed) => feed.replace("_", " "));
  return `the ${listOf(names)} ${feeds.length === 1 ? "feed" : "feeds"}`;
}

/** "public stage at 0.08 ETH closes in 2 days" / "allowlist stage at 0.1 ETH opens in 5 hours" / "... has no end date". */
export function stagePhrase(drop: ActiveDrop, now: Date, stage: DropStageInfo = drop.stage): string {
  const what = `${stage.name.toLowerCase().endsWith("stage") ? stage.name : `${stage.name} stage`} at ${formatPrice(stage.price)}`;
  const started = stage.startsAt !== null && stage.startsAt.getTime() <= now.getTime();
  if (!started) {
    return stage.startsAt
      ? `${what} opens in ${duration(stage.startsAt.getTime() - now.getTime())}`
      : `${what}, start not dated`;
  }
  if (stage.endsAt === null) return `${what} is live with no end date`;
  return `${what} closes in ${duration(stage.endsAt.getTime() - now.getTime())}`;
}

/** "12,000 of 5,000 left" when known. */
export function supplyPhrase(drop: ActiveDrop): string | undefined {
  if (drop.remaining === null || drop.maxSupply === null) return undefined;
  return `${drop.remaining.toLocaleString("en-US")} of ${drop.maxSupply.toLocaleString("en-US")} left`;
}

/** "Neon Harbor Passes on Ethereum (Public stage at 0.08 ETH closes in 2 days, 1,900 of 5,000 left)". */
export function dropPhrase(drop: ActiveDrop, now: Date): string {
  const details = [stagePhrase(drop, now), supplyPhrase(drop)].filter((part) => part !== undefined);
  return `${drop.name} on ${chainName(drop.chain)} (${details.join(", ")})`;
}

/** "14 other listed drops were left out: 6 ended, 4 stale, ..." (undefined when none). */
export function exclusionPhrase(excluded: Record<ExclusionReason, number>): string | undefined {
  const labels: [ExclusionReason, string][] = [
    ["ended", "ended"],
    ["undated", "undated"],
    ["stale", "stale"],
    ["sold_out", "sold out"],
    // List data: neither a live nor a next stage; the list does not say which of the three.
    ["no_open_stage", "ended, sold out or undated"],
    ["not_found", "gone from the marketplace"],
  ];
  const parts = labels
    .filter(([reason]) => excluded[reason] > 0)
    .map(([reason, label]) => `${excluded[reason]} ${label}`);
  const total = Object.values(excluded).reduce((a, b) => a + b, 0);
  if (total === 0) return undefined;
  return `${plural(total, "other listed drop")} ${total === 1 ? "was" : "were"} left out (${parts.join(", ")})`;
}

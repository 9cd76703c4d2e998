/**
 * The set of verifiably active or upcoming drops that /drop-radar and /allowlist-scan both work from, read from the
 * marketplace's discovery feeds, per chain, and from watched slugs (which drops qualify: ./judge.ts; where drops come
 * from and how feeds are paged: docs/api.md, "Drop radar").
 */
import { ServiceError } from "../../errors/service-error.js";
import { KNOWN_DROP_CHAINS } from "../../upstream/marketplace/chains.js";
import {
  MARKETPLACE_DROP_FEEDS,
  type MarketplaceDrop,
  type MarketplaceDropFeed,
} from "../../upstream/marketplace/drop-shapes.js";
import type { MarketplaceDrops } from "../../upstream/marketplace/drops.js";
import { UpstreamStatusError } from "../../upstream/upstream-client.js";
import {
  type ActiveDrop,
  activeDrop,
  dropOrder,
  type ExclusionReason,
  isActive,
  judgeDetail,
  judgeListed,
  representable,
} from "./judge.js";

/** Bounds of the feed paging: pages per query, for the unfiltered (or `chain`) feed and for per-chain scans. */
const MAX_PAGES = 5;
const MAX_PAGES_PER_CHAIN = 2;

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
        throw new ServiceError("invalid_request", `The marketplace does not know the chain '${query.chain}'.`, [
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

  // Watched slugs, from their detail, whether or not a feed lists them; the `chain` filter still applies to them.
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

import type { ToolOutput } from "@agent-tools/schema";
import { ServiceError, uncharged } from "../errors/service-error.js";
import { countWork } from "../metering/work-meter.js";
import type { Amount, Currency } from "../upstream/marketplace/amounts.js";
import {
  getBestListings,
  getCollectionOffers,
  getCollectionWithFloor,
  uniqueByToken,
} from "../upstream/marketplace/collections.js";
import { isLive, type MarketListing, type MarketOffer } from "../upstream/marketplace/orders.js";
import { formatPriceWithUsd, toPrice, usdRate } from "./market-prices.js";
import type { Tool, ToolDeps } from "./types.js";
import { plural } from "./wording.js";

type OfferRadarOutput = ToolOutput<"offerRadar">;
type Entry = OfferRadarOutput["collections"][number];

/** Best listings shown per collection (one per token), and how many are read to find them. */
const BEST_LISTINGS_SHOWN = 5;
const BEST_LISTINGS_READ = 20;
/** Collection offers shown per collection (best per item first), and how many are read to find them. */
const COLLECTION_OFFERS_SHOWN = 5;
const COLLECTION_OFFERS_READ = 50;

/* ----------------------------------------------------------------------------------------------------------- */
/*                                              Floor against bid                                               */
/* ----------------------------------------------------------------------------------------------------------- */

/** An amount with the USD price of one unit of its currency (null when unknown). */
interface Valued extends Amount {
  usdRate: number | null;
}

interface Comparison {
  /** (floor − bid) / floor in percent; negative when the bid is above the floor. */
  spreadPct: number;
  atOrAbove: boolean;
}

/**
 * The top bid against the floor. In one currency (or two currencies of the same USD price and decimals, as ETH
 * and WETH) the amounts are compared exactly; otherwise (a floor in POL, a bid in WETH) through their USD values.
 * Null when the two cannot be compared (no USD price for one of two different currencies).
 */
function compare(floor: Valued, bid: Valued): Comparison | null {
  if (floor.amount <= 0n) return null;
  const sameUnit =
    floor.decimals === bid.decimals &&
    (floor.currency === bid.currency || (floor.usdRate !== null && floor.usdRate === bid.usdRate));
  if (sameUnit) {
    // Parts per 10^8 of the floor, exact, then in percent.
    const ppm = ((floor.amount - bid.amount) * 100_000_000n) / floor.amount;
    return { spreadPct: Number(ppm) / 1_000_000, atOrAbove: bid.amount >= floor.amount };
  }
  if (floor.usdRate === null || bid.usdRate === null) return null;
  const floorUsd = (Number(floor.amount) / 10 ** floor.decimals) * floor.usdRate;
  const bidUsd = (Number(bid.amount) / 10 ** bid.decimals) * bid.usdRate;
  if (!(floorUsd > 0)) return null;
  return { spreadPct: ((floorUsd - bidUsd) / floorUsd) * 100, atOrAbove: bidUsd >= floorUsd };
}

function valued(amount: Amount, currencies: ReadonlyMap<string, Currency>): Valued {
  return { ...amount, usdRate: usdRate(amount, currencies) };
}

/** Higher per-item value first: exactly in one currency, through USD across currencies (unknown USD last). */
function byUnitValueDesc(currencies: ReadonlyMap<string, Currency>) {
  return (a: MarketOffer, b: MarketOffer): number => {
    const x = valued(a.unitPrice, currencies);
    const y = valued(b.unitPrice, currencies);
    const c = compare(x, y);
    if (c) return c.spreadPct === 0 ? 0 : c.spreadPct < 0 ? 1 : -1;
    return (y.usdRate === null ? 0 : 1) - (x.usdRate === null ? 0 : 1);
  };
}

/**
 * The floor: the marketplace's stated floor, or the cheapest listing read when that is cheaper in the same
 * currency (stats lag behind listings) or when the stats state no floor.
 */
function floorOf(stated: Amount | null, listings: readonly MarketListing[]): Amount | null {
  const cheapest = listings[0]?.unitPrice;
  if (!stated) return cheapest ?? null;
  if (cheapest && cheapest.currency === stated.currency && cheapest.decimals === stated.decimals) {
    return cheapest.amount < stated.amount ? cheapest : stated;
  }
  return stated;
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                 One collection                                               */
/* ----------------------------------------------------------------------------------------------------------- */

interface Scanned {
  entry: Entry;
  /** For ranking: null when the slug failed or floor and bid cannot be compared. */
  comparison: Comparison | null;
  name: string;
}

type Outcome = { ok: true; scanned: Scanned } | { ok: false; slug: string; error: ServiceError | NotFound };

class NotFound {
  readonly code = "collection_not_found";
  constructor(readonly slug: string) {}
  get message(): string {
    return `The marketplace has no collection with the slug '${this.slug}'.`;
  }
}

/** What an entry says about an upstream failure on its slug (the call itself is still answered and charged). */
function entryError(error: ServiceError | NotFound): { code: string; message: string } {
  if (error instanceof NotFound) return { code: error.code, message: error.message };
  const what =
    error.code === "upstream_timeout"
      ? "did not answer in time"
      : error.code === "upstream_unavailable"
        ? "was unavailable (rate limited or failing)"
        : "gave a bad answer";
  return { code: error.code, message: `The marketplace ${what} for this collection; scan it again later.` };
}

/** 404 `collection_not_found` naming each slug asked for (by its place in `slugs`). */
function noCollectionFound(asked: string[], unknown: string[]): ServiceError {
  const list = unknown.map((slug) => `'${slug}'`).join(", ");
  return new ServiceError(
    "collection_not_found",
    uncharged(
      `The marketplace has no collection with the slug${unknown.length === 1 ? "" : "s"} ${list}.`,
      "check the slugs on the marketplace",
    ),
    asked.map((slug, index) => ({ field: `slugs.${index}`, message: `no collection '${slug}'` })),
  );
}

function failedEntry(slug: string, error: ServiceError | NotFound): Entry {
  return {
    slug,
    rank: null,
    floor: null,
    bestListings: [],
    collectionOffers: [],
    topBid: null,
    bidAboveFloor: false,
    spreadPct: null,
    error: entryError(error),
  };
}

/** Percent with two decimals, without a negative zero. */
function roundPct(value: number): number {
  const rounded = Math.round(value * 100) / 100;
  return rounded === 0 ? 0 : rounded;
}

async function scanCollection(deps: ToolDeps, slug: string, now: Date): Promise<Outcome> {
  let found: Awaited<ReturnType<typeof getCollectionWithFloor>>;
  let listings: MarketListing[] | null;
  let offers: MarketOffer[] | null;
  try {
    [found, listings, offers] = await Promise.all([
      getCollectionWithFloor(deps.marketplace, slug),
      getBestListings(deps.marketplace, slug, BEST_LISTINGS_READ),
      getCollectionOffers(deps.marketplace, slug, COLLECTION_OFFERS_READ),
    ]);
  } catch (error) {
    if (error instanceof ServiceError && error.status >= 502) return { ok: false, slug, error };
    throw error;
  }
  if (!found || !listings || !offers) return { ok: false, slug, error: new NotFound(slug) };

  const { currencies } = found;
  const unique = uniqueByToken(listings.filter((listing) => isLive(listing, now)));
  const bids = offers.filter((offer) => isLive(offer, now)).sort(byUnitValueDesc(currencies));
  const floor = floorOf(found.floor, unique);
  const top = bids[0];
  const comparison = floor && top ? compare(valued(floor, currencies), valued(top.unitPrice, currencies)) : null;

  return {
    ok: true,
    scanned: {
      name: found.info.name,
      comparison,
      entry: {
        slug,
        rank: null,
        floor: floor ? toPrice(floor, currencies) : null,
        bestListings: unique.slice(0, BEST_LISTINGS_SHOWN).map((listing) => ({
          identifier: listing.identifier,
          price: toPrice(listing.unitPrice, currencies),
          maker: listing.maker,
          expiresAt: listing.expiresAt,
        })),
        collectionOffers: bids.slice(0, COLLECTION_OFFERS_SHOWN).map((offer) => ({
          price: toPrice(offer.unitPrice, currencies),
          quantity: offer.quantity,
          maker: offer.maker,
          expiresAt: offer.expiresAt,
        })),
        topBid: top ? toPrice(top.unitPrice, currencies) : null,
        bidAboveFloor: comparison?.atOrAbove ?? false,
        spreadPct: comparison ? roundPct(comparison.spreadPct) : null,
        error: null,
      },
    },
  };
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                   Ranking                                                    */
/* ----------------------------------------------------------------------------------------------------------- */

/**
 * Opportunity order: collections with a collection bid at or above the floor first, then by smallest spread
 * (the biggest premium of bid over floor first; a bid under the floor ranks by how close it comes); collections
 * whose floor and bid cannot be compared (nothing listed, no collection offer) after, in the order asked.
 */
function rank(scanned: Scanned[]): Scanned[] {
  const ordered = scanned
    .map((s, index) => ({ s, index }))
    .sort((a, b) => {
      const x = a.s.comparison;
      const y = b.s.comparison;
      if (x && y) {
        if (x.atOrAbove !== y.atOrAbove) return x.atOrAbove ? -1 : 1;
        if (x.spreadPct !== y.spreadPct) return x.spreadPct - y.spreadPct;
      } else if (x || y) {
        return x ? -1 : 1;
      }
      return a.index - b.index;
    })
    .map(({ s }) => s);
  ordered.forEach((s, i) => {
    s.entry.rank = i + 1;
  });
  return ordered;
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                    Brief                                                     */
/* ----------------------------------------------------------------------------------------------------------- */

function pct(value: number): string {
  return `${Math.abs(roundPct(value))}%`;
}

function bestSentence(best: Scanned | undefined): string {
  const entry = best?.entry;
  const c = best?.comparison;
  if (!best || !entry?.floor || !entry.topBid || !c) {
    return "No collection has both a floor and a collection bid to compare.";
  }
  const floor = formatPriceWithUsd(entry.floor);
  const bid = formatPriceWithUsd(entry.topBid);
  if (c.atOrAbove) {
    const where = c.spreadPct === 0 ? "at its floor of" : `${pct(c.spreadPct)} above its floor of`;
    return (
      `Best opportunity: ${best.name} (${entry.slug}), a collection bid of ${bid} per item ${where} ${floor}: ` +
      "buy at the floor and sell into the bid (before fees)."
    );
  }
  return (
    `No collection bid reaches its floor; the tightest spread is ${best.name} (${entry.slug}), its top bid of ${bid} ` +
    `per item ${pct(c.spreadPct)} under its floor of ${floor}.`
  );
}

function countSentence(ranked: Scanned[]): string {
  const atOrAbove = ranked.filter((s) => s.comparison?.atOrAbove);
  const above = atOrAbove.filter((s) => (s.comparison?.spreadPct ?? 0) < 0).length;
  const atFloor = atOrAbove.length - above;
  const names = atOrAbove.map((s) => s.entry.slug).join(", ");
  const of = `of ${plural(ranked.length, "collection")} scanned`;
  if (atOrAbove.length === 0) return `Bids at or above floor: 0 ${of}.`;
  const split = atFloor > 0 ? ` (${above} above, ${atFloor} at the floor)` : "";
  return `Bids at or above floor: ${atOrAbove.length} ${of}${split}: ${names}.`;
}

function failuresSentence(failed: Entry[]): string | undefined {
  if (failed.length === 0) return undefined;
  const list = failed.map((entry) => `${entry.slug} (${entry.error?.code})`).join(", ");
  return `${plural(failed.length, "slug")} could not be scanned: ${list}.`;
}

function brief(ranked: Scanned[], failed: Entry[]): string {
  if (ranked.length === 0) return `Nothing to rank. ${failuresSentence(failed)}`;
  return [bestSentence(ranked[0]), countSentence(ranked), failuresSentence(failed)]
    .filter((sentence) => sentence !== undefined)
    .join(" ");
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                     Tool                                                     */
/* ----------------------------------------------------------------------------------------------------------- */

/**
 * POST /offer-radar: for each slug (1 to 10, duplicates once), in parallel, the floor, the best listings (one per
 * token), the collection offers (per-item prices: a multi-quantity offer's total divided by its quantity), the top
 * bid, whether it is at or above the floor and the spread, ranked by opportunity. Only collection-wide offers
 * count as bids: a trait offer above the floor is no bid on the floor item. A slug that fails (unknown, or
 * upstream trouble on it alone) is reported in its entry with rank null; when no slug could be scanned, the call
 * fails and nothing is charged: 502/503/504 for upstream trouble, else 404 `collection_not_found`.
 */
export function createOfferRadarTool(deps: ToolDeps): Tool<"offerRadar"> {
  return async (params, context) => {
    const now = context.now();
    const slugs = [...new Set(params.slugs)];
    countWork("itemsExamined", slugs.length);
    const outcomes = await Promise.all(slugs.map((slug) => scanCollection(deps, slug, now)));

    const scanned = outcomes.flatMap((o) => (o.ok ? [o.scanned] : []));
    const failures = outcomes.flatMap((o) => (o.ok ? [] : [o]));
    const upstreamFailure = failures.find((f) => f.error instanceof ServiceError)?.error;
    if (scanned.length === 0 && upstreamFailure instanceof ServiceError) throw upstreamFailure;
    // No slug named a collection: nothing was found to answer with, so nothing is charged (docs/decisions.md,
    // "Only answers are paid").
    if (scanned.length === 0) throw noCollectionFound(params.slugs, slugs);

    const ranked = rank(scanned);
    const failed = failures.map((f) => failedEntry(f.slug, f.error));
    return {
      count: ranked.length + failed.length,
      collections: [...ranked.map((s) => s.entry), ...failed],
      brief: brief(ranked, failed),
      ...(context.caller ? { caller: context.caller } : {}),
      clearance: context.token.clearance,
    };
  };
}

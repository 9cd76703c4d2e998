import { z } from "zod";
import type { UpstreamClient } from "../upstream-client.js";
import { type Amount, type Currency, decimalToUnits } from "./amounts.js";
import {
  listingsResponseWire,
  type MarketListing,
  type MarketOffer,
  offersResponseWire,
  toMarketListing,
  toMarketOffer,
} from "./orders.js";

/** `PaymentToken`: `usd_price` is a decimal string. */
const paymentTokenWire = z.object({
  symbol: z.string(),
  decimals: z.number().int().min(0).max(36),
  usd_price: z.string().nullish(),
});

/** `CollectionDetailedResponse`, the parts read. */
const collectionWire = z.object({
  collection: z.string(),
  name: z.string(),
  opensea_url: z.string().nullish(),
  contracts: z.array(z.object({ address: z.string(), chain: z.string() })).nullish(),
  pricing_currencies: z
    .object({ listing_currency: paymentTokenWire.nullish(), offer_currency: paymentTokenWire.nullish() })
    .nullish(),
});

/** `CollectionStatsResponse`: each figure carries its own currency symbol (the floor's may differ from volume's). */
const collectionStatsWire = z.object({
  total: z.object({
    floor_price: z.number().nullish(),
    floor_price_symbol: z.string().nullish(),
    num_owners: z.number().nullish(),
  }),
});

export interface CollectionInfo {
  slug: string;
  name: string;
  openseaUrl: string | null;
  /** Listings are priced in this currency (the floor too). */
  listingCurrency: Currency | null;
  /** Offers are made in this currency (usually the wrapped native token). */
  offerCurrency: Currency | null;
}

export interface CollectionStats {
  /**
   * The floor (cheapest listing) as the marketplace states it: a decimal number of whole units of `symbol`;
   * null when nothing is listed (the marketplace says 0 with an empty symbol).
   */
  floor: { value: number; symbol: string } | null;
  owners: number | null;
}

function toCurrency(token: z.infer<typeof paymentTokenWire> | null | undefined): Currency | null {
  if (!token) return null;
  const usd = token.usd_price === null || token.usd_price === undefined ? Number.NaN : Number(token.usd_price);
  return { symbol: token.symbol, decimals: token.decimals, usd: Number.isFinite(usd) && usd > 0 ? usd : null };
}

/** The collection's currencies by symbol (listing and offer currency), to price amounts in USD. */
export function currenciesOf(info: CollectionInfo): Map<string, Currency> {
  const currencies = new Map<string, Currency>();
  for (const currency of [info.listingCurrency, info.offerCurrency]) {
    if (currency) currencies.set(currency.symbol, currency);
  }
  return currencies;
}

const COLLECTION_TTL_MS = 5 * 60_000;

const collectionPath = (slug: string) => `/api/v2/collections/${encodeURIComponent(slug)}`;

/** `GET /api/v2/collections/{slug}`; null for an unknown slug. */
export async function getCollection(client: UpstreamClient, slug: string): Promise<CollectionInfo | null> {
  const wire = await client.get(collectionPath(slug), {
    schema: collectionWire,
    ttlMs: COLLECTION_TTL_MS,
    notFoundAsNull: true,
  });
  if (!wire) return null;
  return {
    slug: wire.collection,
    name: wire.name,
    openseaUrl: wire.opensea_url ?? null,
    listingCurrency: toCurrency(wire.pricing_currencies?.listing_currency),
    offerCurrency: toCurrency(wire.pricing_currencies?.offer_currency),
  };
}

/** `GET /api/v2/collections/{slug}/stats`; null for an unknown slug. */
export async function getCollectionStats(client: UpstreamClient, slug: string): Promise<CollectionStats | null> {
  const wire = await client.get(`${collectionPath(slug)}/stats`, { schema: collectionStatsWire, notFoundAsNull: true });
  if (!wire) return null;
  const { floor_price: value, floor_price_symbol: symbol, num_owners: owners } = wire.total;
  return { floor: value && value > 0 && symbol ? { value, symbol } : null, owners: owners ?? null };
}

/** A collection with its floor in the smallest unit of the floor's currency. */
export interface CollectionWithFloor {
  info: CollectionInfo;
  /** The collection's currencies by symbol (listing and offer currency). */
  currencies: Map<string, Currency>;
  floor: Amount | null;
}

/**
 * The collection and its stats, read in parallel; the stats' floor in the smallest unit of its currency
 * (`floor_price_symbol`; decimals of that currency when it is one of the collection's, else 18). Null for an
 * unknown slug.
 */
export async function getCollectionWithFloor(
  client: UpstreamClient,
  slug: string,
): Promise<CollectionWithFloor | null> {
  const [info, stats] = await Promise.all([getCollection(client, slug), getCollectionStats(client, slug)]);
  if (!info || !stats) return null;
  const currencies = currenciesOf(info);
  let floor: Amount | null = null;
  if (stats.floor) {
    const decimals = currencies.get(stats.floor.symbol)?.decimals ?? 18;
    const amount = decimalToUnits(stats.floor.value, decimals);
    if (amount > 0n) floor = { amount, currency: stats.floor.symbol, decimals };
  }
  return { info, currencies, floor };
}

/**
 * `GET /api/v2/listings/collection/{slug}/best`, cheapest first, at most `limit` (1 to 200) listings of one page.
 * The marketplace does not deduplicate them by token; this does not either (see {@link uniqueByToken}). Null
 * for an unknown slug.
 */
export async function getBestListings(
  client: UpstreamClient,
  slug: string,
  limit: number,
): Promise<MarketListing[] | null> {
  const wire = await client.get(`/api/v2/listings/collection/${encodeURIComponent(slug)}/best`, {
    query: { limit },
    schema: listingsResponseWire,
    notFoundAsNull: true,
  });
  if (!wire) return null;
  return wire.listings.map(toMarketListing).filter((listing) => listing !== null);
}

/** Listings keeping each token's first (cheapest, in the marketplace's order) only. */
export function uniqueByToken(listings: readonly MarketListing[]): MarketListing[] {
  const seen = new Set<string>();
  return listings.filter((listing) => {
    if (listing.identifier === null) return true;
    const key = `${listing.contract ?? ""}:${listing.identifier}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * `GET /api/v2/offers/collection/{slug}`: the collection's offers, at most `limit` (1 to 200) of one page. Only
 * offers on any item of the collection are kept: trait offers, subset offers and item offers are not collection
 * offers, should the marketplace ever include them. Null for an unknown slug.
 */
export async function getCollectionOffers(
  client: UpstreamClient,
  slug: string,
  limit: number,
): Promise<MarketOffer[] | null> {
  const wire = await client.get(`/api/v2/offers/collection/${encodeURIComponent(slug)}`, {
    query: { limit },
    schema: offersResponseWire,
    notFoundAsNull: true,
  });
  if (!wire) return null;
  return wire.offers
    .map(toMarketOffer)
    .filter((offer): offer is MarketOffer => offer !== null && offer.kind === "collection");
}

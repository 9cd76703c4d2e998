/**
 * The marketplace's collection routes (OpenSea API v2): a collection, its stats (floor), its best listings and
 * its collection offers. The zod schemas below are the upstream's shapes as opensea-api.json defines them,
 * reduced to what the tools read; optional fields accept both a missing key and `null` (the document types them
 * as non-nullable, the real API sometimes sends `null`). Answers are mapped to small internal types whose
 * amounts are integers in the currency's smallest unit.
 *
 * The order shapes (offers and listings) are shared with the account routes (offers received).
 */
import { type Address, getAddress, isAddress } from "viem";
import { z } from "zod";
import type { UpstreamClient } from "../upstream-client.js";

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                   Amounts                                                    */
/* ----------------------------------------------------------------------------------------------------------- */

/** An amount of a currency: an integer in its smallest unit. */
export interface Amount {
  amount: bigint;
  currency: string;
  decimals: number;
}

/** A currency the collection is priced in, with its USD price when the marketplace knows it. */
export interface Currency {
  symbol: string;
  decimals: number;
  usd: number | null;
}

/**
 * A decimal number the marketplace sends as a JSON number (stats' `floor_price`: 0.0069) in the smallest unit
 * of a currency with `decimals` decimals, from the number's shortest decimal form (so 0.0069 is 6.9e15 wei,
 * not the binary float's 6899999999999999.5). Digits past `decimals` are dropped.
 */
export function decimalToUnits(value: number, decimals: number): bigint {
  if (!Number.isFinite(value) || value <= 0) return 0n;
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(String(value));
  if (!match) return 0n;
  const [, whole = "0", fraction = "", exponent = "0"] = match;
  const digits = `${whole}${fraction}`;
  const shift = decimals + Number(exponent) - fraction.length;
  if (shift >= 0) return BigInt(digits) * 10n ** BigInt(shift);
  return -shift >= digits.length ? 0n : BigInt(digits.slice(0, digits.length + shift));
}

/** The amount's value in USD, from its currency's USD price; null when that price is unknown. */
export function usdValue(amount: Amount, usdPerUnit: number | null): number | null {
  if (usdPerUnit === null) return null;
  return (Number(amount.amount) / 10 ** amount.decimals) * usdPerUnit;
}

const ISO_MAX_SECONDS = 253_402_300_799; // 9999-12-31T23:59:59Z

/** Unix seconds (a Seaport `endTime`) as ISO-8601 UTC; null when absent or not a date (open-ended orders). */
function secondsToIso(seconds: string | number | null | undefined): string | null {
  if (seconds === null || seconds === undefined) return null;
  const value = Number(seconds);
  if (!Number.isSafeInteger(value) || value <= 0 || value > ISO_MAX_SECONDS) return null;
  return new Date(value * 1000).toISOString();
}

function addressOrNull(value: string | null | undefined): Address | null {
  return value && isAddress(value, { strict: false }) ? getAddress(value) : null;
}

const UINT = /^(0|[1-9][0-9]*)$/;

/* ----------------------------------------------------------------------------------------------------------- */
/*                                           Orders (offers, listings)                                          */
/* ----------------------------------------------------------------------------------------------------------- */

const numeric = z.union([z.string(), z.number()]);

/** `Price`: `value` is an integer string in the currency's smallest unit. */
const priceWire = z.object({
  currency: z.string(),
  decimals: z.number().int().min(0).max(36),
  value: z.string(),
});

/** A Seaport order item: its kind (1 = ERC-20; 2-5 = ERC-721, ERC-1155 and their criteria forms) and amount. */
const orderItemWire = z.object({ itemType: z.number().int(), startAmount: z.string() });

/** `ProtocolData` (Seaport order), only the parts read: who made it, when it ends, and its items. */
const protocolDataWire = z.object({
  parameters: z
    .object({
      offerer: z.string().nullish(),
      endTime: numeric.nullish(),
      offer: z.array(orderItemWire).nullish(),
      consideration: z.array(orderItemWire).nullish(),
    })
    .nullish(),
});

/**
 * How many NFTs an order was made for: the NFT items' amounts as signed (an offer asks for them in its
 * consideration, a listing gives them in its offer). A partially filled order keeps these; only its
 * `remaining_quantity` drops. Undefined when the order's data does not say.
 */
function orderedItems(items: z.infer<typeof orderItemWire>[] | null | undefined): bigint | undefined {
  const nfts = (items ?? []).filter((item) => item.itemType >= 2 && UINT.test(item.startAmount));
  if (nfts.length === 0) return undefined;
  const total = nfts.reduce((sum, item) => sum + BigInt(item.startAmount), 0n);
  return total > 0n ? total : undefined;
}

const orderAssetWire = z.object({ identifier: z.string().nullish(), contract: z.string() });

/** `Offer` (an offer on an item, a trait or a whole collection). */
export const offerWire = z.object({
  order_hash: z.string().nullish(),
  chain: z.string(),
  protocol_data: protocolDataWire.nullish(),
  asset: orderAssetWire.nullish(),
  remaining_quantity: z.number().int(),
  criteria: z
    .object({
      collection: z.object({ slug: z.string() }).nullish(),
      contract: z.object({ address: z.string() }).nullish(),
      traits: z.array(z.unknown()).nullish(),
      numeric_traits: z.array(z.unknown()).nullish(),
      encoded_token_ids: z.string().nullish(),
    })
    .nullish(),
  price: priceWire,
  status: z.string(),
});
export type OfferWire = z.infer<typeof offerWire>;

/** `OffersResponse`. */
export const offersResponseWire = z.object({ offers: z.array(offerWire), next: z.string().nullish() });

/** `Listing`. */
const listingWire = z.object({
  order_hash: z.string().nullish(),
  chain: z.string(),
  protocol_data: protocolDataWire.nullish(),
  asset: orderAssetWire.nullish(),
  remaining_quantity: z.number().int(),
  price: z.object({ current: priceWire }),
  status: z.string(),
});

/** `ListingsResponse`. */
const listingsResponseWire = z.object({ listings: z.array(listingWire), next: z.string().nullish() });

export type OfferKind = "item" | "collection" | "trait";

/** An active offer. Its price is per item: the marketplace's `price.value` is the total for all the items ordered. */
export interface MarketOffer {
  orderHash: string | null;
  /**
   * `item` (one token), `collection` (any token of the collection) or `trait` (tokens matching criteria: traits,
   * numeric traits or an encoded set of token ids; not any token of the collection).
   */
  kind: OfferKind;
  chain: string;
  /** Collection slug, when the offer names one. */
  collection: string | null;
  contract: Address | null;
  /** Token id of an item offer. */
  identifier: string | null;
  unitPrice: Amount;
  /** Items still wanted (fewer than ordered once the offer is partially filled). */
  quantity: number;
  maker: Address | null;
  expiresAt: string | null;
}

/** An active listing; its price is per item. */
export interface MarketListing {
  orderHash: string | null;
  contract: Address | null;
  identifier: string | null;
  unitPrice: Amount;
  quantity: number;
  maker: Address | null;
  expiresAt: string | null;
}

/**
 * Per-item amount of an order. Its `price.value` is for every item the order was made for (opensea-js builds
 * offers so: the whole payment against an NFT item of amount `quantity`), so it is divided by that number, not by
 * what remains of a partially filled order; `remaining` stands in only when the order's items are not given.
 */
function unitAmount(price: z.infer<typeof priceWire>, ordered: bigint | undefined, remaining: number): Amount | null {
  const quantity = ordered ?? (remaining >= 1 ? BigInt(remaining) : 0n);
  if (!UINT.test(price.value) || quantity < 1n) return null;
  const amount = BigInt(price.value) / quantity;
  return amount > 0n ? { amount, currency: price.currency, decimals: price.decimals } : null;
}

function offerKind(offer: OfferWire): OfferKind {
  if (offer.asset?.identifier) return "item";
  const criteria = offer.criteria;
  const restricted =
    (criteria?.traits?.length ?? 0) > 0 ||
    (criteria?.numeric_traits?.length ?? 0) > 0 ||
    (criteria?.encoded_token_ids !== undefined &&
      criteria?.encoded_token_ids !== null &&
      criteria.encoded_token_ids !== "*");
  return restricted ? "trait" : "collection";
}

/** The offer as an internal type; null for an offer that is not active or not priced in integer units. */
export function toMarketOffer(offer: OfferWire): MarketOffer | null {
  if (offer.status !== "ACTIVE") return null;
  const unitPrice = unitAmount(
    offer.price,
    orderedItems(offer.protocol_data?.parameters?.consideration),
    offer.remaining_quantity,
  );
  if (!unitPrice) return null;
  const kind = offerKind(offer);
  const identifier = offer.asset?.identifier;
  return {
    orderHash: offer.order_hash ?? null,
    kind,
    chain: offer.chain,
    collection: offer.criteria?.collection?.slug ?? null,
    contract: addressOrNull(offer.asset?.contract ?? offer.criteria?.contract?.address),
    identifier: kind === "item" && identifier && UINT.test(identifier) ? identifier : null,
    unitPrice,
    quantity: offer.remaining_quantity,
    maker: addressOrNull(offer.protocol_data?.parameters?.offerer),
    expiresAt: secondsToIso(offer.protocol_data?.parameters?.endTime),
  };
}

function toMarketListing(listing: z.infer<typeof listingWire>): MarketListing | null {
  if (listing.status !== "ACTIVE") return null;
  const unitPrice = unitAmount(
    listing.price.current,
    orderedItems(listing.protocol_data?.parameters?.offer),
    listing.remaining_quantity,
  );
  if (!unitPrice) return null;
  const identifier = listing.asset?.identifier;
  return {
    orderHash: listing.order_hash ?? null,
    contract: addressOrNull(listing.asset?.contract),
    identifier: identifier && UINT.test(identifier) ? identifier : null,
    unitPrice,
    quantity: listing.remaining_quantity,
    maker: addressOrNull(listing.protocol_data?.parameters?.offerer),
    expiresAt: secondsToIso(listing.protocol_data?.parameters?.endTime),
  };
}

/** True while the order has not expired at `now`. */
export function isLive(order: { expiresAt: string | null }, now: Date): boolean {
  return order.expiresAt === null || Date.parse(order.expiresAt) > now.getTime();
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                 Collections                                                  */
/* ----------------------------------------------------------------------------------------------------------- */

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

/**
 * Orders (offers and listings) as the marketplace's routes (OpenSea API v2) send them, shared by the collection
 * routes (best listings, collection offers) and the account routes (offers received). The zod schemas are the
 * upstream's shapes as opensea-api.json defines them, reduced to what the tools read; optional fields accept both a
 * missing key and `null`. Answers are mapped to small internal types whose amounts are integers in the currency's
 * smallest unit.
 */
import type { Address } from "viem";
import { z } from "zod";
import { type Amount, addressOrNull, secondsToIso, UINT } from "./amounts.js";

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
export const listingsResponseWire = z.object({ listings: z.array(listingWire), next: z.string().nullish() });

export type OfferKind = "item" | "collection" | "trait";

/** An active order (a listing, or the part of an offer they share); its price is per item. */
export interface MarketOrder {
  orderHash: string | null;
  contract: Address | null;
  /** Token id of an item order. */
  identifier: string | null;
  unitPrice: Amount;
  /** Items still wanted or for sale (fewer than ordered once the order is partially filled). */
  quantity: number;
  maker: Address | null;
  expiresAt: string | null;
}

/** An active listing; its price is per item. */
export type MarketListing = MarketOrder;

/** An active offer. Its price is per item: the marketplace's `price.value` is the total for all the items ordered. */
export interface MarketOffer extends MarketOrder {
  /**
   * `item` (one token), `collection` (any token of the collection) or `trait` (tokens matching criteria: traits,
   * numeric traits or an encoded set of token ids; not any token of the collection).
   */
  kind: OfferKind;
  chain: string;
  /** Collection slug, when the offer names one. */
  collection: string | null;
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

export function toMarketListing(listing: z.infer<typeof listingWire>): MarketListing | null {
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

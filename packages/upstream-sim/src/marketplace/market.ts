/**
 * Collection, order and wallet fixtures: collections with floors, best listings and offers (collection, trait and
 * item offers), and the devnet's demo wallets holding NFTs across them with offers received.
 */
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet/facts";
import { hash32, Rng, seededAddress, seededBytes32 } from "../core/random.js";
import {
  chainCurrency,
  ETH_USD,
  NATIVE_CURRENCY_ADDRESS,
  OPENSEA_CONDUIT_KEY,
  OPENSEA_FEE_RECIPIENT,
  OPENSEA_ZONE,
  type OpenSeaChain,
  SEAPORT_ADDRESS,
} from "./chains.js";
import { type BuiltDrop, DAY_MS, type DropsFixture, dropKind, toUnits } from "./drops.js";
import type {
  CollectionStatsWire,
  CollectionWire,
  ListingWire,
  NftWire,
  OfferWire,
  PaymentTokenWire,
  ProtocolDataWire,
} from "./wire.js";

export interface CollectionSpec {
  slug: string;
  name: string;
  chain: OpenSeaChain;
  standard: "erc721" | "erc1155";
  supply: number;
  owners: number;
  /** Cheapest listing in the chain's native currency; 0 = nothing listed. */
  floor: number;
  listings: number;
  /** Best collection offer per item, in the wrapped native token; 0 = no offers. */
  bestOffer: number;
  /** Quantity of the best collection offer (its `price.value` is the total for all of them). */
  bestOfferQuantity?: number;
  /** Items of the best offer already sold (a partially filled offer). */
  bestOfferFilled?: number;
  offers: number;
  /** A trait offer above the floor (not a collection offer: `/offers/collection/{slug}` leaves it out). */
  traitOfferAboveFloor?: boolean;
  /** One token is listed twice (OpenSea does not deduplicate best listings by token). */
  duplicateListing?: boolean;
  volume: number;
  sales: number;
  category: string;
  createdDate: string;
  /** Volume's currency when it differs from the listing currency (stats report each figure with its own symbol). */
  volumeSymbol?: string;
  /** Token ids in use (default `supply`): an open edition (ERC-1155) mints copies of one id. */
  idSpace?: number;
  /** From a drop's fixture. */
  drop?: BuiltDrop;
}

// biome-ignore format: one collection per line reads as a table
export const ESTABLISHED_COLLECTIONS: readonly CollectionSpec[] = [
  { slug: "lumen-apes", name: "Lumen Apes", chain: "ethereum", standard: "erc721", supply: 10000, owners: 5612, floor: 2.35, listings: 40, bestOffer: 2.41, offers: 14, duplicateListing: true, volume: 184203.5, sales: 40211, category: "pfps", createdDate: "2021-08-14" },
  { slug: "static-kittens", name: "Static Kittens", chain: "ethereum", standard: "erc721", supply: 8888, owners: 4120, floor: 0.42, listings: 35, bestOffer: 0.42, offers: 12, volume: 30117.2, sales: 51002, category: "pfps", createdDate: "2022-02-01" },
  { slug: "orbital-punks", name: "Orbital Punks", chain: "ethereum", standard: "erc721", supply: 5000, owners: 2210, floor: 12.5, listings: 18, bestOffer: 11.8, offers: 9, traitOfferAboveFloor: true, volume: 402111.9, sales: 12877, category: "pfps", createdDate: "2021-06-23" },
  { slug: "fern-gardeners", name: "Fern Gardeners", chain: "ethereum", standard: "erc721", supply: 20000, owners: 7310, floor: 0.0069, listings: 60, bestOffer: 0.0051, offers: 10, volume: 1840.4, sales: 92110, category: "art", createdDate: "2023-04-12" },
  { slug: "quiet-machines", name: "Quiet Machines", chain: "ethereum", standard: "erc721", supply: 1024, owners: 611, floor: 0, listings: 0, bestOffer: 0.15, offers: 6, volume: 904.1, sales: 2210, category: "art", createdDate: "2022-11-30" },
  { slug: "harbor-cards", name: "Harbor Cards", chain: "ethereum", standard: "erc1155", supply: 120, owners: 3301, floor: 0.089, listings: 22, bestOffer: 0, offers: 0, volume: 2209.7, sales: 18223, category: "gaming", createdDate: "2023-09-05" },
  { slug: "base-bloomers", name: "Base Bloomers", chain: "base", standard: "erc721", supply: 6000, owners: 2805, floor: 0.0125, listings: 30, bestOffer: 0.011, offers: 8, volume: 611.2, sales: 30501, category: "pfps", createdDate: "2024-03-18" },
  { slug: "polygon-pathfinders", name: "Polygon Pathfinders", chain: "polygon", standard: "erc721", supply: 9999, owners: 3902, floor: 145, listings: 25, bestOffer: 0.0102, offers: 7, volume: 512.8, volumeSymbol: "ETH", sales: 20144, category: "gaming", createdDate: "2022-07-07" },
  { slug: "ape-yacht-annex", name: "Ape Yacht Annex", chain: "ape_chain", standard: "erc721", supply: 4000, owners: 1702, floor: 48, listings: 20, bestOffer: 45, offers: 6, volume: 301220, sales: 8811, category: "pfps", createdDate: "2024-10-21" },
  { slug: "arbitrum-odyssey-badges", name: "Arbitrum Odyssey Badges", chain: "arbitrum", standard: "erc721", supply: 50000, owners: 31201, floor: 0.0031, listings: 45, bestOffer: 0.0035, bestOfferQuantity: 10, bestOfferFilled: 4, offers: 9, volume: 3122.6, sales: 190233, category: "memberships", createdDate: "2022-06-21" },
  { slug: "abstract-portraits", name: "Abstract Portraits", chain: "abstract", standard: "erc721", supply: 3333, owners: 1490, floor: 0.21, listings: 16, bestOffer: 0.2, offers: 5, volume: 980.3, sales: 6120, category: "art", createdDate: "2025-02-11" },
  { slug: "zora-sketch-club", name: "Zora Sketch Club", chain: "zora", standard: "erc1155", supply: 64, owners: 2204, floor: 0.0011, listings: 14, bestOffer: 0.0009, offers: 4, volume: 88.4, sales: 14022, category: "art", createdDate: "2024-06-02" },
];

/** Wrapped-token units one native unit is worth (1 where the wrapped token is the native one wrapped). */
function wrappedPerNative(chain: string): number {
  const cur = chainCurrency(chain);
  return cur.wrapped === "WETH" && cur.native !== "ETH" ? cur.usd / ETH_USD : 1;
}

/** A collection spec for a drop's collection: a secondary market once something was minted. */
function dropCollectionSpec(drop: BuiltDrop): CollectionSpec {
  const { spec, detail } = drop;
  const kind = dropKind(spec);
  const minted = Number(detail.total_supply ?? "0");
  const r = new Rng(`dropmarket:${spec.slug}`);
  const mintPriceNative = spec.erc20 ? spec.price / ETH_USD : spec.price; // a USDC price, in ETH on Base
  const base = Math.max(mintPriceNative, spec.chain === "ethereum" ? 0.002 : 0.0002);
  const factor = kind === "sold_out" ? 2.4 : kind === "live" ? 1.1 : kind === "stale" ? 0.5 : 0.7;
  const traded = minted > 0 && kind !== "upcoming" && kind !== "undated";
  const floor = traded ? Number((base * factor).toPrecision(3)) : 0;
  return {
    slug: spec.slug,
    name: spec.name,
    chain: spec.chain,
    standard: spec.standard ?? "erc721",
    supply: minted,
    owners: Math.max(0, Math.round(minted * (0.45 + r.float() * 0.3))),
    floor,
    listings: traded ? r.int(8, 20) : 0,
    // Offers are in the wrapped token, which on Polygon is WETH rather than the listing currency (POL).
    bestOffer: traded ? Number((floor * 0.85 * wrappedPerNative(spec.chain)).toPrecision(3)) : 0,
    offers: traded ? r.int(2, 6) : 0,
    volume: traded ? Number((minted * base * 0.4).toFixed(4)) : 0,
    sales: traded ? Math.round(minted * 0.3) : 0,
    category: "art",
    ...(spec.standard === "erc1155" ? { idSpace: 1 } : {}),
    createdDate: new Date((drop.firstStartMs ?? drop.windows[0]?.startMs ?? Date.UTC(2025, 0, 1)) - 14 * DAY_MS)
      .toISOString()
      .slice(0, 10),
    drop,
  };
}

export interface BuiltCollection {
  spec: CollectionSpec;
  contract: string;
  detail: CollectionWire;
  stats: CollectionStatsWire;
  /** Cheapest first. */
  listings: ListingWire[];
  /** Collection-wide offers, best unit price first. */
  collectionOffers: OfferWire[];
  /** Collection, trait and item offers, best unit price first. */
  allOffers: OfferWire[];
}

const ZERO_HASH = `0x${"0".repeat(64)}`;

function orderParameters(
  offerer: string,
  offer: ProtocolDataWire["parameters"]["offer"],
  consideration: ProtocolDataWire["parameters"]["consideration"],
  startSeconds: number,
  seed: string,
): ProtocolDataWire {
  return {
    parameters: {
      offerer,
      offer,
      consideration,
      startTime: String(startSeconds),
      endTime: String(startSeconds + 30 * 86_400),
      orderType: 2,
      zone: OPENSEA_ZONE,
      zoneHash: ZERO_HASH,
      salt: seededBytes32(`salt:${seed}`),
      conduitKey: OPENSEA_CONDUIT_KEY,
      totalOriginalConsiderationItems: consideration.length,
      counter: 0,
    },
    signature: `${seededBytes32(`sig1:${seed}`)}${seededBytes32(`sig2:${seed}`).slice(2)}1b`,
  };
}

/** OpenSea's marketplace fee on the fixtures' orders: 1%. */
const FEE_BPS = 100n;

function listing(
  c: { slug: string; chain: string; contract: string; standard: string },
  tokenId: string,
  price: bigint,
  createdSeconds: number,
  seed: string,
): ListingWire {
  const seller = seededAddress(`seller:${seed}`);
  const fee = (price * FEE_BPS) / 10_000n;
  const currency = chainCurrency(c.chain);
  return {
    order_hash: seededBytes32(`listing:${seed}`),
    chain: c.chain,
    type: "basic",
    price: { current: { currency: currency.native, decimals: 18, value: price.toString() } },
    protocol_data: orderParameters(
      seller,
      [
        {
          itemType: c.standard === "erc1155" ? 3 : 2,
          token: c.contract,
          identifierOrCriteria: tokenId,
          startAmount: "1",
          endAmount: "1",
        },
      ],
      [
        {
          itemType: 0,
          token: NATIVE_CURRENCY_ADDRESS,
          identifierOrCriteria: "0",
          startAmount: (price - fee).toString(),
          endAmount: (price - fee).toString(),
          recipient: seller,
        },
        {
          itemType: 0,
          token: NATIVE_CURRENCY_ADDRESS,
          identifierOrCriteria: "0",
          startAmount: fee.toString(),
          endAmount: fee.toString(),
          recipient: OPENSEA_FEE_RECIPIENT,
        },
      ],
      createdSeconds,
      seed,
    ),
    protocol_address: SEAPORT_ADDRESS,
    asset: { identifier: tokenId, contract: c.contract },
    remaining_quantity: 1,
    order_created_at: createdSeconds,
    status: "ACTIVE",
  };
}

type OfferTarget =
  | { kind: "collection" }
  | { kind: "trait"; type: string; value: string }
  | { kind: "item"; tokenId: string };

/**
 * An offer; `total` is for all `quantity` items (Seaport's offer amount), as `price.value` reports it. `filled`
 * items of it were sold already: `remaining_quantity` drops, while the price and the order's item amounts stay
 * those of the order as signed (opensea-js builds and reads offers so).
 */
export function offer(
  c: { slug: string; chain: string; contract: string; standard: string },
  target: OfferTarget,
  total: bigint,
  quantity: number,
  createdSeconds: number,
  seed: string,
  offerer: string = seededAddress(`bidder:${seed}`),
  filled = 0,
): OfferWire {
  const currency = chainCurrency(c.chain);
  const fee = (total * FEE_BPS) / 10_000n;
  const criteriaRoot =
    target.kind === "trait"
      ? BigInt(seededBytes32(`traitroot:${c.slug}:${target.type}:${target.value}`)).toString()
      : "0";
  const wireOffer: OfferWire = {
    order_hash: seededBytes32(`offer:${seed}`),
    chain: c.chain,
    price: { currency: currency.wrapped, decimals: 18, value: total.toString() },
    protocol_data: orderParameters(
      offerer,
      [
        {
          itemType: 1,
          token: currency.wrappedAddress,
          identifierOrCriteria: "0",
          startAmount: total.toString(),
          endAmount: total.toString(),
        },
      ],
      [
        {
          itemType: target.kind === "item" ? (c.standard === "erc1155" ? 3 : 2) : c.standard === "erc1155" ? 5 : 4,
          token: c.contract,
          identifierOrCriteria: target.kind === "item" ? target.tokenId : criteriaRoot,
          startAmount: String(quantity),
          endAmount: String(quantity),
          recipient: offerer,
        },
        {
          itemType: 1,
          token: currency.wrappedAddress,
          identifierOrCriteria: "0",
          startAmount: fee.toString(),
          endAmount: fee.toString(),
          recipient: OPENSEA_FEE_RECIPIENT,
        },
      ],
      createdSeconds,
      seed,
    ),
    protocol_address: SEAPORT_ADDRESS,
    remaining_quantity: quantity - filled,
    order_created_at: createdSeconds,
    criteria: { collection: { slug: c.slug }, contract: { address: c.contract } },
    status: "ACTIVE",
  };
  if (target.kind === "trait") wireOffer.criteria!.traits = [{ type: target.type, value: target.value }];
  if (target.kind === "item") wireOffer.asset = { identifier: target.tokenId, contract: c.contract };
  return wireOffer;
}

/**
 * Per-item price of an offer: its `price.value` over the number of items the order was made for (the NFT
 * consideration's `startAmount`), not over what remains of a partially filled one.
 */
export function offerUnitPrice(o: OfferWire): bigint {
  const items = o.protocol_data?.parameters.consideration
    .filter((item) => item.itemType >= 2)
    .reduce((sum, item) => sum + BigInt(item.startAmount), 0n);
  return BigInt(o.price.value) / (items && items > 0n ? items : BigInt(Math.max(1, o.remaining_quantity)));
}

function byUnitPriceDesc(a: OfferWire, b: OfferWire): number {
  const d = offerUnitPrice(b) - offerUnitPrice(a);
  return d > 0n ? 1 : d < 0n ? -1 : 0;
}

function paymentToken(chain: string, wrapped: boolean): PaymentTokenWire {
  const cur = chainCurrency(chain);
  const symbol = wrapped ? cur.wrapped : cur.native;
  const usd = wrapped && cur.wrapped === "WETH" ? ETH_USD : cur.usd;
  return {
    symbol,
    address: wrapped ? cur.wrappedAddress : NATIVE_CURRENCY_ADDRESS,
    chain,
    image: `https://raw.seadn.io/files/${symbol.toLowerCase()}.svg`,
    name: wrapped ? `Wrapped ${cur.wrapped === "WETH" ? "Ether" : cur.nativeName}` : cur.nativeName,
    decimals: 18,
    eth_price: (usd / ETH_USD).toFixed(15),
    usd_price: usd.toFixed(6),
  };
}

function tokenIdsFor(spec: CollectionSpec, count: number, seed: string): string[] {
  const rng = new Rng(`ids:${spec.slug}:${seed}`);
  const upper = Math.max(1, spec.idSpace ?? spec.supply);
  const ids = new Set<number>();
  while (ids.size < Math.min(count, upper)) ids.add(rng.int(spec.standard === "erc1155" ? 1 : 0, upper));
  return [...ids].map(String);
}

function buildCollection(spec: CollectionSpec, anchor: number): BuiltCollection {
  const contract = spec.drop?.detail.contract_address ?? seededAddress(`collection:${spec.slug}`);
  const cur = chainCurrency(spec.chain);
  const c = { slug: spec.slug, chain: spec.chain, contract, standard: spec.standard };
  const rng = new Rng(`market:${spec.slug}`);
  const anchorSeconds = Math.floor(anchor / 1000);

  // Listings: the floor first, then a gently rising ladder; optionally one token listed twice.
  const listingIds = tokenIdsFor(spec, spec.listings, "listings");
  const listings: ListingWire[] = listingIds.map((id, i) => {
    const price = i === 0 ? spec.floor : spec.floor * (1 + 0.012 * i + rng.float() * 0.01);
    return listing(c, id, toUnits(price, 18), anchorSeconds - rng.int(600, 20 * 86_400), `${spec.slug}:l:${i}`);
  });
  if (spec.duplicateListing && listingIds.length > 3) {
    listings.push(
      listing(c, listingIds[0]!, toUnits(spec.floor * 1.25, 18), anchorSeconds - 86_400, `${spec.slug}:dup`),
    );
  }
  listings.sort((a, b) => {
    const d = BigInt(a.price.current.value) - BigInt(b.price.current.value);
    return d > 0n ? 1 : d < 0n ? -1 : 0;
  });

  // Collection offers: the best first, then lower bids.
  const collectionOffers: OfferWire[] = [];
  for (let i = 0; i < spec.offers; i++) {
    const unitPrice = i === 0 ? spec.bestOffer : spec.bestOffer * (1 - 0.02 * i - rng.float() * 0.01);
    const quantity = i === 0 ? (spec.bestOfferQuantity ?? 1) : rng.int(1, 3);
    collectionOffers.push(
      offer(
        c,
        { kind: "collection" },
        toUnits(unitPrice, 18) * BigInt(quantity),
        quantity,
        anchorSeconds - rng.int(60, 3 * 86_400),
        `${spec.slug}:co:${i}`,
        undefined,
        i === 0 ? (spec.bestOfferFilled ?? 0) : 0,
      ),
    );
  }
  collectionOffers.sort(byUnitPriceDesc);
  const extra: OfferWire[] = [];
  if (spec.offers > 0) {
    const traitPrice = spec.traitOfferAboveFloor ? spec.floor * 1.5 : spec.bestOffer * 1.08;
    extra.push(
      offer(
        c,
        { kind: "trait", type: "Background", value: "Gold" },
        toUnits(traitPrice, 18),
        1,
        anchorSeconds - 7200,
        `${spec.slug}:trait`,
      ),
    );
    const itemId = listingIds[1] ?? tokenIdsFor(spec, 1, "item")[0]!;
    extra.push(
      offer(
        c,
        { kind: "item", tokenId: itemId },
        toUnits(spec.bestOffer * 0.97, 18),
        1,
        anchorSeconds - 5400,
        `${spec.slug}:item`,
      ),
    );
  }
  const allOffers = [...collectionOffers, ...extra].sort(byUnitPriceDesc);

  const owner = seededAddress(`owner:${spec.slug}`);
  const detail: CollectionWire = {
    collection: spec.slug,
    name: spec.name,
    description: `${spec.name}: a fixture collection of the upstream simulator.`,
    image_url: `https://i2c.seadn.io/collection/${spec.slug}/image_type_logo/${contract.slice(2, 34)}.png`,
    banner_image_url: `https://i2c.seadn.io/collection/${spec.slug}/image_type_banner/${contract.slice(8, 40)}.png`,
    owner,
    safelist_status: hash32(spec.slug) % 3 === 0 ? "approved" : "verified",
    category: spec.category,
    is_disabled: false,
    is_nsfw: false,
    trait_offers_enabled: true,
    collection_offers_enabled: true,
    opensea_url: `https://opensea.io/collection/${spec.slug}`,
    project_url: `https://${spec.slug}.example`,
    twitter_username: spec.slug.replace(/-/g, "_"),
    contracts: [{ address: contract, chain: spec.chain }],
    editors: [owner],
    fees: [
      { fee: 1, recipient: OPENSEA_FEE_RECIPIENT, required: true },
      { fee: 5, recipient: owner, required: false },
    ],
    total_supply: spec.supply,
    unique_item_count: spec.supply,
    created_date: spec.createdDate,
    pricing_currencies: {
      listing_currency: paymentToken(spec.chain, false),
      offer_currency: paymentToken(spec.chain, true),
    },
  };
  const volumeSymbol = spec.volume > 0 ? (spec.volumeSymbol ?? cur.native) : "";
  const r = new Rng(`stats:${spec.slug}`);
  const stats: CollectionStatsWire = {
    total: {
      volume: spec.volume,
      volume_symbol: volumeSymbol,
      sales: spec.sales,
      num_owners: spec.owners,
      floor_price: spec.floor,
      floor_price_symbol: spec.floor > 0 ? cur.native : "",
    },
    intervals: [
      ["one_day", 0.004],
      ["seven_day", 0.02],
      ["thirty_day", 0.07],
    ].map(([interval, share]) => ({
      interval: interval as string,
      volume: Number((spec.volume * (share as number) * (0.6 + r.float() * 0.8)).toFixed(4)),
      volume_symbol: volumeSymbol,
      sales: Math.round(spec.sales * (share as number) * (0.6 + r.float() * 0.8)),
    })),
  };
  return { spec, contract, detail, stats, listings, collectionOffers, allOffers };
}

/** What the demo wallets hold: devnet account index -> [collection slug, count][] per chain. */
// biome-ignore format: a table
export const WALLET_HOLDINGS: Readonly<Record<number, readonly (readonly [string, number])[]>> = {
  1: [["lumen-apes", 3], ["static-kittens", 24], ["orbital-punks", 1], ["fern-gardeners", 60], ["harbor-cards", 12], ["quiet-machines", 7], ["neon-harbor-passes", 2], ["forever-mint-club", 30], ["base-bloomers", 5], ["glasswing-editions", 3], ["polygon-pathfinders", 2], ["ape-yacht-annex", 1], ["arbitrum-odyssey-badges", 4]],
  2: [["static-kittens", 2], ["fern-gardeners", 5], ["lumen-apes", 1], ["base-bloomers", 8], ["last-call-records", 1], ["abstract-portraits", 2]],
  3: [["orbital-punks", 2], ["harbor-cards", 3], ["zora-sketch-club", 4]],
  4: [["fern-gardeners", 1]],
  5: [["lumen-apes", 1], ["static-kittens", 1], ["paper-lanterns-genesis", 2]],
  6: [["base-bloomers", 1], ["evergreen-open-edition", 9]],
  7: [["quiet-machines", 1]],
  8: [["polygon-pathfinders", 3], ["gallery-of-echoes", 2]],
  9: [],
};

export interface WalletFixture {
  address: string;
  /** NFTs per chain, in the order the API lists them. */
  nfts: Map<string, NftWire[]>;
  /** Offers on the wallet's items and collections, newest first. */
  offersReceived: OfferWire[];
}

function buildWallet(index: number, collections: Map<string, BuiltCollection>, anchor: number): WalletFixture {
  const address = DEVNET_ACCOUNTS[index]!.address.toLowerCase();
  const nfts = new Map<string, NftWire[]>();
  const offersReceived: OfferWire[] = [];
  const anchorSeconds = Math.floor(anchor / 1000);
  for (const [slug, count] of WALLET_HOLDINGS[index] ?? []) {
    const col = collections.get(slug);
    if (!col) throw new Error(`wallet holdings name unknown collection ${slug}`);
    const { spec, contract } = col;
    const cur = chainCurrency(spec.chain);
    const ids = tokenIdsFor(spec, count, `wallet:${index}`).sort((a, b) => Number(a) - Number(b));
    const list = nfts.get(spec.chain) ?? [];
    for (const id of ids) {
      const nft: NftWire = {
        identifier: id,
        collection: slug,
        contract,
        token_standard: spec.standard,
        name: `${spec.name} #${id}`,
        description: `${spec.name}, token ${id}.`,
        image_url: `https://i2c.seadn.io/${spec.chain}/${contract}/${seededAddress(`nftimg:${slug}:${id}`).slice(2, 34)}.png`,
        display_image_url: `https://i2c.seadn.io/${spec.chain}/${contract}/${seededAddress(`nftimg:${slug}:${id}`).slice(2, 34)}.png?w=1000`,
        metadata_url: `ipfs://bafybei${seededAddress(`meta:${slug}`).slice(2, 40)}/${id}`,
        opensea_url: `https://opensea.io/assets/${spec.chain}/${contract}/${id}`,
        updated_at: new Date(anchor - (hash32(`${slug}:${id}`) % 200) * DAY_MS).toISOString().replace("Z", ""),
        is_disabled: false,
        is_nsfw: false,
        traits: [],
      };
      if (spec.floor > 0) nft.estimated_value_usd = Number((spec.floor * cur.usd).toFixed(2));
      list.push(nft);
    }
    nfts.set(spec.chain, list);

    // The collection's best collection offer applies to every holder; item offers on some held tokens.
    const best = col.collectionOffers[0];
    if (best) offersReceived.push(best);
    ids.slice(0, Math.min(2, Math.ceil(ids.length / 10))).forEach((id, i) => {
      if (spec.offers <= 0) return;
      const unitPrice = (spec.floor > 0 ? spec.floor : spec.bestOffer) * (0.88 + 0.07 * i);
      offersReceived.push(
        offer(
          { slug, chain: spec.chain, contract, standard: spec.standard },
          { kind: "item", tokenId: id },
          toUnits(unitPrice, 18),
          1,
          anchorSeconds - (hash32(`${address}:${slug}:${id}`) % 86_400) - 60,
          `received:${index}:${slug}:${id}`,
        ),
      );
    });
  }
  offersReceived.sort((a, b) => (b.order_created_at ?? 0) - (a.order_created_at ?? 0));
  return { address, nfts, offersReceived };
}

export interface MarketFixture {
  collections: Map<string, BuiltCollection>;
  /** Wallets by lower-case address. */
  wallets: Map<string, WalletFixture>;
}

export function buildMarket(drops: DropsFixture): MarketFixture {
  const specs = [...ESTABLISHED_COLLECTIONS, ...drops.all.filter((d) => !d.spec.hidden).map(dropCollectionSpec)];
  const collections = new Map(specs.map((s) => [s.slug, buildCollection(s, drops.anchor)]));
  const wallets = new Map<string, WalletFixture>();
  for (let i = 1; i <= 9; i++) {
    const w = buildWallet(i, collections, drops.anchor);
    wallets.set(w.address, w);
    // Item offers a wallet received are offers on the collection too.
    for (const o of w.offersReceived) {
      const col = o.asset && o.criteria?.collection ? collections.get(o.criteria.collection.slug) : undefined;
      if (col && !col.allOffers.some((x) => x.order_hash === o.order_hash)) col.allOffers.push(o);
    }
  }
  for (const col of collections.values()) col.allOffers.sort(byUnitPriceDesc);
  return { collections, wallets };
}

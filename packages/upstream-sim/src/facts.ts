/**
 * Fixture facts tests (and people trying the tools) can rely on: which drops are live, upcoming, ended, undated or
 * stale; which only a per-chain query finds; which demo wallet is on which allowlist; which collection has a bid
 * at or above its floor; which tokens have thin liquidity or extreme moves. Derived from the fixture definitions,
 * so they cannot drift from what the simulators answer.
 */
import { B20_SCHEDULE, DEVNET_ACCOUNTS } from "@agent-tools/devnet/facts";
import {
  ALT_CHAIN_ID,
  B20_CHAIN_ID,
  B20_MIN_MARKET_AGE_BLOCKS,
  BSC_USDT,
  BSC_WBNB,
  type PairSpec,
  pairSpecs,
} from "./market-data/fixtures.js";
import { chainCurrency, ETH_USD, MARKETPLACE_CHAINS } from "./marketplace/chains.js";
import {
  type BuiltDrop,
  buildDrops,
  DROP_FEEDS,
  type DropFeed,
  type DropKind,
  feedEntries,
  OPEN_ENDED_STAGE_END,
  onStageList,
  STALE_DROP_MIN_AGE_DAYS,
} from "./marketplace/drops.js";
import { buildMarket, ESTABLISHED_COLLECTIONS, offerUnitPrice } from "./marketplace/market.js";

// Stage states relative to the anchor do not depend on the anchor: any clock gives the same facts.
const drops = buildDrops(0);
const market = buildMarket(drops);
const visible = drops.all.filter((d) => !d.spec.hidden);
const slugs = (list: readonly BuiltDrop[]) => list.map((d) => d.spec.slug);
const ofKind = (kind: DropKind) => slugs(visible.filter((d) => d.kind === kind));
const activeOrUpcoming = visible.filter((d) => d.kind === "live" || d.kind === "upcoming");

/** Restricted (presale / token-gated) stages of a drop that are live or still to come. */
function openRestrictedStages(d: BuiltDrop) {
  return d.windows.filter((w) => w.type !== "public_sale" && (w.endMs === null || w.endMs > drops.anchor));
}

function walletEligibility(address: string) {
  const eligible: string[] = [];
  const ineligible: string[] = [];
  for (const d of activeOrUpcoming) {
    const stages = openRestrictedStages(d);
    if (stages.length === 0) continue;
    if (stages.some((s) => onStageList(d.spec, s.type, address))) eligible.push(d.spec.slug);
    else ineligible.push(d.spec.slug);
  }
  return { eligible, ineligible };
}

function feedFacts(feed: DropFeed) {
  const global = feedEntries(drops, feed, []).filter((d) => !d.spec.hidden);
  const kinds = Object.fromEntries(
    (["live", "upcoming", "ended", "undated", "stale", "sold_out"] as const).map((k) => [
      k,
      slugs(global.filter((d) => d.kind === k)),
    ]),
  ) as Record<DropKind, string[]>;
  const perChainOnly = slugs(visible.filter((d) => !d.spec.global && d.spec.feeds.includes(feed)));
  return { global: slugs(global), kinds, perChainOnly };
}

/** The demo wallets: accounts 1-9 of the standard test mnemonic (account 0 operates the devnet). */
export const DEMO_WALLETS: readonly string[] = DEVNET_ACCOUNTS.slice(1).map((a) => a.address);

const usd = (amount: number, symbol: string, chain: string) => {
  const cur = chainCurrency(chain);
  return amount * (symbol === "WETH" || symbol === "ETH" ? ETH_USD : cur.usd);
};

const collectionFacts = (() => {
  const bidAtOrAboveFloor: string[] = [];
  const bidAboveFloor: string[] = [];
  const bidAtFloor: string[] = [];
  const noListings: string[] = [];
  const noOffers: string[] = [];
  for (const col of market.collections.values()) {
    const floor = col.spec.floor;
    const best = col.collectionOffers[0];
    if (col.listings.length === 0) noListings.push(col.spec.slug);
    if (col.allOffers.length === 0) noOffers.push(col.spec.slug);
    if (!best || floor <= 0) continue;
    const cur = chainCurrency(col.spec.chain);
    const bestUsd = usd(Number(offerUnitPrice(best)) / 1e18, best.price.currency, col.spec.chain);
    const floorUsd = usd(floor, cur.native, col.spec.chain);
    if (bestUsd >= floorUsd - 1e-9) bidAtOrAboveFloor.push(col.spec.slug);
    if (bestUsd > floorUsd * 1.0001) bidAboveFloor.push(col.spec.slug);
    else if (bestUsd >= floorUsd * 0.9999) bidAtFloor.push(col.spec.slug);
  }
  return {
    /** Hand-made collections (every drop's slug is a collection too). */
    established: ESTABLISHED_COLLECTIONS.map((c) => c.slug),
    all: [...market.collections.keys()],
    /** Best collection offer (per item, in USD) at or above the floor. */
    bidAtOrAboveFloor,
    bidAboveFloor,
    bidAtFloor,
    /** Nothing listed: stats floor_price 0 with an empty floor_price_symbol, best listings empty. */
    noListings,
    /** No offers of any kind. */
    noOffers,
    /** Its only bid above the floor is a trait offer: `/offers/collection/{slug}` (collection offers) leaves it out. */
    traitOfferAboveFloorOnly: "orbital-punks",
    /**
     * Best collection offer was made for 10 items and 4 were sold: `price.value` is the total for the 10 (the NFT
     * consideration's `startAmount`), `remaining_quantity` is 6; per item = value / 10.
     */
    multiQuantityOffer: "arbitrum-odyssey-badges",
    /** One token listed twice (best listings are not deduplicated by token). */
    duplicateListing: "lumen-apes",
    /** Stats with volume in ETH and the floor in POL (each figure carries its own symbol). */
    mixedCurrencyStats: "polygon-pathfinders",
  };
})();

const walletFacts = (() => {
  const nftCounts: Record<string, Record<string, number>> = {};
  const offersReceived: Record<string, number> = {};
  for (const w of market.wallets.values()) {
    const address = DEVNET_ACCOUNTS.find((a) => a.address.toLowerCase() === w.address)!.address;
    nftCounts[address] = Object.fromEntries([...w.nfts].map(([chain, list]) => [chain, list.length]));
    offersReceived[address] = w.offersReceived.length;
  }
  return {
    /** Account 1: the most NFTs (more than one page of 50 on ethereum) and offers on several chains. */
    whale: DEVNET_ACCOUNTS[1]!.address,
    /** Account 9 holds nothing (any address the fixtures do not know holds nothing too). */
    empty: DEVNET_ACCOUNTS[9]!.address,
    /** NFTs per chain, per demo wallet (EIP-55 address). */
    nftCounts,
    /** Offers received, per demo wallet. */
    offersReceived,
  };
})();

export const MARKETPLACE_FACTS = {
  /** Chains with drops. */
  dropChains: [...new Set(visible.map((d) => d.spec.chain))],
  /** Chains with any fixture data, and their native currency. */
  chains: MARKETPLACE_CHAINS.map((c) => ({ chain: c.chain, native: c.native, wrapped: c.wrapped, usd: c.usd })),
  feeds: DROP_FEEDS,
  /** The feed OpenSea answers without `type`. */
  defaultFeed: "featured" as DropFeed,
  /** Drops by kind (hidden drops excluded: the API never returns them). */
  drops: {
    live: ofKind("live"),
    upcoming: ofKind("upcoming"),
    ended: ofKind("ended"),
    undated: ofKind("undated"),
    /** Started at least {@link STALE_DROP_MIN_AGE_DAYS} days ago and never end: `is_minting` true, yet stale. */
    stale: ofKind("stale"),
    /** Minted out while the stage is still open: `is_minting` false, no active or next stage. */
    soldOut: ofKind("sold_out"),
    /** live + upcoming: what a drop radar should return. */
    activeOrUpcoming: slugs(activeOrUpcoming),
    /** Counted in the feed's paging but never returned (OpenSea's visibility filtering). */
    hidden: slugs(drops.all.filter((d) => d.spec.hidden)),
    /** Only in a feed query naming their chain (`chains=<chain>`), never in the unfiltered feed. */
    perChainOnly: slugs(visible.filter((d) => !d.spec.global)),
    perChainOnlyActiveOrUpcoming: slugs(activeOrUpcoming.filter((d) => !d.spec.global)),
    /** Open edition started 2 days ago, no end date: live (not stale). */
    openEditionLive: "glasswing-editions",
    /** Allowlist stage ended hours ago, public stage starts in a day: not minting, `next_stage` set: upcoming. */
    betweenStages: "saltwater-studies",
    /** Live in a token-gated stage (the public stage comes later). */
    tokenGatedLive: "copper-sunrise",
    /** Priced in USDC (6 decimals, `price_currency_address` = USDC on Base) instead of the native currency. */
    erc20Priced: "usdc-priced-pass",
    /** Public price 0. */
    freeMint: "abstract-doodads",
    /** Open editions (ERC-1155, no `max_supply`). */
    openEditions: slugs(visible.filter((d) => d.detail.max_supply === undefined)),
  },
  /** Each feed: unfiltered members (in order), by kind, and the members only a per-chain query returns. */
  feedsContent: Object.fromEntries(DROP_FEEDS.map((f) => [f, feedFacts(f)])) as Record<
    DropFeed,
    ReturnType<typeof feedFacts>
  >,
  openEndedStageEnd: OPEN_ENDED_STAGE_END,
  staleDropMinAgeDays: STALE_DROP_MIN_AGE_DAYS,
  /**
   * Per demo wallet (EIP-55): live or upcoming drops whose presale / token-gated stage, live or still to come,
   * lists the wallet (`eligible`) or does not (`ineligible`). Public stages are open to every wallet.
   * `GET /api/v2/drops/{slug}/eligibility` answers for the wallet of the bearer token (simWalletAccessToken).
   */
  eligibility: Object.fromEntries(DEMO_WALLETS.map((a) => [a, walletEligibility(a)])) as Record<
    string,
    { eligible: string[]; ineligible: string[] }
  >,
  wallets: walletFacts,
  collections: collectionFacts,
  /** Fixture USD prices. */
  usdPrices: Object.fromEntries(MARKETPLACE_CHAINS.map((c) => [c.native, c.usd])) as Record<string, number>,
};

// --- Market data ---------------------------------------------------------------------------------------------

/** Thresholds the market fixtures keep clear of, so any classifier between them agrees with the facts. */
export const MARKET_THRESHOLDS = {
  /** Thin pairs have at most this much liquidity (USD)... */
  thinLiquidityMaxUsd: 3_500,
  /** ...every other pair at least this much. */
  normalLiquidityMinUsd: 25_000,
  /** Extreme movers moved at least this much in 24h (percent, either way)... */
  extremeMoveMinPct: 90,
  /** ...every other pair at most this much. */
  normalMoveMaxPct: 40,
} as const;

const specs = pairSpecs();
const unique = (list: string[]) => [...new Set(list)];
const baseAddresses = (filter: (p: PairSpec) => boolean, chainId: string) =>
  unique(specs.filter((p) => p.chainId === chainId && filter(p)).map((p) => p.base.address));
const thin = (p: PairSpec) => p.liquidityUsd !== null && p.liquidityUsd <= MARKET_THRESHOLDS.thinLiquidityMaxUsd;
const extreme = (p: PairSpec) => p.ageMs >= 86_400_000 && Math.abs(p.changeH24) >= MARKET_THRESHOLDS.extremeMoveMinPct;
const pairCount = (address: string) => specs.filter((p) => p.base.address === address).length;

export const MARKET_DATA_FACTS = {
  b20ChainId: B20_CHAIN_ID,
  /** The second chain of the altchain radar: BNB Smart Chain, DexScreener chainId "bsc" (EVM, 0x addresses). */
  altChainId: ALT_CHAIN_ID,
  b20: {
    /** B20 tokens (EIP-55) with at least one pair. */
    withMarket: baseAddresses((p) => p.base.kind.startsWith("b20"), B20_CHAIN_ID),
    /** Created less than {@link B20_MIN_MARKET_AGE_BLOCKS} blocks before the devnet tip: no pair (empty answer). */
    withoutMarket: B20_SCHEDULE.filter((t) => t.ageBlocks < B20_MIN_MARKET_AGE_BLOCKS).map((t) => t.address),
    thinLiquidity: baseAddresses(thin, B20_CHAIN_ID),
    extremeMove: baseAddresses(extreme, B20_CHAIN_ID),
    /** No `priceUsd` (nor `fdv`/`marketCap`) and `liquidity` without `usd`. */
    noUsdPrice: baseAddresses((p) => p.noUsdPrice === true, B20_CHAIN_ID),
    noMarketCap: baseAddresses((p) => p.noMarketCap === true || p.noUsdPrice === true, B20_CHAIN_ID),
    /** Pairs younger than 24h: `priceChange` lacks `h24` (and younger windows' keys as the age requires). */
    withoutH24Change: baseAddresses((p) => p.ageMs < 86_400_000, B20_CHAIN_ID),
    /** Two pairs (a deep one and a shallow one). */
    multiPair: baseAddresses((p) => pairCount(p.base.address) > 1 && p.base.kind.startsWith("b20"), B20_CHAIN_ID),
    /** A USD stablecoin trading at 0.96. */
    depegged: baseAddresses((p) => p.base.symbol === "RUSD", B20_CHAIN_ID),
  },
  alt: {
    community: baseAddresses((p) => p.base.kind === "community", ALT_CHAIN_ID),
    tokenizedAssets: baseAddresses((p) => p.base.kind === "tokenized_asset", ALT_CHAIN_ID),
    stablecoins: baseAddresses((p) => p.base.kind === "stablecoin", ALT_CHAIN_ID),
    /** WBNB and the bridged ETH and BTCB (wrapped natives of their home chains). */
    wrappedNatives: baseAddresses((p) => p.base.kind === "wrapped_native", ALT_CHAIN_ID),
    /** A community token named "Tether USD", symbol USDT, at another address: classify stables by address. */
    impostors: baseAddresses(
      (p) => p.base.kind === "community" && p.base.symbol === "USDT" && p.base.address !== BSC_USDT.address,
      ALT_CHAIN_ID,
    ),
    thinLiquidity: baseAddresses(thin, ALT_CHAIN_ID),
    extremeMove: baseAddresses(extreme, ALT_CHAIN_ID),
    noMarketCap: baseAddresses((p) => p.noMarketCap === true, ALT_CHAIN_ID),
    /** Search queries that together return the chain's most traded pairs (see the market-data simulator). */
    mostActiveQueries: [BSC_WBNB.symbol, BSC_USDT.symbol],
    wrappedNative: BSC_WBNB.address,
  },
};

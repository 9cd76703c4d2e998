/**
 * Market-data fixtures in DexScreener's wire format: pairs for the devnet's 40 B20 tokens on Base (chainId
 * "base") and for the second chain, BNB Smart Chain (chainId "bsc"): community tokens, tokenized assets,
 * stablecoins and wrapped natives, some with thin liquidity, extreme 24h moves or missing fields.
 *
 * Times (pair creation, which price-change windows exist) are laid out on the clock floored to the minute.
 */
import { B20_BLOCK_SECONDS, B20_SCHEDULE } from "@agent-tools/devnet/facts";
import { getAddress } from "viem";
import { hash32, Rng, seededAddress, seededBase58 } from "../core/random.js";

export const B20_CHAIN_ID = "base";
export const ALT_CHAIN_ID = "bsc";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export type TokenKind =
  | "b20_asset"
  | "b20_stablecoin"
  | "community"
  | "tokenized_asset"
  | "stablecoin"
  | "wrapped_native"
  | "quote";

export interface TokenSpec {
  chainId: string;
  /** EIP-55. */
  address: string;
  name: string;
  symbol: string;
  kind: TokenKind;
  priceUsd: number;
  /** Whole tokens; fdv = price x supply. */
  supply: number;
  /** Share of supply circulating; marketCap = fdv x circulating. */
  circulating: number;
}

export interface PairSpec {
  chainId: string;
  dexId: string;
  labels?: string[];
  pairAddress: string;
  base: TokenSpec;
  quote: TokenSpec;
  /** null: DexScreener has no USD liquidity for the pair (liquidity carries base/quote only). */
  liquidityUsd: number | null;
  /** DexScreener found no USD route: no `priceUsd`. */
  noUsdPrice?: boolean;
  noMarketCap?: boolean;
  volumeH24: number;
  txnsH24: { buys: number; sells: number };
  changeH24: number;
  ageMs: number;
  boostsActive?: number;
  withInfo?: boolean;
}

export interface DexPairWire {
  chainId: string;
  dexId: string;
  url: string;
  pairAddress: string;
  labels?: string[];
  baseToken: { address: string; name: string; symbol: string };
  quoteToken: { address: string; name: string; symbol: string };
  priceNative: string;
  priceUsd?: string;
  txns: Record<"m5" | "h1" | "h6" | "h24", { buys: number; sells: number }>;
  volume: Record<"h24" | "h6" | "h1" | "m5", number>;
  priceChange: Partial<Record<"m5" | "h1" | "h6" | "h24", number>>;
  liquidity?: { usd?: number; base: number; quote: number };
  fdv?: number;
  marketCap?: number;
  pairCreatedAt: number;
  info?: {
    imageUrl?: string;
    header?: string;
    openGraph?: string;
    websites?: { label: string; url: string }[];
    socials?: { type: string; url: string }[];
  };
  boosts?: { active: number };
}

export interface DexLink {
  type?: string;
  label?: string;
  url: string;
}

export interface BoostWire {
  url: string;
  chainId: string;
  tokenAddress: string;
  amount: number;
  totalAmount: number;
  icon?: string;
  header?: string;
  description?: string;
  links?: DexLink[];
}

export interface TokenProfileWire {
  url: string;
  chainId: string;
  tokenAddress: string;
  icon: string;
  header?: string;
  description?: string;
  links?: DexLink[];
}

const token = (
  chainId: string,
  address: string,
  name: string,
  symbol: string,
  kind: TokenKind,
  priceUsd: number,
  supply: number,
  circulating = 1,
): TokenSpec => ({ chainId, address: getAddress(address), name, symbol, kind, priceUsd, supply, circulating });

const seeded = (seed: string) => getAddress(seededAddress(`dex:${seed}`));

// --- Base: quote tokens and the B20 tokens -------------------------------------------------------------------

export const BASE_WETH = token(
  B20_CHAIN_ID,
  "0x4200000000000000000000000000000000000006",
  "Wrapped Ether",
  "WETH",
  "quote",
  3150.42,
  2_600_000,
);
export const BASE_USDC = token(
  B20_CHAIN_ID,
  "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
  "USD Coin",
  "USDC",
  "quote",
  1,
  4_100_000_000,
);

const CURRENCY_USD: Record<string, number> = {
  USD: 1.0003,
  EUR: 1.0842,
  GBP: 1.271,
  JPY: 0.006672,
  CHF: 1.129,
  SGD: 0.7421,
};

/** B20 tokens younger than this (blocks) have no pool yet: DexScreener returns nothing for them. */
export const B20_MIN_MARKET_AGE_BLOCKS = 300;

interface B20Override {
  liquidityUsd?: number | null;
  volumeH24?: number;
  changeH24?: number;
  priceUsd?: number;
  noUsdPrice?: boolean;
  noMarketCap?: boolean;
  secondPair?: boolean;
}

// Thin liquidity: <= 3,500 USD (every other pair has >= 25,000). Extreme move: |24h| >= 90% (others <= 40%).
const B20_OVERRIDES: Record<string, B20Override> = {
  HARBOR: { liquidityUsd: 2_450_000, volumeH24: 3_900_000, secondPair: true },
  FUEL: { liquidityUsd: 640_000, volumeH24: 1_150_000, secondPair: true },
  OTTER: { priceUsd: 0.00000041 },
  LIGHT: { changeH24: -93.4, liquidityUsd: 61_000, volumeH24: 410_000 },
  WAVE: { changeH24: 1240.5, liquidityUsd: 88_000, volumeH24: 1_920_000 },
  DWOOD: { noMarketCap: true },
  QRY: { noUsdPrice: true, liquidityUsd: null },
  BRINE: { liquidityUsd: 1_850, volumeH24: 94_300 },
  GULL: { liquidityUsd: 3_200, volumeH24: 4_100 },
  KEY: { liquidityUsd: 950, volumeH24: 12_800 },
  RUSD: { priceUsd: 0.9612, changeH24: -3.9 },
};

function b20Pairs(): PairSpec[] {
  const pairs: PairSpec[] = [];
  for (const t of B20_SCHEDULE) {
    if (t.ageBlocks < B20_MIN_MARKET_AGE_BLOCKS) continue;
    const o = B20_OVERRIDES[t.symbol] ?? {};
    const rng = new Rng(`b20:${t.symbol}`);
    const stable = t.variant === "STABLECOIN";
    const tokenAgeMs = t.ageBlocks * B20_BLOCK_SECONDS * 1000;
    const ageMs = tokenAgeMs < DAY ? Math.round(tokenAgeMs * 0.8) : tokenAgeMs - 2 * HOUR;
    let price: number;
    if (o.priceUsd !== undefined) price = o.priceUsd;
    else if (stable) price = CURRENCY_USD[t.currency ?? "USD"]! * (1 + (rng.float() - 0.5) * 0.002);
    else price = Math.exp(Math.log(50_000) + rng.float() * (Math.log(80_000_000) - Math.log(50_000))) / t.supply;
    const spec = token(
      B20_CHAIN_ID,
      t.address,
      t.name,
      t.symbol,
      stable ? "b20_stablecoin" : "b20_asset",
      Number(price.toPrecision(6)),
      t.supply,
    );
    const fdv = spec.priceUsd * t.supply;
    const liquidity =
      o.liquidityUsd !== undefined
        ? o.liquidityUsd
        : stable
          ? 800_000 + rng.float() * 5_200_000
          : Math.max(25_000, Math.min(3_000_000, fdv * (0.02 + rng.float() * 0.1)));
    const volume = o.volumeH24 ?? (liquidity ?? 50_000) * (stable ? 0.2 + rng.float() * 1.3 : 0.1 + rng.float() * 2.9);
    const change = o.changeH24 ?? (stable ? (rng.float() - 0.5) * 0.6 : -35 + rng.float() * 75);
    const trades = Math.max(3, Math.round(volume / (stable ? 9_000 : 450)));
    const buyShare = change >= 0 ? 0.52 + rng.float() * 0.2 : 0.3 + rng.float() * 0.18;
    pairs.push({
      chainId: B20_CHAIN_ID,
      dexId: stable ? "aerodrome" : "uniswap",
      labels: stable ? ["stable"] : ["v3"],
      pairAddress: seeded(`b20pair:${t.symbol}`),
      base: spec,
      quote: stable ? BASE_USDC : BASE_WETH,
      liquidityUsd: liquidity === null ? null : round2(liquidity),
      noUsdPrice: o.noUsdPrice,
      noMarketCap: o.noMarketCap,
      volumeH24: round2(volume),
      txnsH24: { buys: Math.round(trades * buyShare), sells: trades - Math.round(trades * buyShare) },
      changeH24: round2(change),
      ageMs,
      withInfo: hash32(t.symbol) % 3 !== 0,
    });
    if (o.secondPair) {
      pairs.push({
        chainId: B20_CHAIN_ID,
        dexId: "aerodrome",
        labels: ["v2"],
        pairAddress: seeded(`b20pair2:${t.symbol}`),
        base: spec,
        quote: BASE_USDC,
        liquidityUsd: round2((liquidity ?? 0) * 0.18),
        volumeH24: round2(volume * 0.11),
        txnsH24: { buys: Math.round(trades * 0.06), sells: Math.round(trades * 0.05) },
        changeH24: round2(change * 1.02),
        ageMs: Math.round(ageMs * 0.7),
      });
    }
  }
  pairs.push({
    chainId: B20_CHAIN_ID,
    dexId: "uniswap",
    labels: ["v3"],
    pairAddress: seeded("base:weth-usdc"),
    base: BASE_WETH,
    quote: BASE_USDC,
    liquidityUsd: 41_200_000,
    volumeH24: 118_000_000,
    txnsH24: { buys: 61_022, sells: 58_930 },
    changeH24: 1.84,
    ageMs: 700 * DAY,
  });
  return pairs;
}

// --- BNB Smart Chain ------------------------------------------------------------------------------------------

export const BSC_WBNB = token(
  ALT_CHAIN_ID,
  "0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c",
  "Wrapped BNB",
  "WBNB",
  "wrapped_native",
  612.37,
  1_480_000,
);
export const BSC_USDT = token(
  ALT_CHAIN_ID,
  "0x55d398326f99059fF775485246999027B3197955",
  "Tether USD",
  "USDT",
  "stablecoin",
  1.0001,
  6_900_000_000,
);
const BSC_USDC = token(
  ALT_CHAIN_ID,
  "0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d",
  "USD Coin",
  "USDC",
  "stablecoin",
  0.9999,
  1_200_000_000,
);
const BSC_FDUSD = token(
  ALT_CHAIN_ID,
  "0xc5f0f7b66764F6ec8C8Dff7BA683102295E16409",
  "First Digital USD",
  "FDUSD",
  "stablecoin",
  0.9986,
  1_100_000_000,
);
const BSC_ETH = token(
  ALT_CHAIN_ID,
  "0x2170Ed0880ac9A755fd29B2688956BD959F933F8",
  "Ethereum Token",
  "ETH",
  "wrapped_native",
  3150.42,
  540_000,
);
const BSC_BTCB = token(
  ALT_CHAIN_ID,
  "0x7130d2A12B9BCbFAe4f2634d864A1Ee1Ce3Ead9c",
  "BTCB Token",
  "BTCB",
  "wrapped_native",
  97_250.5,
  58_000,
);

interface AltSpec {
  name: string;
  symbol: string;
  kind: TokenKind;
  price: number;
  supply: number;
  circulating?: number;
  liquidity: number;
  volume: number;
  change: number;
  ageDays: number;
  quote?: TokenSpec;
  noMarketCap?: boolean;
  boosts?: number;
  secondPair?: boolean;
  /** Reuse a known address instead of a generated one. */
  address?: string;
}

// biome-ignore format: one token per line reads as a table
const ALT_TOKENS: AltSpec[] = [
  // Community tokens (quoted in WBNB).
  { name: "Pixel Frog", symbol: "PFROG", kind: "community", price: 0.0004821, supply: 1_000_000_000, liquidity: 412_000, volume: 9_850_000, change: 2150.4, ageDays: 1.25, boosts: 500, secondPair: true },
  { name: "Moon Biscuit", symbol: "MBISC", kind: "community", price: 0.01842, supply: 420_000_000, liquidity: 1_310_000, volume: 4_200_000, change: 18.2, ageDays: 64 },
  { name: "Laser Llama", symbol: "LLAMA", kind: "community", price: 0.2291, supply: 100_000_000, liquidity: 2_050_000, volume: 3_110_000, change: -12.6, ageDays: 210 },
  { name: "Bamboo Cat", symbol: "BCAT", kind: "community", price: 0.000091, supply: 10_000_000_000, liquidity: 318_000, volume: 1_720_000, change: 33.9, ageDays: 12 },
  { name: "Shiny Hamster", symbol: "HAMS", kind: "community", price: 0.0000031, supply: 100_000_000_000, liquidity: 2_400, volume: 38_000, change: 27.5, ageDays: 3, boosts: 150 },
  { name: "Turbo Snail", symbol: "TSNAIL", kind: "community", price: 0.0000152, supply: 69_000_000_000, liquidity: 41_000, volume: 690_000, change: -96.1, ageDays: 6, boosts: 90 },
  { name: "Cosmic Duck", symbol: "CDUCK", kind: "community", price: 0.00731, supply: 1_000_000_000, liquidity: 96_000, volume: 3_870_000, change: 12.1, ageDays: 2.5, boosts: 300 },
  { name: "Honey Badger Inu", symbol: "HBINU", kind: "community", price: 0.000000884, supply: 1_000_000_000_000, liquidity: 182_000, volume: 640_000, change: -21.7, ageDays: 95 },
  { name: "Neon Koi", symbol: "NKOI", kind: "community", price: 0.00112, supply: 500_000_000, liquidity: 3_100, volume: 9_400, change: -8.4, ageDays: 40 },
  { name: "Rocket Panda", symbol: "RPANDA", kind: "community", price: 0.0521, supply: 250_000_000, liquidity: 705_000, volume: 1_480_000, change: 6.6, ageDays: 320 },
  { name: "Quantum Toad", symbol: "QTOAD", kind: "community", price: 0.00384, supply: 888_000_000, liquidity: 221_000, volume: 805_000, change: -30.2, ageDays: 18 },
  { name: "Sleepy Sloth", symbol: "SLOTH", kind: "community", price: 0.00921, supply: 300_000_000, liquidity: 57_000, volume: 120, change: 0.4, ageDays: 150 },
  { name: "Dragon Fruit", symbol: "DFRUIT", kind: "community", price: 1.384, supply: 21_000_000, liquidity: 1_720_000, volume: 2_640_000, change: 9.8, ageDays: 480 },
  { name: "Banana Peel", symbol: "PEEL", kind: "community", price: 0.0671, supply: 150_000_000, liquidity: 380_000, volume: 1_090_000, change: -14.3, ageDays: 33 },
  { name: "Crystal Yak", symbol: "CYAK", kind: "community", price: 0.000552, supply: 2_000_000_000, liquidity: 129_000, volume: 414_000, change: 38.7, ageDays: 8 },
  { name: "Glitch Gecko", symbol: "GECKO", kind: "community", price: 0.0191, supply: 1_000_000_000, circulating: 0.42, liquidity: 264_000, volume: 902_000, change: 4.1, ageDays: 27, noMarketCap: true },
  // A copy of a stablecoin's name and symbol at another address, as scam tokens do.
  { name: "Tether USD", symbol: "USDT", kind: "community", price: 0.00042, supply: 10_000_000_000, liquidity: 900, volume: 15_200, change: -97.3, ageDays: 1.5 },
  // Tokenized real-world assets (quoted in USDT).
  { name: "Tokenized Gold Ounce", symbol: "TGOLD", kind: "tokenized_asset", price: 2651.8, supply: 42_000, liquidity: 3_200_000, volume: 1_100_000, change: 0.8, ageDays: 410, quote: BSC_USDT },
  { name: "Tokenized Silver Ounce", symbol: "TSLVR", kind: "tokenized_asset", price: 31.42, supply: 600_000, liquidity: 640_000, volume: 150_000, change: -1.2, ageDays: 380, quote: BSC_USDT },
  { name: "Tokenized Treasury Bill 3M", symbol: "TBILL", kind: "tokenized_asset", price: 1.0021, supply: 250_000_000, liquidity: 9_800_000, volume: 2_200_000, change: 0.01, ageDays: 300, quote: BSC_USDT },
  { name: "Tokenized Equity Index 500", symbol: "XIDX", kind: "tokenized_asset", price: 595.2, supply: 150_000, liquidity: 1_900_000, volume: 480_000, change: 0.6, ageDays: 190, quote: BSC_USDT },
  { name: "Tokenized Real Estate Fund", symbol: "TREIT", kind: "tokenized_asset", price: 10.24, supply: 5_000_000, liquidity: 410_000, volume: 22_000, change: -0.3, ageDays: 240, quote: BSC_USDT },
  { name: "Tokenized Crude Barrel", symbol: "TOIL", kind: "tokenized_asset", price: 71.35, supply: 90_000, liquidity: 3_400, volume: 15_000, change: 4.2, ageDays: 75, quote: BSC_USDT },
];

function altPairs(): PairSpec[] {
  const pairs: PairSpec[] = [];
  for (const s of ALT_TOKENS) {
    const spec = token(
      ALT_CHAIN_ID,
      s.address ?? seeded(`bsc:${s.symbol}:${s.name}`),
      s.name,
      s.symbol,
      s.kind,
      s.price,
      s.supply,
      s.circulating ?? 1,
    );
    const rng = new Rng(`alt:${s.symbol}:${s.name}`);
    const trades = Math.max(2, Math.round(s.volume / (s.kind === "tokenized_asset" ? 2_500 : 320)));
    const buyShare = s.change >= 0 ? 0.53 + rng.float() * 0.15 : 0.33 + rng.float() * 0.15;
    const quote = s.quote ?? BSC_WBNB;
    pairs.push({
      chainId: ALT_CHAIN_ID,
      dexId: "pancakeswap",
      labels: [s.kind === "tokenized_asset" ? "v3" : "v2"],
      pairAddress: seeded(`bscpair:${s.symbol}:${s.name}`),
      base: spec,
      quote,
      liquidityUsd: s.liquidity,
      noMarketCap: s.noMarketCap,
      volumeH24: s.volume,
      txnsH24: { buys: Math.round(trades * buyShare), sells: trades - Math.round(trades * buyShare) },
      changeH24: s.change,
      ageMs: Math.round(s.ageDays * DAY),
      boostsActive: s.boosts,
      withInfo: s.kind !== "tokenized_asset" || hash32(s.symbol) % 2 === 0,
    });
    if (s.secondPair) {
      pairs.push({
        chainId: ALT_CHAIN_ID,
        dexId: "pancakeswap",
        labels: ["v3"],
        pairAddress: seeded(`bscpair2:${s.symbol}`),
        base: spec,
        quote: BSC_USDT,
        liquidityUsd: round2(s.liquidity * 0.09),
        volumeH24: round2(s.volume * 0.07),
        txnsH24: { buys: Math.round(trades * 0.05), sells: Math.round(trades * 0.04) },
        changeH24: round2(s.change * 0.97),
        ageMs: Math.round(s.ageDays * DAY * 0.6),
      });
    }
  }
  const major = (
    base: TokenSpec,
    quote: TokenSpec,
    liquidity: number,
    volume: number,
    change: number,
    label: string,
  ): PairSpec => ({
    chainId: ALT_CHAIN_ID,
    dexId: "pancakeswap",
    labels: [label],
    pairAddress: seeded(`bscmajor:${base.symbol}:${quote.symbol}`),
    base,
    quote,
    liquidityUsd: liquidity,
    volumeH24: volume,
    txnsH24: { buys: Math.round(volume / 2_100), sells: Math.round(volume / 2_250) },
    changeH24: change,
    ageMs: 1_200 * DAY,
    withInfo: true,
  });
  pairs.push(
    major(BSC_WBNB, BSC_USDT, 48_300_000, 95_400_000, 2.31, "v3"),
    major(BSC_USDT, BSC_USDC, 30_100_000, 121_000_000, 0.01, "v3"),
    major(BSC_USDC, BSC_WBNB, 6_900_000, 18_200_000, -0.02, "v3"),
    major(BSC_FDUSD, BSC_USDT, 8_050_000, 33_700_000, -0.11, "v3"),
    major(BSC_ETH, BSC_WBNB, 12_400_000, 26_900_000, 1.44, "v3"),
    major(BSC_BTCB, BSC_WBNB, 21_700_000, 41_300_000, 0.87, "v3"),
  );
  return pairs;
}

// --- Wire ----------------------------------------------------------------------------------------------------

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** DexScreener-style decimal string: five significant digits, never an exponent. */
export function formatPrice(n: number): string {
  if (n === 0) return "0";
  const digits = Math.max(0, 4 - Math.floor(Math.log10(Math.abs(n))));
  const fixed = n.toFixed(Math.min(20, digits));
  return fixed.includes(".") ? fixed.replace(/0+$/, "").replace(/\.$/, "") : fixed;
}

const WINDOWS = [
  ["m5", 5 * MINUTE],
  ["h1", HOUR],
  ["h6", 6 * HOUR],
  ["h24", DAY],
] as const;

function pairWire(p: PairSpec, anchor: number): DexPairWire {
  const rng = new Rng(`wire:${p.pairAddress}`);
  const lifetime = Math.min(p.ageMs, DAY);
  const share = (windowMs: number) => Math.min(windowMs, lifetime) / lifetime;
  const volume = {
    h24: p.volumeH24,
    h6: round2(p.volumeH24 * share(6 * HOUR) * (0.8 + rng.float() * 0.4)),
    h1: round2(p.volumeH24 * share(HOUR) * (0.6 + rng.float() * 0.8)),
    m5: round2(p.volumeH24 * share(5 * MINUTE) * rng.float() * 1.5),
  };
  volume.h6 = Math.min(volume.h6, volume.h24);
  volume.h1 = Math.min(volume.h1, volume.h6);
  volume.m5 = Math.min(volume.m5, volume.h1);
  const scaleTxns = (f: number) => ({
    buys: Math.round(p.txnsH24.buys * f),
    sells: Math.round(p.txnsH24.sells * f),
  });
  const priceChange: DexPairWire["priceChange"] = {};
  for (const [key, windowMs] of WINDOWS) {
    if (p.ageMs < windowMs) continue;
    const f = key === "h24" ? 1 : key === "h6" ? 0.35 : key === "h1" ? 0.08 : 0.01;
    priceChange[key] = round2(p.changeH24 * f * (key === "h24" ? 1 : 0.5 + rng.float()));
  }
  const price = p.base.priceUsd;
  const wire: DexPairWire = {
    chainId: p.chainId,
    dexId: p.dexId,
    url: `https://dexscreener.com/${p.chainId}/${p.pairAddress.toLowerCase()}`,
    pairAddress: p.pairAddress,
    ...(p.labels ? { labels: p.labels } : {}),
    baseToken: { address: p.base.address, name: p.base.name, symbol: p.base.symbol },
    quoteToken: { address: p.quote.address, name: p.quote.name, symbol: p.quote.symbol },
    priceNative: formatPrice(price / p.quote.priceUsd),
    txns: {
      m5: scaleTxns(volume.m5 / Math.max(1, p.volumeH24)),
      h1: scaleTxns(volume.h1 / Math.max(1, p.volumeH24)),
      h6: scaleTxns(volume.h6 / Math.max(1, p.volumeH24)),
      h24: { ...p.txnsH24 },
    },
    volume,
    priceChange,
    pairCreatedAt: anchor - p.ageMs,
  };
  if (!p.noUsdPrice) wire.priceUsd = formatPrice(price);
  const liq = p.liquidityUsd ?? 20_000;
  const liquidity = {
    base: round2(liq / 2 / price),
    quote: round2(liq / 2 / p.quote.priceUsd),
  };
  wire.liquidity = p.liquidityUsd === null ? liquidity : { usd: p.liquidityUsd, ...liquidity };
  if (!p.noUsdPrice) {
    wire.fdv = Math.round(price * p.base.supply);
    if (!p.noMarketCap) wire.marketCap = Math.round(price * p.base.supply * p.base.circulating);
  }
  if (p.withInfo) {
    const addr = p.base.address.toLowerCase();
    wire.info = {
      imageUrl: `https://dd.dexscreener.com/ds-data/tokens/${p.chainId}/${addr}.png`,
      header: `https://dd.dexscreener.com/ds-data/tokens/${p.chainId}/${addr}/header.png`,
      openGraph: `https://cdn.dexscreener.com/token-images/og/${p.chainId}/${addr}`,
      websites: [{ label: "Website", url: `https://${p.base.symbol.toLowerCase()}.example` }],
      socials: [
        { type: "twitter", url: `https://x.com/${p.base.symbol.toLowerCase()}` },
        { type: "telegram", url: `https://t.me/${p.base.symbol.toLowerCase()}` },
      ],
    };
  }
  if (p.boostsActive) wire.boosts = { active: p.boostsActive };
  return wire;
}

export interface MarketDataFixture {
  anchor: number;
  specs: PairSpec[];
  pairs: DexPairWire[];
  boostsTop: BoostWire[];
  boostsLatest: BoostWire[];
  profilesLatest: TokenProfileWire[];
}

const PAIR_SPECS: readonly PairSpec[] = [...b20Pairs(), ...altPairs()];

function links(symbol: string): DexLink[] {
  return [
    { label: "Website", url: `https://${symbol.toLowerCase()}.example` },
    { type: "twitter", url: `https://x.com/${symbol.toLowerCase()}` },
  ];
}

function promoted(chainId: string, tokenAddress: string, symbol: string, description: string) {
  const addr = chainId === "solana" ? tokenAddress : tokenAddress.toLowerCase();
  return {
    url: `https://dexscreener.com/${chainId}/${addr}`,
    chainId,
    tokenAddress,
    icon: `https://dd.dexscreener.com/ds-data/tokens/${chainId}/${addr}.png`,
    header: `https://dd.dexscreener.com/ds-data/tokens/${chainId}/${addr}/header.png`,
    description,
    links: links(symbol),
  };
}

function boosts(): { top: BoostWire[]; latest: BoostWire[] } {
  const bySymbol = (chainId: string, symbol: string) =>
    PAIR_SPECS.find((p) => p.chainId === chainId && p.base.symbol === symbol && p.base.kind !== "community")?.base ??
    PAIR_SPECS.find((p) => p.chainId === chainId && p.base.symbol === symbol)!.base;
  const entry = (chainId: string, address: string, symbol: string, amount: number, total: number): BoostWire => ({
    ...promoted(chainId, address, symbol, `${symbol}: community token.`),
    amount,
    totalAmount: total,
  });
  const top: BoostWire[] = [
    entry("solana", seededBase58("boost:sol:1"), "SOLCAT", 500, 1000),
    entry(ALT_CHAIN_ID, bySymbol(ALT_CHAIN_ID, "PFROG").address, "PFROG", 250, 500),
    entry(ALT_CHAIN_ID, bySymbol(ALT_CHAIN_ID, "CDUCK").address, "CDUCK", 150, 300),
    entry("solana", seededBase58("boost:sol:2"), "SOLDOG", 100, 250),
    entry("ethereum", seeded("boost:eth:1"), "ETHPEPE", 100, 200),
    entry(ALT_CHAIN_ID, bySymbol(ALT_CHAIN_ID, "HAMS").address, "HAMS", 50, 150),
    entry(B20_CHAIN_ID, bySymbol(B20_CHAIN_ID, "WAVE").address, "WAVE", 100, 100),
    entry(ALT_CHAIN_ID, bySymbol(ALT_CHAIN_ID, "TSNAIL").address, "TSNAIL", 30, 90),
  ];
  const latest = [top[6]!, top[7]!, top[3]!, top[1]!, top[4]!];
  return { top, latest };
}

function profiles(): TokenProfileWire[] {
  const pick = (chainId: string, symbol: string) =>
    PAIR_SPECS.find((p) => p.chainId === chainId && p.base.symbol === symbol)!.base;
  return [
    {
      ...promoted(ALT_CHAIN_ID, pick(ALT_CHAIN_ID, "CYAK").address, "CYAK", "Crystal Yak, on BNB Smart Chain."),
      icon: "",
    },
    { ...promoted("solana", seededBase58("profile:sol:1"), "SOLFISH", "A Solana token."), icon: "" },
    { ...promoted(B20_CHAIN_ID, pick(B20_CHAIN_ID, "ORBIT").address, "ORBIT", "Orbit Relay, a B20 asset."), icon: "" },
    { ...promoted(ALT_CHAIN_ID, pick(ALT_CHAIN_ID, "BCAT").address, "BCAT", "Bamboo Cat."), icon: "" },
    { ...promoted(ALT_CHAIN_ID, pick(ALT_CHAIN_ID, "TGOLD").address, "TGOLD", "Gold, one token per ounce."), icon: "" },
  ].map((p) => ({
    ...p,
    icon: `https://dd.dexscreener.com/ds-data/tokens/${p.chainId}/${p.chainId === "solana" ? p.tokenAddress : p.tokenAddress.toLowerCase()}.png`,
  }));
}

let cached: MarketDataFixture | undefined;

/** The market data as the simulator answers at `nowMs` (identical within one minute). */
export function marketDataFixture(nowMs: number): MarketDataFixture {
  const anchor = Math.floor(nowMs / MINUTE) * MINUTE;
  if (cached?.anchor === anchor) return cached;
  const { top, latest } = boosts();
  cached = {
    anchor,
    specs: [...PAIR_SPECS],
    pairs: PAIR_SPECS.map((p) => pairWire(p, anchor)),
    boostsTop: top,
    boostsLatest: latest,
    profilesLatest: profiles(),
  };
  return cached;
}

/** Every pair spec (for facts and tests). */
export function pairSpecs(): readonly PairSpec[] {
  return PAIR_SPECS;
}

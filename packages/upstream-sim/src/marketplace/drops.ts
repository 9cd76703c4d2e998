/**
 * Drop fixtures: NFT drops on many chains in OpenSea's three feeds, with mint stages timed relative to the
 * simulator's clock so that "live", "upcoming" and "ended" stay true whenever the tests run.
 *
 * Times are laid out on an anchor, the clock floored to the hour, and every stage boundary sits at least 2 hours
 * from the anchor: within the hour a drop's kind cannot change, and every answer within that hour is identical.
 */
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet/facts";
import { hash32, seededAddress, seededUuid, unit } from "../core/random.js";
import { BASE_USDC_ADDRESS, chainCurrency, NATIVE_CURRENCY_ADDRESS, type OpenSeaChain } from "./chains.js";
import type { DropDetailedWire, DropStageEligibilityWire, DropStageWire, DropWire } from "./wire.js";

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** What a drop is, as the drop radar must judge it (only `live` and `upcoming` drops are verifiably active or future). */
export type DropKind = "live" | "upcoming" | "ended" | "undated" | "stale" | "sold_out";
export const DROP_FEEDS = ["featured", "upcoming", "recently_minted"] as const;
export type DropFeed = (typeof DROP_FEEDS)[number];

/**
 * `end_time` of a stage with no end date (an open edition). OpenSea's schema requires `end_time`; the fixtures
 * use the largest uint32 timestamp, as contracts that store the end as uint32 report "never".
 */
export const OPEN_ENDED_STAGE_END = "2106-02-07T06:28:15Z";

/** How long ago the stale open-ended drops started (days); fresh open editions started 2 days ago. */
export const STALE_DROP_MIN_AGE_DAYS = 300;

type Timing =
  | "live"
  | "live_gated"
  | "open_edition"
  | "upcoming"
  | "between_stages"
  | "ended"
  | "ended_recent"
  | "undated"
  | "stale"
  | "stale_old"
  | "sold_out";
type StagePlan = "public" | "presale_public" | "gated_public" | "presale_gated_public";
type StageType = "public_sale" | "presale" | "token_gated";

export interface DropSpec {
  slug: string;
  name: string;
  chain: OpenSeaChain;
  timing: Timing;
  feeds: DropFeed[];
  /** In the unfiltered feed (no `chains` parameter). False: only a query naming its chain returns it. */
  global: boolean;
  /** Counted in paging but filtered out of every answer (OpenSea's visibility rules). */
  hidden?: boolean;
  standard?: "erc721" | "erc1155";
  /** Public-stage price in the chain's native currency (in USDC for `erc20`). */
  price: number;
  erc20?: boolean;
  /** Absent for open editions. */
  maxSupply?: number;
  /** Share of `maxSupply` minted (or, for open editions, the number minted). */
  minted: number;
  plan: StagePlan;
  /** Devnet account indexes on the allowlist / gate of the non-public stages. */
  allowlist?: number[];
}

const kindOf: Record<Timing, DropKind> = {
  live: "live",
  live_gated: "live",
  open_edition: "live",
  upcoming: "upcoming",
  between_stages: "upcoming",
  ended: "ended",
  ended_recent: "ended",
  undated: "undated",
  stale: "stale",
  stale_old: "stale",
  sold_out: "sold_out",
};

export function dropKind(spec: DropSpec): DropKind {
  return kindOf[spec.timing];
}

const F: DropFeed[] = ["featured"];
const FU: DropFeed[] = ["featured", "upcoming"];
const FR: DropFeed[] = ["featured", "recently_minted"];
const FUR: DropFeed[] = ["featured", "upcoming", "recently_minted"];
const U: DropFeed[] = ["upcoming"];
const R: DropFeed[] = ["recently_minted"];
const UR: DropFeed[] = ["upcoming", "recently_minted"];

/** The hand-placed drops (the ones the exported facts name), then generated filler. Order = featured curation order. */
// biome-ignore format: one drop per line reads as a table
const namedSpecs: DropSpec[] = [
  { slug: "neon-harbor-passes", name: "Neon Harbor Passes", chain: "ethereum", timing: "live", feeds: FUR, global: true, price: 0.08, maxSupply: 5000, minted: 0.62, plan: "presale_public", allowlist: [1, 2, 5] },
  { slug: "glasswing-editions", name: "Glasswing Editions", chain: "base", timing: "open_edition", feeds: FR, global: true, standard: "erc1155", price: 0.000777, minted: 18_240, plan: "public" },
  { slug: "quiet-orbit", name: "Quiet Orbit", chain: "ethereum", timing: "upcoming", feeds: FU, global: true, price: 0.12, maxSupply: 3333, minted: 0, plan: "presale_public", allowlist: [1, 3] },
  { slug: "saltwater-studies", name: "Saltwater Studies", chain: "zora", timing: "between_stages", feeds: FU, global: true, price: 0.015, maxSupply: 1000, minted: 0.21, plan: "presale_public", allowlist: [2] },
  { slug: "paper-lanterns-genesis", name: "Paper Lanterns Genesis", chain: "arbitrum", timing: "ended", feeds: FUR, global: true, price: 0.01, maxSupply: 4444, minted: 0.71, plan: "presale_public", allowlist: [1, 2, 3] },
  { slug: "flagged-copycat-mint", name: "Flagged Copycat Mint", chain: "ethereum", timing: "live", feeds: FR, global: true, hidden: true, price: 0.05, maxSupply: 10000, minted: 0.1, plan: "public" },
  { slug: "mossy-relics", name: "Mossy Relics", chain: "polygon", timing: "undated", feeds: FUR, global: true, price: 25, maxSupply: 7777, minted: 0, plan: "public" },
  { slug: "forever-mint-club", name: "Forever Mint Club", chain: "ethereum", timing: "stale_old", feeds: FUR, global: true, standard: "erc1155", price: 0.001, minted: 9_412, plan: "public" },
  { slug: "copper-sunrise", name: "Copper Sunrise", chain: "optimism", timing: "live_gated", feeds: FR, global: true, price: 0.02, maxSupply: 2500, minted: 0.18, plan: "gated_public", allowlist: [1, 4] },
  { slug: "tidepool-collective", name: "Tidepool Collective", chain: "blast", timing: "live", feeds: FR, global: true, price: 0.0042, maxSupply: 6000, minted: 0.47, plan: "public" },
  { slug: "ape-canyon-keys", name: "Ape Canyon Keys", chain: "ape_chain", timing: "upcoming", feeds: FU, global: true, price: 42, maxSupply: 2000, minted: 0, plan: "presale_public", allowlist: [2, 6] },
  { slug: "abstract-doodads", name: "Abstract Doodads", chain: "abstract", timing: "live", feeds: FR, global: true, price: 0, maxSupply: 8888, minted: 0.83, plan: "public" },
  { slug: "shape-shifters-lab", name: "Shape Shifters Lab", chain: "shape", timing: "undated", feeds: FU, global: true, price: 0.005, maxSupply: 3000, minted: 0, plan: "public" },
  { slug: "last-call-records", name: "Last Call Records", chain: "base", timing: "ended_recent", feeds: FR, global: true, price: 0.0025, maxSupply: 1500, minted: 0.94, plan: "public" },
  { slug: "evergreen-open-edition", name: "Evergreen Open Edition", chain: "base", timing: "stale", feeds: FR, global: true, standard: "erc1155", price: 0.0001, minted: 152_003, plan: "public" },
  { slug: "sold-out-signals", name: "Sold Out Signals", chain: "ethereum", timing: "sold_out", feeds: FR, global: true, price: 0.05, maxSupply: 777, minted: 1, plan: "public" },
  { slug: "usdc-priced-pass", name: "USDC Priced Pass", chain: "base", timing: "live", feeds: FR, global: true, price: 25, erc20: true, maxSupply: 2000, minted: 0.35, plan: "public" },
  { slug: "midnight-ferry", name: "Midnight Ferry", chain: "unichain", timing: "upcoming", feeds: U, global: true, price: 0.003, maxSupply: 4000, minted: 0, plan: "gated_public", allowlist: [1, 7] },
  { slug: "violet-static", name: "Violet Static", chain: "soneium", timing: "upcoming", feeds: UR, global: true, price: 0.002, maxSupply: 2222, minted: 0, plan: "public" },
  { slug: "tba-phantoms", name: "TBA Phantoms", chain: "ethereum", timing: "undated", feeds: U, global: true, price: 0.05, maxSupply: 5555, minted: 0, plan: "public" },
  { slug: "gallery-of-echoes", name: "Gallery of Echoes", chain: "polygon", timing: "live", feeds: R, global: true, price: 10, maxSupply: 10000, minted: 0.29, plan: "presale_gated_public", allowlist: [3, 8] },
  // Only in a query naming the chain (`chains=<chain>`): the unfiltered feed leaves them out.
  { slug: "zora-coastline", name: "Zora Coastline", chain: "zora", timing: "live", feeds: FR, global: false, price: 0.000777, maxSupply: 10000, minted: 0.39, plan: "presale_public", allowlist: [3] },
  { slug: "shape-hidden-gems", name: "Shape Hidden Gems", chain: "shape", timing: "upcoming", feeds: FU, global: false, price: 0.004, maxSupply: 1200, minted: 0, plan: "presale_public", allowlist: [1] },
  { slug: "ape-vault-drop", name: "Ape Vault Drop", chain: "ape_chain", timing: "live", feeds: F, global: false, price: 15, maxSupply: 3000, minted: 0.55, plan: "public" },
  { slug: "abstract-late-bloom", name: "Abstract Late Bloom", chain: "abstract", timing: "upcoming", feeds: U, global: false, price: 0.006, maxSupply: 2000, minted: 0, plan: "presale_public", allowlist: [2, 4] },
  { slug: "ink-tide-pass", name: "Ink Tide Pass", chain: "ink", timing: "live", feeds: R, global: false, price: 0.001, maxSupply: 5000, minted: 0.12, plan: "public" },
  { slug: "bera-honey-jars", name: "Bera Honey Jars", chain: "bera_chain", timing: "live", feeds: FR, global: false, price: 4.2, maxSupply: 6900, minted: 0.44, plan: "gated_public", allowlist: [5] },
  { slug: "ronin-arcade-heroes", name: "Ronin Arcade Heroes", chain: "ronin", timing: "upcoming", feeds: FU, global: false, price: 35, maxSupply: 8000, minted: 0, plan: "public" },
  { slug: "unichain-pixel-pact", name: "Unichain Pixel Pact", chain: "unichain", timing: "ended", feeds: R, global: false, price: 0.002, maxSupply: 3000, minted: 0.66, plan: "public" },
  { slug: "soneium-stale-sketches", name: "Soneium Stale Sketches", chain: "soneium", timing: "stale", feeds: F, global: false, standard: "erc1155", price: 0.0002, minted: 4_120, plan: "public" },
  { slug: "blast-undated-beacons", name: "Blast Undated Beacons", chain: "blast", timing: "undated", feeds: U, global: false, price: 0.01, maxSupply: 2500, minted: 0, plan: "public" },
  { slug: "avalanche-summit-pass", name: "Avalanche Summit Pass", chain: "avalanche", timing: "live", feeds: F, global: false, price: 1.5, maxSupply: 1000, minted: 0.72, plan: "public" },
  { slug: "polygon-plaza-tickets", name: "Polygon Plaza Tickets", chain: "polygon", timing: "upcoming", feeds: U, global: false, price: 5, maxSupply: 4000, minted: 0, plan: "presale_public", allowlist: [1, 9] },
];

const fillerWords = {
  first: [
    "Drift",
    "Velvet",
    "Hollow",
    "Amber",
    "Signal",
    "Lunar",
    "Granite",
    "Cobalt",
    "Willow",
    "Ember",
    "Prism",
    "Harbor",
  ],
  second: [
    "Atlas",
    "Choir",
    "Meadows",
    "Circuit",
    "Tokens",
    "Archive",
    "Garden",
    "Relay",
    "Sketchbook",
    "Parade",
    "Vault",
  ],
};
const fillerChains: OpenSeaChain[] = ["ethereum", "base", "arbitrum", "optimism", "zora", "blast", "abstract", "shape"];
const fillerTimings: Timing[] = [
  "live",
  "upcoming",
  "ended",
  "undated",
  "stale",
  "live",
  "upcoming",
  "ended",
  "live",
  "upcoming",
  "undated",
  "ended",
];

/** Twelve generated drops in the unfiltered featured feed (and the feed their timing fits), so it pages past 20. */
const fillerSpecs: DropSpec[] = fillerTimings.map((timing, i) => {
  const name = `${fillerWords.first[i]!} ${fillerWords.second[(i * 5) % fillerWords.second.length]!}`;
  const chain = fillerChains[i % fillerChains.length]!;
  const kind = kindOf[timing];
  const feeds: DropFeed[] =
    kind === "upcoming" || kind === "undated" ? ["featured", "upcoming"] : ["featured", "recently_minted"];
  const open = timing === "stale";
  const r = unit("filler", i);
  return {
    slug: name.toLowerCase().replace(/\s+/g, "-"),
    name,
    chain,
    timing,
    feeds,
    global: true,
    standard: open ? "erc1155" : "erc721",
    price: Number((0.001 + r * 0.05).toFixed(4)),
    ...(open ? {} : { maxSupply: 1000 + Math.floor(r * 9000) }),
    minted: open ? 2000 + Math.floor(r * 5000) : kind === "upcoming" || kind === "undated" ? 0 : 0.2 + r * 0.6,
    plan: kind === "upcoming" && i % 2 === 1 ? "presale_public" : "public",
    allowlist: [],
  } satisfies DropSpec;
});

/** Every drop the marketplace simulator knows, in the featured feed's curation order. */
export const DROP_SPECS: readonly DropSpec[] = [...namedSpecs, ...fillerSpecs];

interface StageWindow {
  type: StageType;
  start: number;
  /** Hours from the anchor; null = open-ended. */
  end: number | null;
}

function stageWindows(spec: DropSpec): StageWindow[] {
  const { timing, plan } = spec;
  const w = (type: StageType, start: number, end: number | null): StageWindow => ({ type, start, end });
  const fail = () => new Error(`drop ${spec.slug}: no stage layout for timing ${timing} with plan ${plan}`);
  switch (timing) {
    case "undated":
      return [];
    case "open_edition":
      return [w("public_sale", -48, null)];
    case "stale":
      return [w("public_sale", -24 * STALE_DROP_MIN_AGE_DAYS, null)];
    case "stale_old":
      return [w("public_sale", -24 * 420, null)];
    case "sold_out":
      return [w("public_sale", -12, 84)];
    case "ended_recent":
      return [w("public_sale", -60, -6)];
    case "live_gated":
      if (plan !== "gated_public") throw fail();
      return [w("token_gated", -6, 30), w("public_sale", 30, 120)];
    case "between_stages":
      if (plan !== "presale_public") throw fail();
      return [w("presale", -48, -3), w("public_sale", 21, 120)];
    case "live":
      if (plan === "public") return [w("public_sale", -30, 96)];
      if (plan === "presale_public") return [w("presale", -72, -24), w("public_sale", -24, 72)];
      if (plan === "gated_public") return [w("token_gated", -50, -20), w("public_sale", -20, 100)];
      return [w("token_gated", -96, -48), w("presale", -48, -20), w("public_sale", -20, 60)];
    case "upcoming":
      if (plan === "public") return [w("public_sale", 36, 132)];
      if (plan === "presale_public") return [w("presale", 48, 72), w("public_sale", 72, 168)];
      if (plan === "gated_public") return [w("token_gated", 26, 50), w("public_sale", 50, 146)];
      return [w("token_gated", 30, 54), w("presale", 54, 78), w("public_sale", 78, 174)];
    case "ended":
      if (plan === "public") return [w("public_sale", -300, -150)];
      if (plan === "presale_public") return [w("presale", -240, -200), w("public_sale", -200, -120)];
      throw fail();
  }
}

/** Wei (or the ERC-20's smallest unit) from a decimal amount, exact to 1e-6 of a unit. */
export function toUnits(amount: number, decimals: number): bigint {
  const micro = BigInt(Math.round(amount * 1e6));
  return decimals >= 6 ? micro * 10n ** BigInt(decimals - 6) : micro / 10n ** BigInt(6 - decimals);
}

/** ISO-8601 UTC without milliseconds, as OpenSea writes stage times. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function anchorHour(nowMs: number): number {
  return Math.floor(nowMs / HOUR_MS) * HOUR_MS;
}

const stageLabel: Record<StageType, string> = {
  public_sale: "Public",
  presale: "Allowlist",
  token_gated: "Holder mint",
};

/** A drop as built for one anchor: its wire forms and what the simulator needs to answer about it. */
export interface BuiltDrop {
  spec: DropSpec;
  kind: DropKind;
  summary: DropWire;
  detail: DropDetailedWire;
  /** Window of each stage, milliseconds (end null = open-ended), aligned with `detail.stages`. */
  windows: { type: StageType; startMs: number; endMs: number | null }[];
  /** For the feeds' ordering. */
  firstStartMs: number | null;
  lastMintMs: number | null;
}

function buildDrop(spec: DropSpec, anchor: number): BuiltDrop {
  const currency = spec.erc20 ? BASE_USDC_ADDRESS : NATIVE_CURRENCY_ADDRESS;
  const decimals = spec.erc20 ? 6 : 18;
  const windows = stageWindows(spec).map((w) => ({
    type: w.type,
    startMs: anchor + w.start * HOUR_MS,
    endMs: w.end === null ? null : anchor + w.end * HOUR_MS,
  }));
  const h = hash32(spec.slug);
  const stages: DropStageWire[] = windows.map((w, i) => {
    const factor = w.type === "public_sale" ? 1 : w.type === "presale" ? 0.8 : 0.5;
    const stage: DropStageWire = {
      uuid: seededUuid(`${spec.slug}:stage:${i}`),
      stage_type: w.type,
      label: stageLabel[w.type],
      price: toUnits(spec.price * factor, decimals).toString(),
      price_currency_address: currency,
      start_time: isoSeconds(w.startMs),
      end_time: w.endMs === null ? OPEN_ENDED_STAGE_END : isoSeconds(w.endMs),
      max_per_wallet: w.type === "public_sale" ? String(3 + (h % 8)) : w.type === "presale" ? "2" : "1",
    };
    if (w.type === "presale") stage.allowlist_wallet_count = 400 + (h % 2600);
    return stage;
  });
  const maxSupply = spec.maxSupply;
  const minted =
    maxSupply === undefined
      ? Math.round(spec.minted)
      : spec.timing === "sold_out"
        ? maxSupply
        : Math.round(maxSupply * spec.minted);
  const soldOut = maxSupply !== undefined && minted >= maxSupply;
  const nowish = anchor; // every boundary is >= 2 h from the anchor, so the anchor decides like the clock would
  const activeIndex = soldOut
    ? -1
    : windows.findIndex((w) => w.startMs <= nowish && (w.endMs === null || w.endMs > nowish));
  const nextIndex =
    activeIndex >= 0 || soldOut
      ? -1
      : windows.reduce(
          (best, w, i) => (w.startMs > nowish && (best < 0 || w.startMs < windows[best]!.startMs) ? i : best),
          -1,
        );
  const contract = seededAddress(`drop:${spec.slug}`);
  const summary: DropWire = {
    collection_slug: spec.slug,
    collection_name: spec.name,
    chain: spec.chain,
    contract_address: contract,
    drop_type: spec.standard === "erc1155" ? "seadrop_v1_erc1155" : "seadrop_v1_erc721",
    is_minting: activeIndex >= 0,
    image_url: `https://i2c.seadn.io/collection/${spec.slug}/image_type_logo/${seededAddress(`img:${spec.slug}`).slice(2, 34)}.png`,
    opensea_url: `https://opensea.io/collection/${spec.slug}/overview`,
  };
  if (activeIndex >= 0) summary.active_stage = stages[activeIndex]!;
  if (nextIndex >= 0) summary.next_stage = stages[nextIndex]!;
  const detail: DropDetailedWire = { ...summary, stages, total_supply: String(minted) };
  if (maxSupply !== undefined) detail.max_supply = String(maxSupply);

  const kind = kindOf[spec.timing];
  const lastMintMs =
    kind === "live"
      ? anchor - (5 + (h % 50)) * 60_000
      : kind === "sold_out"
        ? anchor - 3 * HOUR_MS
        : kind === "ended"
          ? (windows.at(-1)?.endMs ?? null)
          : kind === "stale"
            ? anchor - (9 + (h % 20)) * DAY_MS
            : null;
  return {
    spec,
    kind,
    summary,
    detail,
    windows,
    firstStartMs: windows.length > 0 ? Math.min(...windows.map((w) => w.startMs)) : null,
    lastMintMs,
  };
}

export interface DropsFixture {
  anchor: number;
  bySlug: Map<string, BuiltDrop>;
  /** All drops in featured curation order. */
  all: BuiltDrop[];
}

export function buildDrops(nowMs: number): DropsFixture {
  const anchor = anchorHour(nowMs);
  const all = DROP_SPECS.map((spec) => buildDrop(spec, anchor));
  return { anchor, all, bySlug: new Map(all.map((d) => [d.spec.slug, d])) };
}

/**
 * The feed as OpenSea pages it: every entry in order, hidden ones included (they count against `limit` and are
 * then filtered out). `chains` empty: the unfiltered feed; otherwise every drop of those chains in the feed.
 */
export function feedEntries(fixture: DropsFixture, feed: DropFeed, chains: readonly string[]): BuiltDrop[] {
  const entries = fixture.all.filter(
    (d) => d.spec.feeds.includes(feed) && (chains.length === 0 ? d.spec.global : chains.includes(d.spec.chain)),
  );
  if (feed === "upcoming") {
    // Calendar order: by first stage start; undated ("TBA") drops last.
    return entries
      .map((d, i) => ({ d, i }))
      .sort((a, b) => (a.d.firstStartMs ?? Infinity) - (b.d.firstStartMs ?? Infinity) || a.i - b.i)
      .map((x) => x.d);
  }
  if (feed === "recently_minted") {
    return entries
      .map((d, i) => ({ d, i }))
      .sort((a, b) => (b.d.lastMintMs ?? -Infinity) - (a.d.lastMintMs ?? -Infinity) || a.i - b.i)
      .map((x) => x.d);
  }
  return entries;
}

const devnetIndexByAddress = new Map(DEVNET_ACCOUNTS.map((a) => [a.address.toLowerCase(), a.index]));

/** Index of a devnet test account (0-9), or -1. */
export function devnetIndexOf(wallet: string): number {
  return devnetIndexByAddress.get(wallet.toLowerCase()) ?? -1;
}

/**
 * Whether `wallet` may mint in a non-public stage: devnet accounts by the drop's fixed allowlist, any other wallet
 * by a hash of (wallet, drop, stage) — about 30% of them.
 */
export function onStageList(spec: DropSpec, stageType: string, wallet: string): boolean {
  const index = devnetIndexOf(wallet);
  if (index >= 0) return (spec.allowlist ?? []).includes(index);
  return unit("eligibility", wallet.toLowerCase(), spec.slug, stageType) < 0.3;
}

/** Per-stage eligibility of `wallet`, as `GET /api/v2/drops/{slug}/eligibility` answers for that wallet's token. */
export function dropEligibility(drop: BuiltDrop, wallet: string): DropStageEligibilityWire[] {
  return drop.detail.stages.map((stage) => {
    const eligible = stage.stage_type === "public_sale" || onStageList(drop.spec, stage.stage_type, wallet);
    const answer: DropStageEligibilityWire = {
      stage_uuid: stage.uuid,
      is_eligible: eligible,
      price: stage.price ?? "0",
      max_total_mintable_by_wallet: eligible ? stage.max_per_wallet : "0",
    };
    if (drop.spec.standard === "erc1155")
      answer.max_total_mintable_by_wallet_per_token = answer.max_total_mintable_by_wallet;
    return answer;
  });
}

/** Drop prices' currency symbol and decimals (for facts and docs). */
export function dropCurrency(spec: DropSpec): { symbol: string; decimals: number; address: string } {
  if (spec.erc20) return { symbol: "USDC", decimals: 6, address: BASE_USDC_ADDRESS };
  return { symbol: chainCurrency(spec.chain).native, decimals: 18, address: NATIVE_CURRENCY_ADDRESS };
}

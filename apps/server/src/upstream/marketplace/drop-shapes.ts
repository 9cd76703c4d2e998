/**
 * The marketplace's drop answers (OpenSea API v2) and the small internal types they map to. The Zod schemas below
 * are the upstream's answers (`DropPaginatedResponse`, `DropDetailedResponse`, `DropEligibilityResponse` of
 * opensea-api.json), not our wire shapes: fields the document marks optional may also come as `null`, and
 * fields this service does not read are not required. The routes that fetch them are in ./drops.ts.
 */
import { formatUnits, getAddress, isAddress } from "viem";
import { z } from "zod";
import { nativeSymbol } from "./chains.js";

/* ----------------------------------------------------------------------------------------------------------- */
/*                                               Upstream answers                                               */
/* ----------------------------------------------------------------------------------------------------------- */

/** An optional upstream field: absent, `null` or the value; read as `undefined` when absent or null. */
const opt = <S extends z.ZodType>(schema: S) => schema.nullish().transform((value) => value ?? undefined);

/** OpenSea sends counts and amounts as decimal strings; some payloads send numbers. */
const numeric = z.union([z.string(), z.number()]);

const stageWire = z.object({
  uuid: opt(z.string()),
  stage_type: opt(z.string()),
  label: opt(z.string()),
  price: opt(numeric),
  price_currency_address: opt(z.string()),
  start_time: opt(z.string()),
  end_time: opt(z.string()),
  max_per_wallet: opt(numeric),
  allowlist_wallet_count: opt(z.number()),
});

const dropWireShape = {
  collection_slug: z.string(),
  collection_name: opt(z.string()),
  chain: z.string(),
  contract_address: z.string(),
  drop_type: opt(z.string()),
  is_minting: opt(z.boolean()),
  image_url: opt(z.string()),
  opensea_url: opt(z.string()),
  active_stage: opt(stageWire),
  next_stage: opt(stageWire),
};

export const dropPageWire = z.object({
  drops: z.array(z.object(dropWireShape)),
  next: opt(z.string()),
});

export const dropDetailWire = z.object({
  ...dropWireShape,
  stages: opt(z.array(stageWire)),
  total_supply: opt(numeric),
  max_supply: opt(numeric),
});

export const eligibilityWire = z.object({
  stages: z.array(
    z.object({
      stage_uuid: z.string(),
      is_eligible: z.boolean(),
      price: opt(numeric),
      max_total_mintable_by_wallet: opt(numeric),
    }),
  ),
});

type StageWire = z.output<typeof stageWire>;
type DropWire = z.output<z.ZodObject<typeof dropWireShape>>;

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                Internal types                                                */
/* ----------------------------------------------------------------------------------------------------------- */

/** The marketplace's drop discovery feeds. */
export const MARKETPLACE_DROP_FEEDS = ["featured", "upcoming", "recently_minted"] as const;
export type MarketplaceDropFeed = (typeof MARKETPLACE_DROP_FEEDS)[number];

export type StageKind = "public" | "allowlist" | "token_gated" | "unknown";

/** A price in a currency's smallest unit (the wire's Price object). */
export interface DropPrice {
  amount: string;
  currency: string;
  decimals: number;
  usd: number | null;
}

export interface DropStageInfo {
  uuid: string | null;
  name: string;
  kind: StageKind;
  startsAt: Date | null;
  /** Null when the stage has no end date (missing, unreadable, or a "never" sentinel: see {@link NO_END_FROM}). */
  endsAt: Date | null;
  /** Null when the stage has no price or its currency is not one this service can name. */
  price: DropPrice | null;
  maxPerWallet: number | null;
  /** Wallets on the stage's allowlist when the marketplace last synced it. */
  allowlistSize: number | null;
}

export interface MarketplaceDrop {
  slug: string;
  name: string;
  chain: string;
  /** EIP-55; null when the marketplace's contract address is not an EVM address. */
  contractAddress: string | null;
  imageUrl: string | null;
  openseaUrl: string;
  isMinting: boolean | null;
  /** The stage minting now, as the list reports it. */
  activeStage: DropStageInfo | null;
  /** The earliest stage still to come when the drop is not minting. */
  nextStage: DropStageInfo | null;
}

export interface MarketplaceDropDetail extends MarketplaceDrop {
  /** Every stage, in start order (undated stages last). */
  stages: DropStageInfo[];
  totalSupply: number | null;
  /** Null for open editions. */
  maxSupply: number | null;
}

export interface StageEligibility {
  stageUuid: string;
  eligible: boolean;
  /** The wallet's lifetime mint cap on the drop, when the marketplace says. */
  maxMintable: number | null;
}

/** Why a wallet's eligibility could not be read (the marketplace's own refusal, not an outage). */
export type EligibilityRefusal = "unauthorized" | "forbidden" | "not_found";

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                   Mapping                                                    */
/* ----------------------------------------------------------------------------------------------------------- */

/**
 * End times at or after this instant mean "no end date": contracts that store the end as a uint32 report
 * 2106-02-07T06:28:15Z for "never", others larger values still.
 */
export const NO_END_FROM = Date.UTC(2100, 0, 1);

const NATIVE = "0x0000000000000000000000000000000000000000";

interface KnownToken {
  symbol: string;
  decimals: number;
  /** USD per unit at face value (stablecoins); null otherwise. */
  usd: number | null;
}

const usdc: KnownToken = { symbol: "USDC", decimals: 6, usd: 1 };
const weth: KnownToken = { symbol: "WETH", decimals: 18, usd: null };

/** ERC-20s drops are priced in, by lowercase address (the same address names the same token on OP-stack chains). */
const knownTokens: Record<string, KnownToken> = {
  "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48": usdc, // ethereum
  "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913": usdc, // base
  "0xaf88d065e77c8cc2239327c5edb3a432268e5831": usdc, // arbitrum
  "0x0b2c639c533813f4aa9d7837caf62653d097ff85": usdc, // optimism
  "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359": usdc, // polygon
  "0xb97ef9ef8734c71904d8002f8b6bc66dd9c48a6e": usdc, // avalanche
  "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2": weth, // ethereum
  "0x4200000000000000000000000000000000000006": weth, // OP-stack chains
  "0x4300000000000000000000000000000000000004": weth, // blast
};

function toCount(value: string | number | undefined): number | null {
  if (value === undefined) return null;
  const n = typeof value === "number" ? value : /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

function toAmount(value: string | number | undefined): bigint | null {
  if (value === undefined) return null;
  const text = typeof value === "number" ? (Number.isSafeInteger(value) ? String(value) : "") : value.trim();
  return /^\d+$/.test(text) ? BigInt(text) : null;
}

function toDate(value: string | undefined): Date | null {
  if (!value) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms);
}

function toPrice(chain: string, amount: string | number | undefined, currency: string | undefined): DropPrice | null {
  const units = toAmount(amount);
  if (units === null) return null;
  const address = (currency ?? NATIVE).toLowerCase();
  if (address === NATIVE) {
    const symbol = nativeSymbol(chain);
    return symbol ? { amount: units.toString(), currency: symbol, decimals: 18, usd: null } : null;
  }
  const token = knownTokens[address];
  if (!token) return null;
  const usd = token.usd === null ? null : Number(formatUnits(units, token.decimals)) * token.usd;
  return { amount: units.toString(), currency: token.symbol, decimals: token.decimals, usd };
}

function stageKind(type: string | undefined): StageKind {
  switch (type?.toLowerCase()) {
    case "public_sale":
    case "public":
      return "public";
    case "presale":
    case "allowlist":
      return "allowlist";
    case "token_gated":
      return "token_gated";
    default:
      return "unknown";
  }
}

const stageNames: Record<StageKind, string> = {
  public: "Public",
  allowlist: "Allowlist",
  token_gated: "Token-gated",
  unknown: "Stage",
};

function toStage(chain: string, wire: StageWire): DropStageInfo {
  const kind = stageKind(wire.stage_type);
  const end = toDate(wire.end_time);
  return {
    uuid: wire.uuid ?? null,
    name: wire.label?.trim() || (kind === "unknown" && wire.stage_type ? wire.stage_type : stageNames[kind]),
    kind,
    startsAt: toDate(wire.start_time),
    endsAt: end && end.getTime() < NO_END_FROM ? end : null,
    price: toPrice(chain, wire.price, wire.price_currency_address),
    maxPerWallet: toCount(wire.max_per_wallet),
    allowlistSize: wire.allowlist_wallet_count ?? null,
  };
}

export function toDrop(wire: DropWire): MarketplaceDrop {
  const chain = wire.chain;
  const slug = wire.collection_slug;
  return {
    slug,
    name: wire.collection_name?.trim() || slug,
    chain,
    contractAddress: isAddress(wire.contract_address, { strict: false }) ? getAddress(wire.contract_address) : null,
    imageUrl: wire.image_url ?? null,
    openseaUrl: wire.opensea_url ?? `https://opensea.io/collection/${encodeURIComponent(slug)}`,
    isMinting: wire.is_minting ?? null,
    activeStage: wire.active_stage ? toStage(chain, wire.active_stage) : null,
    nextStage: wire.next_stage ? toStage(chain, wire.next_stage) : null,
  };
}

export const startOrder = (a: DropStageInfo, b: DropStageInfo) =>
  (a.startsAt?.getTime() ?? Number.POSITIVE_INFINITY) - (b.startsAt?.getTime() ?? Number.POSITIVE_INFINITY);

export function toStageEligibility(stage: z.infer<typeof eligibilityWire>["stages"][number]): StageEligibility {
  return {
    stageUuid: stage.stage_uuid,
    eligible: stage.is_eligible,
    maxMintable: toCount(stage.max_total_mintable_by_wallet),
  };
}

/** A drop's detail: every stage (by start time) and the supply. */
export function toDropDetail(wire: z.output<typeof dropDetailWire>): MarketplaceDropDetail {
  const drop = toDrop(wire);
  return {
    ...drop,
    stages: (wire.stages ?? []).map((stage) => toStage(drop.chain, stage)).sort(startOrder),
    totalSupply: toCount(wire.total_supply),
    maxSupply: toCount(wire.max_supply),
  };
}

/**
 * The market-data aggregator's pair routes (DexScreener's public API) over the upstream client, each answer checked
 * against the schemas below, and what the radars make of them: one market per token, taken from the pair where the
 * token is the base token with the most liquidity (docs/api.md, "Market tools and their sources").
 */
import { getAddress, isAddress } from "viem";
import { z } from "zod";
import type { UpstreamClient } from "../upstream-client.js";

/* ----------------------------------------------------------------------------------------------------------- */
/*                                            Upstream shapes                                                   */
/* ----------------------------------------------------------------------------------------------------------- */

const optionalNumber = z.number().nullish();

const tokenRefSchema = z.object({
  address: z.string().min(1),
  name: z.string().nullish(),
  symbol: z.string().nullish(),
});

const tradesSchema = z.object({ buys: optionalNumber, sells: optionalNumber });

/**
 * A DexScreener pair; unknown fields (info, boosts, labels, ...) are dropped. Optional fields may be null or missing
 * (the real API leaves out `priceUsd`, `liquidity.usd`, `marketCap`, and price-change windows a pair is too young
 * for); an answer that misses a required field is a bad answer (502).
 */
export const dexPairSchema = z.object({
  chainId: z.string(),
  dexId: z.string().nullish(),
  url: z.string().nullish(),
  pairAddress: z.string(),
  baseToken: tokenRefSchema,
  quoteToken: tokenRefSchema.nullish(),
  priceNative: z.string().nullish(),
  /** A decimal string upstream ("0.0004821"); a number is accepted too. */
  priceUsd: z.union([z.string(), z.number()]).nullish(),
  txns: z.record(z.string(), tradesSchema.nullish()).nullish(),
  volume: z.record(z.string(), optionalNumber).nullish(),
  priceChange: z.record(z.string(), optionalNumber).nullish(),
  liquidity: z.object({ usd: optionalNumber, base: optionalNumber, quote: optionalNumber }).nullish(),
  fdv: optionalNumber,
  marketCap: optionalNumber,
  /** Milliseconds since the epoch. */
  pairCreatedAt: optionalNumber,
});
export type DexPair = z.output<typeof dexPairSchema>;

/** `/tokens/v1/...` and `/token-pairs/v1/...`: an array of pairs. */
export const dexPairListSchema = z.array(dexPairSchema);

/** `/latest/dex/search`: `{schemaVersion, pairs}`; `pairs` is null when nothing matches. */
export const dexSearchSchema = z.object({
  schemaVersion: z.string().nullish(),
  pairs: z.array(dexPairSchema).nullable(),
});

/** `/token-boosts/top/v1`: promoted tokens of every chain. */
export const dexBoostListSchema = z.array(
  z.object({
    chainId: z.string(),
    tokenAddress: z.string(),
    amount: optionalNumber,
    totalAmount: optionalNumber,
    url: z.string().nullish(),
  }),
);

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                  Calls                                                       */
/* ----------------------------------------------------------------------------------------------------------- */

/** Token addresses one `/tokens/v1` call takes. */
export const TOKENS_PER_CALL = 30;
/** Promoted tokens change slowly and their route has a lower rate limit (60 a minute): keep them longer. */
const BOOSTS_TTL_MS = 60_000;

const segment = (value: string) => encodeURIComponent(value);
const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Pairs of many tokens of one chain, as base or quote token: `/tokens/v1/{chainId}/{addresses}`, 30 addresses a call,
 * the calls in parallel (the client bounds the concurrency). Pairs of other chains are dropped; each pair appears once.
 */
export async function pairsOfTokens(client: UpstreamClient, chainId: string, addresses: string[]): Promise<DexPair[]> {
  const unique = [...new Map(addresses.map((a) => [a.toLowerCase(), a])).values()];
  const batches: string[][] = [];
  for (let i = 0; i < unique.length; i += TOKENS_PER_CALL) batches.push(unique.slice(i, i + TOKENS_PER_CALL));
  const answers = await Promise.all(
    batches.map((batch) =>
      client.get(`/tokens/v1/${segment(chainId)}/${batch.map(segment).join(",")}`, { schema: dexPairListSchema }),
    ),
  );
  return dedupePairs(answers.flatMap((pairs) => pairs ?? []).filter((p) => p.chainId === chainId));
}

/** Pairs of one token: `/token-pairs/v1/{chainId}/{address}` (an unknown token has none). */
export async function pairsOfToken(client: UpstreamClient, chainId: string, address: string): Promise<DexPair[]> {
  const pairs = await client.get(`/token-pairs/v1/${segment(chainId)}/${segment(address)}`, {
    schema: dexPairListSchema,
    notFoundAsNull: true,
  });
  return (pairs ?? []).filter((p) => p.chainId === chainId);
}

/** Pairs of every chain matching a query: `/latest/dex/search?q=`. */
export async function searchPairs(client: UpstreamClient, query: string): Promise<DexPair[]> {
  const answer = await client.get("/latest/dex/search", { query: { q: query }, schema: dexSearchSchema });
  return answer?.pairs ?? [];
}

/** Addresses of a chain's most boosted tokens: `/token-boosts/top/v1` filtered by chain. */
export async function topBoostedTokens(client: UpstreamClient, chainId: string): Promise<string[]> {
  const boosts = await client.get("/token-boosts/top/v1", { schema: dexBoostListSchema, ttlMs: BOOSTS_TTL_MS });
  return (boosts ?? []).filter((b) => b.chainId === chainId).map((b) => b.tokenAddress);
}

function dedupePairs(pairs: DexPair[]): DexPair[] {
  const seen = new Map<string, DexPair>();
  for (const pair of pairs) {
    const key = `${pair.chainId}:${pair.pairAddress.toLowerCase()}`;
    if (!seen.has(key)) seen.set(key, pair);
  }
  return [...seen.values()];
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                             Token markets                                                    */
/* ----------------------------------------------------------------------------------------------------------- */

/** A token's market, from its deepest pair as base token (figures) and all its pairs as base token (age). */
export interface TokenMarket {
  chainId: string;
  /** The base token's address, EIP-55 when it is an EVM address. */
  address: string;
  name: string;
  symbol: string;
  priceUsd: number | null;
  volumeH24: number | null;
  liquidityUsd: number | null;
  priceChangeH24: number | null;
  /** 24h buys + sells. */
  txns24: number | null;
  marketCap: number | null;
  fdv: number | null;
  /** Market page of the deepest pair. */
  url: string | null;
  pairAddress: string;
  dexId: string | null;
  quoteSymbol: string | null;
  /** Creation of the token's oldest pair (ms since the epoch), for the risk's age; null when unknown. */
  pairCreatedAt: number | null;
  /** Pairs where the token is the base token. */
  pairCount: number;
}

const finite = (value: number | null | undefined): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;

function priceOf(value: string | number | null | undefined): number | null {
  if (value === null || value === undefined || value === "") return null;
  return finite(typeof value === "number" ? value : Number(value));
}

/** EIP-55 for an EVM address; other chains' addresses as they are. */
export function displayAddress(address: string): string {
  return isAddress(address, { strict: false }) ? getAddress(address) : address;
}

const depth = (pair: DexPair) => finite(pair.liquidity?.usd) ?? -1;

/**
 * The market of `address` on `chainId` among `pairs`: figures from the pair where it is the base token with the
 * most USD liquidity (ties: more 24h volume); null when it is the base token of no pair.
 */
export function tokenMarket(chainId: string, address: string, pairs: DexPair[]): TokenMarket | null {
  const own = pairs.filter((p) => p.chainId === chainId && sameAddress(p.baseToken.address, address));
  if (own.length === 0) return null;
  const best = own.reduce((a, b) => {
    const byDepth = depth(b) - depth(a);
    if (byDepth !== 0) return byDepth > 0 ? b : a;
    return (finite(b.volume?.h24) ?? -1) > (finite(a.volume?.h24) ?? -1) ? b : a;
  });
  const created = own.map((p) => finite(p.pairCreatedAt)).filter((t): t is number => t !== null);
  const trades = best.txns?.h24;
  const buys = finite(trades?.buys);
  const sells = finite(trades?.sells);
  return {
    chainId,
    address: displayAddress(best.baseToken.address),
    name: best.baseToken.name ?? best.baseToken.symbol ?? "",
    symbol: best.baseToken.symbol ?? "",
    priceUsd: priceOf(best.priceUsd),
    volumeH24: finite(best.volume?.h24),
    liquidityUsd: finite(best.liquidity?.usd),
    priceChangeH24: finite(best.priceChange?.h24),
    txns24: buys === null && sells === null ? null : (buys ?? 0) + (sells ?? 0),
    marketCap: finite(best.marketCap),
    fdv: finite(best.fdv),
    url: best.url ?? null,
    pairAddress: best.pairAddress,
    dexId: best.dexId ?? null,
    quoteSymbol: best.quoteToken?.symbol ?? null,
    pairCreatedAt: created.length > 0 ? Math.min(...created) : null,
    pairCount: own.length,
  };
}

/** Markets of many tokens of one chain, by lower-cased address; null for a token without a pair as base token. */
export async function marketsOfTokens(
  client: UpstreamClient,
  chainId: string,
  addresses: string[],
): Promise<Map<string, TokenMarket | null>> {
  const markets = new Map<string, TokenMarket | null>();
  if (addresses.length === 0) return markets;
  const pairs = await pairsOfTokens(client, chainId, addresses);
  for (const address of addresses) markets.set(address.toLowerCase(), tokenMarket(chainId, address, pairs));
  return markets;
}

/** The market of one token of a chain (null without a pair as base token). */
export async function marketOfToken(
  client: UpstreamClient,
  chainId: string,
  address: string,
): Promise<TokenMarket | null> {
  return tokenMarket(chainId, address, await pairsOfToken(client, chainId, address));
}

export interface MostActiveOptions {
  /** Search queries whose results hold the chain's most traded pairs (for bsc: WBNB and USDT). */
  queries: string[];
  /** Also take the chain's most boosted tokens (best effort: a failing boosts route is skipped). Default true. */
  boosts?: boolean;
}

/**
 * "The most active tokens of a chain": DexScreener has no per-chain ranking, so search the chain's wrapped native
 * and main stablecoin (each search spans every chain), keep the chain's pairs, add the chain's most boosted tokens
 * (resolved through `/tokens/v1`), deduplicate by base token and rank by the 24h volume of each token's market.
 * Every token whose market is known is returned, most traded first; the caller filters and cuts.
 */
export async function mostActiveTokens(
  client: UpstreamClient,
  chainId: string,
  options: MostActiveOptions,
): Promise<TokenMarket[]> {
  const [searches, boosted] = await Promise.all([
    Promise.all(options.queries.map((q) => searchPairs(client, q))),
    options.boosts === false ? Promise.resolve([]) : topBoostedTokens(client, chainId).catch(() => [] as string[]),
  ]);
  const pairs = searches.flat().filter((p) => p.chainId === chainId);
  const seen = new Set(pairs.map((p) => p.baseToken.address.toLowerCase()));
  const unseen = boosted.filter((a) => !seen.has(a.toLowerCase()));
  const extra = unseen.length > 0 ? await pairsOfTokens(client, chainId, unseen).catch(() => [] as DexPair[]) : [];
  const all = dedupePairs([...pairs, ...extra]);
  const bases = new Map<string, string>();
  for (const p of all) bases.set(p.baseToken.address.toLowerCase(), p.baseToken.address);
  const markets = [...bases.values()]
    .map((address) => tokenMarket(chainId, address, all))
    .filter((m): m is TokenMarket => m !== null);
  return markets.sort((a, b) => (b.volumeH24 ?? -1) - (a.volumeH24 ?? -1));
}

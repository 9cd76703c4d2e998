/**
 * POST /altchain-radar: the second chain's (ToolDeps.altchainId, BNB Smart Chain by default) most active community
 * tokens and tokenized assets, ranked by 24h volume; or one token by `address`. Stablecoins and wrapped natives are
 * left out unless `includeStables` (told apart by `classifyToken` in ../upstream/market-data/known-tokens.ts;
 * docs/api.md, "Market tools and their sources").
 */
import { type ToolOutput, usdCompactText, usdPriceText } from "@agent-tools/schema";
import { ServiceError, uncharged } from "../errors/service-error.js";
import { countWork } from "../metering/work-meter.js";
import { chainProfile, classifyToken, type TokenClass } from "../upstream/market-data/known-tokens.js";
import { marketOfToken, mostActiveTokens, type TokenMarket } from "../upstream/market-data/pairs.js";
import { move, riskSentence } from "./market-format.js";
import { assessRisk, type Risk } from "./risk.js";
import type { Tool, ToolDeps } from "./types.js";
import { count, plural, shortAddress } from "./wording.js";

type RadarToken = ToolOutput<"altchainRadar">["tokens"][number];

interface Entry {
  market: TokenMarket;
  class: TokenClass;
  token: RadarToken;
}

const isStableOrNative = (c: TokenClass) => c.kind === "stablecoin" || c.kind === "wrapped_native";

function riskOf(market: TokenMarket, tokenClass: TokenClass, now: number): Risk {
  const risk = assessRisk(market, now);
  if (tokenClass.kind !== "impostor") return risk;
  const real = tokenClass.imitates;
  return {
    ...risk,
    level: "high",
    flags: [
      `impostor: copies the symbol ${real.symbol} of ${real.name}, whose real address is ${real.address}`,
      ...risk.flags,
    ],
  };
}

function entryOf(chainId: string, market: TokenMarket, now: number): Entry {
  const tokenClass = classifyToken(chainId, market);
  return {
    market,
    class: tokenClass,
    token: {
      address: market.address,
      symbol: market.symbol,
      name: market.name,
      priceUsd: market.priceUsd,
      volume24hUsd: market.volumeH24,
      liquidityUsd: market.liquidityUsd,
      marketCapUsd: market.marketCap,
      priceChange24h: market.priceChangeH24,
      txns24: market.txns24,
      risk: riskOf(market, tokenClass, now),
      url: market.url ?? `https://dexscreener.com/${chainId}/${market.address.toLowerCase()}`,
    },
  };
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                  Briefs                                                      */
/* ----------------------------------------------------------------------------------------------------------- */

/** "$9.85M traded on $412k of liquidity, +2,150.4% in 24h". */
function figures(t: RadarToken): string {
  const volume = t.volume24hUsd !== null ? `${usdCompactText(t.volume24hUsd)} traded` : "unknown volume";
  const liquidity =
    t.liquidityUsd !== null ? `on ${usdCompactText(t.liquidityUsd)} of liquidity` : "on unknown liquidity";
  const change = t.priceChange24h !== null ? `, ${move(t.priceChange24h)} in 24h` : "";
  return `${volume} ${liquidity}${change}`;
}

function impostorSentence(entries: Entry[]): string | undefined {
  const impostors = entries.filter((e) => e.class.kind === "impostor");
  if (impostors.length === 0) return undefined;
  const named = impostors.map((e) => {
    const real = (e.class as Extract<TokenClass, { kind: "impostor" }>).imitates;
    const at = e.token.priceUsd !== null ? ` (trading at ${usdPriceText(e.token.priceUsd)})` : "";
    return `"${e.token.symbol}" at ${shortAddress(e.token.address)}${at} is not ${real.name} (${shortAddress(real.address)})`;
  });
  return `Beware: ${named.join("; ")}.`;
}

function scanBrief(
  chainName: string,
  shown: Entry[],
  ranked: number,
  left: { count: number; symbols: string[] } | null,
): string {
  if (shown.length === 0) {
    return `The market-data aggregator lists no active token on ${chainName} right now.`;
  }
  const which = left
    ? left.count > 0
      ? `; ${plural(left.count, "stablecoin or wrapped native", "stablecoins and wrapped natives")} left out (${left.symbols.join(", ")}; set includeStables to add them)`
      : ""
    : "; stablecoins and wrapped natives included";
  const sentences = [
    `The ${plural(shown.length, "most active token")} on ${chainName} by 24h volume, of ${count(ranked)} found${which}.`,
  ];
  const [leader] = shown;
  if (leader) {
    sentences.push(`Leader: ${leader.token.name} (${leader.token.symbol}), ${figures(leader.token)}.`);
  }
  const total = shown.reduce((sum, e) => sum + (e.token.volume24hUsd ?? 0), 0);
  if (shown.length > 1) sentences.push(`Together they traded ${usdCompactText(total)} in 24h.`);
  const risk = riskSentence(shown.map((e) => ({ symbol: e.token.symbol, risk: e.token.risk })));
  if (risk) sentences.push(risk);
  const beware = impostorSentence(shown);
  if (beware) sentences.push(beware);
  return sentences.join(" ");
}

/** 404 `market_not_found`: no pair on the chain has the address as its base token. */
function noMarket(chainName: string, address: string): ServiceError {
  return new ServiceError(
    "market_not_found",
    uncharged(
      `No pair on ${chainName} has ${address} as its base token: the market-data aggregator knows no market for it.`,
      "check the address and the chain",
    ),
    [{ field: "address", message: `no market on ${chainName}` }],
  );
}

function inspectBrief(chainName: string, entry: Entry): string {
  const t = entry.token;
  const at = t.priceUsd !== null ? ` at ${usdPriceText(t.priceUsd)}` : " without a USD price";
  const change = t.priceChange24h !== null ? ` (${move(t.priceChange24h)} in 24h)` : "";
  const volume = t.volume24hUsd !== null ? `${usdCompactText(t.volume24hUsd)} traded in 24h` : "24h volume unknown";
  const trades = t.txns24 !== null ? ` in ${plural(t.txns24, "trade")}` : "";
  const liquidity =
    t.liquidityUsd !== null ? ` on ${usdCompactText(t.liquidityUsd)} of liquidity` : " on unknown liquidity";
  const cap = t.marketCapUsd !== null ? `; market cap ${usdCompactText(t.marketCapUsd)}` : "";
  const sentences = [
    `${t.name} (${t.symbol}) on ${chainName} trades${at}${change}: ${volume}${trades}${liquidity}${cap}.`,
  ];
  if (entry.class.kind === "stablecoin" || entry.class.kind === "wrapped_native") {
    const what = entry.class.kind === "stablecoin" ? "a stablecoin" : "a wrapped native";
    sentences.push(
      `It is ${what}${entry.class.listed ? "" : " by its symbol"}, which the radar's scan leaves out unless includeStables.`,
    );
  }
  sentences.push(`Risk ${t.risk.level}: ${t.risk.flags.length > 0 ? t.risk.flags.join("; ") : "no warning signs"}.`);
  return sentences.join(" ");
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                   Tool                                                       */
/* ----------------------------------------------------------------------------------------------------------- */

/** POST /altchain-radar: the second chain's most active tokens by 24h volume, or one token by `address`. */
export function createAltchainRadarTool(deps: ToolDeps): Tool<"altchainRadar"> {
  return async (params, context) => {
    const now = context.now();
    const chainId = deps.altchainId;
    const profile = chainProfile(chainId);
    const chainName = profile.name === chainId ? chainId : `${profile.name} (${chainId})`;
    const answer = (tokens: RadarToken[], brief: string) => ({
      generatedAt: now.toISOString(),
      count: tokens.length,
      tokens,
      brief,
      ...(context.caller ? { caller: context.caller } : {}),
      clearance: context.token.clearance,
    });

    if (params.address !== undefined) {
      const market = await marketOfToken(deps.marketData, chainId, params.address);
      // No market, nothing to answer with: nothing is charged (docs/decisions.md, "Only answers are paid").
      if (!market) throw noMarket(chainName, params.address);
      countWork("itemsExamined");
      const entry = entryOf(chainId, market, now.getTime());
      return answer([entry.token], inspectBrief(chainName, entry));
    }

    const markets = await mostActiveTokens(deps.marketData, chainId, { queries: profile.activityQueries });
    countWork("itemsExamined", markets.length);
    const entries = markets.map((m) => entryOf(chainId, m, now.getTime()));
    const kept = params.includeStables ? entries : entries.filter((e) => !isStableOrNative(e.class));
    const leftOut = entries.filter((e) => isStableOrNative(e.class)).map((e) => e.token.symbol);
    const shown = kept.slice(0, params.limit);
    const left = params.includeStables ? null : { count: leftOut.length, symbols: leftOut };
    return answer(
      shown.map((e) => e.token),
      scanBrief(chainName, shown, kept.length, left),
    );
  };
}

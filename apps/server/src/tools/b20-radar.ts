/**
 * POST /b20-radar: the B20 chain's (Base's) native tokens. Without `address`, the tokens the factory created in the
 * last `blocksBack` blocks (newest first, up to `limit`) with supply, initialization and market data; with `address`,
 * one token (docs/api.md, "Market tools and their sources").
 */
import { B20_FACTORY_ADDRESS, isB20Address } from "@agent-tools/contracts";
import { type ToolOutput, usdCompactText, usdPriceText } from "@agent-tools/schema";
import type { Address } from "viem";
import type { B20Scan, B20TokenRecord } from "../chain/b20-scanner.js";
import { ServiceError, uncharged } from "../errors/service-error.js";
import { countWork } from "../metering/work-meter.js";
import { marketOfToken, marketsOfTokens, type TokenMarket } from "../upstream/market-data/pairs.js";
import { blockSpan, move, riskSentence } from "./market-format.js";
import { assessRisk, type Risk } from "./risk.js";
import type { Tool, ToolDeps } from "./types.js";
import { count, listOf, plural, someOf } from "./wording.js";

/** Seconds between blocks of the B20 chain (Base), for saying how long a block window is. */
export const B20_BLOCK_SECONDS = 2;

type B20Output = ToolOutput<"b20Radar">;
type B20Token = B20Output["tokens"][number];
type Market = B20Token["market"];

/** The risk of a token that has no trading pair: it cannot be priced or sold. */
export const NO_MARKET_RISK: Risk = {
  level: "high",
  volToLiq: null,
  flags: ["no market: no trading pair found"],
};

function marketObject(market: TokenMarket | null, now: number): Market {
  if (!market) {
    return {
      priceUsd: null,
      volumeH24: null,
      liquidityUsd: null,
      priceChangeH24: null,
      txns24: null,
      marketCap: null,
      risk: { ...NO_MARKET_RISK, flags: [...NO_MARKET_RISK.flags] },
      url: null,
    };
  }
  return {
    priceUsd: market.priceUsd,
    volumeH24: market.volumeH24,
    liquidityUsd: market.liquidityUsd,
    priceChangeH24: market.priceChangeH24,
    txns24: market.txns24,
    marketCap: market.marketCap,
    risk: assessRisk(market, now),
    url: market.url,
  };
}

function tokenObject(record: B20TokenRecord, market: TokenMarket | null, now: number): B20Token {
  return {
    address: record.address,
    variant: record.variant,
    name: record.name,
    symbol: record.symbol,
    decimals: record.decimals,
    totalSupply: (record.totalSupply ?? 0n).toString(),
    currency: record.currency,
    initialized: record.initialized ?? false,
    market: marketObject(market, now),
  };
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                  Briefs                                                      */
/* ----------------------------------------------------------------------------------------------------------- */

/** A token of the answer with the market it came from (null: no trading pair). */
interface Entry {
  record: B20TokenRecord;
  market: TokenMarket | null;
  token: B20Token;
}

/** "9 assets and 3 stablecoins (USD, EUR, JPY)". */
function variantsPhrase(records: readonly B20TokenRecord[]): string {
  const byVariant = new Map<string, B20TokenRecord[]>();
  for (const r of records) byVariant.set(r.variant, [...(byVariant.get(r.variant) ?? []), r]);
  const parts: string[] = [];
  for (const [variant, list] of byVariant) {
    if (variant === "ASSET") parts.push(plural(list.length, "asset"));
    else if (variant === "STABLECOIN") {
      const currencies = [...new Set(list.map((r) => r.currency).filter(Boolean))];
      parts.push(`${plural(list.length, "stablecoin")}${currencies.length > 0 ? ` (${currencies.join(", ")})` : ""}`);
    } else parts.push(`${count(list.length)} of variant ${variant}`);
  }
  return listOf(parts);
}

/** "$1.92M traded in 24h on $88k of liquidity (+1,240.5%)". */
function tradeFigures(m: TokenMarket): string {
  const volume = m.volumeH24 !== null ? `${usdCompactText(m.volumeH24)} traded in 24h` : "no 24h volume known";
  const liquidity =
    m.liquidityUsd !== null ? `on ${usdCompactText(m.liquidityUsd)} of liquidity` : "on unknown liquidity";
  const change = m.priceChangeH24 !== null ? ` (${move(m.priceChangeH24)})` : "";
  return `${volume} ${liquidity}${change}`;
}

function scanBrief(scan: B20Scan, blocksBack: number, entries: Entry[]): string {
  const window =
    `the last ${count(blocksBack)} blocks (${blockSpan(blocksBack, B20_BLOCK_SECONDS)}, ` +
    `blocks ${count(scan.fromBlock)}–${count(scan.toBlock)})`;
  const detected = scan.created.length;
  if (detected === 0) {
    return `No B20 token was created in ${window}. Widen blocksBack (up to 604,800 blocks, ~14 days) to look further back.`;
  }
  const sentences = [`${plural(detected, "new B20 token")} in ${window}: ${variantsPhrase(scan.created)}.`];
  if (entries.length < detected) sentences.push(`Showing the newest ${count(entries.length)}.`);
  const traded = entries
    .filter((e): e is Entry & { market: TokenMarket } => e.market?.volumeH24 != null)
    .sort((a, b) => b.market.volumeH24! - a.market.volumeH24!);
  const top = traded[0];
  if (top) sentences.push(`Most traded: ${top.token.name} (${top.token.symbol}), ${tradeFigures(top.market)}.`);
  const listed = entries.filter((e) => e.market !== null);
  const risk = riskSentence(listed.map((e) => ({ symbol: e.token.symbol, risk: e.token.market.risk! })));
  if (risk) sentences.push(risk);
  const unlisted = entries.filter((e) => e.market === null).map((e) => e.token.symbol);
  if (unlisted.length === 1 && entries.length === 1) sentences.push("It has no trading pair yet.");
  else if (unlisted.length > 0 && listed.length === 0) sentences.push("None of them has a trading pair yet.");
  else if (unlisted.length > 0) {
    sentences.push(`${count(unlisted.length)} without a trading pair yet: ${someOf(unlisted)}.`);
  }
  return sentences.join(" ");
}

function inspectBrief(entry: Entry): string {
  const { record, token, market } = entry;
  const kind =
    token.variant === "ASSET"
      ? "a B20 asset"
      : token.variant === "STABLECOIN"
        ? `a B20 ${token.currency ? `${token.currency} ` : ""}stablecoin`
        : `a B20 token of variant ${token.variant}`;
  const whole = Number(BigInt(token.totalSupply) / 10n ** BigInt(token.decimals));
  const supply = whole.toLocaleString("en-US", { notation: "compact", maximumFractionDigits: 2 });
  const created = record.blockNumber > 0n ? ` created in block ${count(record.blockNumber)}` : "";
  const sentences = [
    `${token.name} (${token.symbol}) is ${kind}${created}: ${supply} ${token.symbol} in supply, ` +
      `${token.decimals} decimals${token.initialized ? "" : ", not initialized"}.`,
  ];
  if (!market) {
    sentences.push("It has no trading pair yet: no price, volume or liquidity.");
  } else {
    const at = market.priceUsd !== null ? `at ${usdPriceText(market.priceUsd)}` : "without a USD price";
    const change = market.priceChangeH24 !== null ? ` (${move(market.priceChangeH24)} in 24h)` : "";
    const volume =
      market.volumeH24 !== null ? `${usdCompactText(market.volumeH24)} traded in 24h` : "24h volume unknown";
    const trades = market.txns24 !== null ? ` in ${plural(market.txns24, "trade")}` : "";
    const liquidity =
      market.liquidityUsd !== null
        ? ` on ${usdCompactText(market.liquidityUsd)} of liquidity`
        : " on unknown liquidity";
    const cap = market.marketCap !== null ? `; market cap ${usdCompactText(market.marketCap)}` : "";
    sentences.push(`It trades ${at}${change}: ${volume}${trades}${liquidity}${cap}.`);
  }
  const risk = token.market.risk!;
  sentences.push(`Risk ${risk.level}: ${risk.flags.length > 0 ? risk.flags.join("; ") : "no warning signs"}.`);
  return sentences.join(" ");
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                   Tool                                                       */
/* ----------------------------------------------------------------------------------------------------------- */

function notB20(address: string, why: string): ServiceError {
  return new ServiceError("not_b20_address", uncharged(`${address} ${why}`), [{ field: "address", message: why }]);
}

/**
 * Checks the address form and that the factory created a token there; the token with its live reads. B20 token
 * addresses begin with the 10-byte prefix `0xB200000000000000000000` followed by the variant byte;
 * `0xB20f000000000000000000000000000000000000` (the "0xB20f" the B20 specification mentions) is the factory precompile
 * itself.
 */
async function inspectToken(deps: ToolDeps, address: string): Promise<B20TokenRecord> {
  if (!isB20Address(address)) {
    const why =
      address.toLowerCase() === B20_FACTORY_ADDRESS.toLowerCase()
        ? "is the B20 factory itself, not a token: B20 token addresses begin with 0xB200000000000000000000."
        : "is not a B20 token address: B20 token addresses begin with 0xB200000000000000000000 (then the variant byte).";
    throw notB20(address, why);
  }
  const record = await deps.b20.inspect(address as Address);
  if (!record) throw notB20(address, "has the B20 address form, but the B20 factory has not created a token there.");
  return record;
}

/** POST /b20-radar: new B20 tokens of the last `blocksBack` blocks, or one B20 token by `address`. */
export function createB20RadarTool(deps: ToolDeps): Tool<"b20Radar"> {
  return async (params, context) => {
    const now = context.now();
    const caller = context.caller ? { caller: context.caller } : {};

    if (params.address !== undefined) {
      const record = await inspectToken(deps, params.address);
      countWork("itemsExamined");
      const market = await marketOfToken(deps.marketData, deps.b20ChainId, record.address);
      const token = tokenObject(record, market, now.getTime());
      return {
        generatedAt: now.toISOString(),
        count: 1,
        detectedCount: 1,
        truncated: false,
        tokens: [token],
        brief: inspectBrief({ record, market, token }),
        ...caller,
      };
    }

    const scan = await deps.b20.scanCreated(params.blocksBack);
    // The blocks the answer covers and the tokens created in them, whichever of them were read before.
    countWork("blocksScanned", params.blocksBack);
    countWork("itemsExamined", scan.created.length);
    const shown = scan.created.slice(0, params.limit);
    const [read, markets] = await Promise.all([
      deps.b20.readTokens(shown),
      marketsOfTokens(
        deps.marketData,
        deps.b20ChainId,
        shown.map((t) => t.address),
      ),
    ]);
    const entries = read.map((record): Entry => {
      const market = markets.get(record.address.toLowerCase()) ?? null;
      return { record, market, token: tokenObject(record, market, now.getTime()) };
    });
    const tokens = entries.map((e) => e.token);
    return {
      generatedAt: now.toISOString(),
      count: tokens.length,
      detectedCount: scan.created.length,
      truncated: scan.created.length > tokens.length,
      fromBlock: scan.fromBlock.toString(),
      toBlock: scan.toBlock.toString(),
      blocksBack: params.blocksBack,
      tokens,
      brief: scanBrief(scan, params.blocksBack, entries),
      ...caller,
    };
  };
}

import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { ServiceError } from "../src/errors/service-error.js";
import { move, riskSentence } from "../src/tools/market-format.js";
import { classifyToken } from "../src/upstream/market-data/known-tokens.js";
import {
  type DexPair,
  dexPairListSchema,
  mostActiveTokens,
  pairsOfTokens,
  tokenMarket,
} from "../src/upstream/market-data/pairs.js";
import type { GetOptions, UpstreamClient } from "../src/upstream/upstream-client.js";

const A = "0x1111111111111111111111111111111111111111";
const B = "0x2222222222222222222222222222222222222222";
const WBNB = "0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c";

function pair(base: string, overrides: Partial<DexPair> = {}): DexPair {
  return {
    chainId: "bsc",
    pairAddress: `0x${Math.random().toString(16).slice(2).padEnd(40, "0").slice(0, 40)}`,
    baseToken: { address: base, name: "Token", symbol: "TKN" },
    quoteToken: { address: WBNB, name: "Wrapped BNB", symbol: "WBNB" },
    priceUsd: "1.5",
    volume: { h24: 1000 },
    liquidity: { usd: 50_000 },
    txns: { h24: { buys: 3, sells: 4 } },
    priceChange: { h24: 2 },
    ...overrides,
  };
}

/** An upstream client answering from a function of the path, recording the paths it was asked for. */
function fakeClient(answer: (path: string, query: GetOptions<z.ZodType>["query"]) => unknown) {
  const paths: string[] = [];
  const client: UpstreamClient = {
    requestCount: 0,
    async get(path, options) {
      paths.push(path);
      const body = answer(path, options.query);
      if (body instanceof Error) throw body;
      return options.schema.parse(body);
    },
  };
  return { client, paths };
}

describe("DexScreener shapes", () => {
  it("accept null and missing optional fields, and refuse a pair without its base token", () => {
    const sparse = {
      chainId: "bsc",
      pairAddress: "0xabc",
      baseToken: { address: A, name: null, symbol: "X" },
      priceUsd: null,
      liquidity: { base: 1, quote: 2 },
      priceChange: {},
      marketCap: null,
      info: { imageUrl: "x" },
    };
    expect(dexPairListSchema.safeParse([sparse]).success).toBe(true);
    expect(dexPairListSchema.safeParse([{ chainId: "bsc", pairAddress: "0xabc" }]).success).toBe(false);
  });

  it("make a market with nulls where the upstream has nothing, and a number from the price string", () => {
    const market = tokenMarket("bsc", A, [
      pair(A, { priceUsd: "0.00000041", volume: null, liquidity: null, txns: null, priceChange: {}, url: null }),
    ])!;
    expect(market).toMatchObject({
      priceUsd: 0.00000041,
      volumeH24: null,
      liquidityUsd: null,
      txns24: null,
      priceChangeH24: null,
      marketCap: null,
      url: null,
    });
  });

  it("take the figures from the deepest pair where the token is base, and the age from its oldest pair", () => {
    const pairs = [
      pair(A, { liquidity: { usd: 10_000 }, volume: { h24: 99 }, pairCreatedAt: 1_000 }),
      pair(A, { liquidity: { usd: 90_000 }, volume: { h24: 5 }, pairCreatedAt: 5_000 }),
      pair(B, { quoteToken: { address: A }, liquidity: { usd: 1_000_000 } }),
      pair(A, { chainId: "base", liquidity: { usd: 5_000_000 } }),
    ];
    expect(tokenMarket("bsc", A.toUpperCase().replace("0X", "0x"), pairs)).toMatchObject({
      liquidityUsd: 90_000,
      volumeH24: 5,
      txns24: 7,
      pairCreatedAt: 1_000,
      pairCount: 2,
    });
    expect(tokenMarket("bsc", WBNB, pairs)).toBeNull();
  });
});

describe("calls", () => {
  it("ask for at most 30 tokens a call, all calls at once", async () => {
    const addresses = Array.from({ length: 61 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
    const { client, paths } = fakeClient(() => []);
    await pairsOfTokens(client, "base", [...addresses, addresses[0]!.toUpperCase().replace("0X", "0x")]);
    expect(paths.map((p) => p.split("/").at(-1)!.split(",").length)).toEqual([30, 30, 1]);
    expect(paths.every((p) => p.startsWith("/tokens/v1/base/"))).toBe(true);
  });

  it("rank the chain's tokens by 24h volume from the searches, and skip a failing boosts route", async () => {
    const { client, paths } = fakeClient((path, query) => {
      if (path === "/token-boosts/top/v1") return new ServiceError("upstream_unavailable", "rate limited");
      if (query?.q === "WBNB") {
        return {
          pairs: [
            pair(A, { volume: { h24: 10 } }),
            pair(WBNB, { volume: { h24: 500 } }),
            pair(B, { chainId: "base", volume: { h24: 9_999 } }),
          ],
        };
      }
      return { schemaVersion: "1.0.0", pairs: [pair(B, { volume: { h24: 50 } }), pair(A, { volume: { h24: 1 } })] };
    });
    const ranked = await mostActiveTokens(client, "bsc", { queries: ["WBNB", "USDT"] });
    expect(ranked.map((m) => [m.address, m.volumeH24])).toEqual([
      [WBNB, 500],
      [B, 50],
      [A, 10],
    ]);
    expect(paths.filter((p) => p.startsWith("/tokens/v1"))).toEqual([]);
  });

  it("resolve boosted tokens the searches did not find", async () => {
    const { client, paths } = fakeClient((path) => {
      if (path === "/token-boosts/top/v1") {
        return [
          { chainId: "bsc", tokenAddress: B, amount: 1, totalAmount: 1 },
          { chainId: "solana", tokenAddress: "So1ana", amount: 1, totalAmount: 1 },
        ];
      }
      if (path.startsWith("/tokens/v1/")) return [pair(B, { volume: { h24: 77 } })];
      return { pairs: [pair(A)] };
    });
    const ranked = await mostActiveTokens(client, "bsc", { queries: ["WBNB"] });
    expect(ranked.map((m) => m.address)).toEqual([A, B]);
    expect(paths).toContain(`/tokens/v1/bsc/${B}`);
  });
});

describe("stablecoins and wrapped natives", () => {
  it("are known by address; a copy of a known symbol is an impostor; unknown ones go by symbol and price", () => {
    expect(
      classifyToken("bsc", { address: "0x55d398326f99059ff775485246999027b3197955", symbol: "USDT", priceUsd: 1 }),
    ).toMatchObject({ kind: "stablecoin", listed: true });
    expect(classifyToken("bsc", { address: WBNB, symbol: "WBNB", priceUsd: 600 }).kind).toBe("wrapped_native");
    const copy = classifyToken("bsc", { address: A, symbol: "usdt", priceUsd: 1 });
    expect(copy).toMatchObject({ kind: "impostor", imitates: { symbol: "USDT" } });
    expect(classifyToken("bsc", { address: A, symbol: "USDe", priceUsd: 0.999 }).kind).toBe("stablecoin");
    expect(classifyToken("bsc", { address: A, symbol: "USDe", priceUsd: 0.01 }).kind).toBe("token");
    expect(classifyToken("solana", { address: "x", symbol: "USDT", priceUsd: 0.0004 }).kind).toBe("token");
    expect(classifyToken("solana", { address: "x", symbol: "WSOL", priceUsd: 150 }).kind).toBe("wrapped_native");
    expect(classifyToken("bsc", { address: A, symbol: "PFROG", priceUsd: 0.0004 }).kind).toBe("token");
  });
});

describe("brief wording", () => {
  it("writes moves the way people read them", () => {
    expect([move(1240.5), move(-96.1), move(0.01), move(0)]).toEqual(["+1,240.5%", "-96.1%", "+0.01%", "0%"]);
  });

  it("names the high-risk tokens with their most telling reasons", () => {
    const high = (...flags: string[]) => ({ level: "high" as const, volToLiq: null, flags });
    const sentence = riskSentence([
      { symbol: "NEW", risk: high("trading for less than a day (2 h)") },
      { symbol: "HOT", risk: high("24h volume is 12.0x liquidity", "trading for less than a day (3 h)") },
      { symbol: "THIN", risk: high("thin liquidity ($2k)", "24h volume is 51.0x liquidity") },
      { symbol: "FAKE", risk: high("impostor: copies the symbol USDT", "thin liquidity ($900)") },
      { symbol: "OK", risk: { level: "low", volToLiq: 1, flags: [] } },
    ]);
    expect(sentence).toBe(
      "Risk: 4 high (FAKE: impostor: copies the symbol USDT; THIN: thin liquidity ($2k); HOT: 24h volume is 12.0x liquidity; 1 more) and 1 low.",
    );
  });
});

import { B20_SCHEDULE } from "@agent-tools/devnet";
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createMarketDataSim,
  type DexPairWire,
  MARKET_DATA_FACTS,
  MARKET_THRESHOLDS,
  type MarketDataSim,
} from "../src/index.js";
import {
  boostSchema,
  pairsResponseSchema,
  profileSchema,
  searchResponseSchema,
  tokensResponseSchema,
} from "./dexscreener-schema.js";
import { getJson } from "./helpers.js";
import { compileSchema, type Validator } from "./openapi-validator.js";

const facts = MARKET_DATA_FACTS;
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function expectValid(validator: Validator, body: unknown): void {
  const ok = validator(body);
  expect(ok ? [] : validator.errors).toEqual([]);
}

describe("market-data simulator (DexScreener)", () => {
  let sim: MarketDataSim;
  const get = <T>(path: string) => getJson<T>(`${sim.url}${path}`, {});
  const validTokens = compileSchema(tokensResponseSchema);
  const validSearch = compileSchema(searchResponseSchema);
  const validPairs = compileSchema(pairsResponseSchema);
  const validBoosts = compileSchema({ type: "array", items: boostSchema });
  const validProfiles = compileSchema({ type: "array", items: profileSchema });

  /** Pairs of every B20 token, fetched as a client must: at most 30 addresses per call. */
  async function b20Pairs(): Promise<DexPairWire[]> {
    const addresses = B20_SCHEDULE.map((t) => t.address);
    const out: DexPairWire[] = [];
    for (let i = 0; i < addresses.length; i += 30) {
      const res = await get<DexPairWire[]>(`/tokens/v1/base/${addresses.slice(i, i + 30).join(",")}`);
      expect(res.status).toBe(200);
      expectValid(validTokens, res.body);
      out.push(...res.body);
    }
    return out;
  }
  const pairsOf = (pairs: DexPairWire[], address: string) => pairs.filter((p) => same(p.baseToken.address, address));
  const main = (pairs: DexPairWire[], address: string) =>
    pairsOf(pairs, address).sort((a, b) => (b.liquidity?.usd ?? 0) - (a.liquidity?.usd ?? 0))[0];

  beforeAll(async () => {
    sim = await createMarketDataSim();
  });
  afterAll(async () => {
    await sim.close();
  });

  it("serves DexScreener's public API without a key, on 127.0.0.1", async () => {
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await get("/latest/dex/search?q=WETH")).status).toBe(200);
    expect((await get("/no/such/route")).status).toBe(404);
  });

  describe("B20 tokens on base", () => {
    it("/tokens/v1/base/{addresses}: the devnet's 40 B20 tokens in two calls of at most 30", async () => {
      const pairs = await b20Pairs();
      expect(B20_SCHEDULE).toHaveLength(40);
      for (const address of facts.b20.withMarket) expect(pairsOf(pairs, address).length, address).toBeGreaterThan(0);
      for (const address of facts.b20.withoutMarket) expect(pairsOf(pairs, address)).toEqual([]);
      expect(facts.b20.withMarket.length + facts.b20.withoutMarket.length).toBe(40);
      for (const p of pairs) {
        expect(p.chainId).toBe("base");
        expect(p.baseToken.address).toBe(getAddress(p.baseToken.address)); // EIP-55, whatever case was asked
        const scheduled = B20_SCHEDULE.find((t) => same(t.address, p.baseToken.address))!;
        expect(p.baseToken.symbol).toBe(scheduled.symbol);
        expect(p.baseToken.name).toBe(scheduled.name);
      }
      expect(
        (await get<DexPairWire[]>(`/tokens/v1/base/${B20_SCHEDULE[0]!.address.toUpperCase().replace("0X", "0x")}`)).body
          .length,
      ).toBeGreaterThan(0);
    });

    it("refuses more than 30 addresses and answers [] for unknown ones", async () => {
      const addresses = B20_SCHEDULE.slice(0, 31).map((t) => t.address);
      expect((await get(`/tokens/v1/base/${addresses.join(",")}`)).status).toBe(400);
      expect((await get(`/tokens/v1/base/0x${"12".repeat(20)}`)).body).toEqual([]);
      expect((await get(`/tokens/v1/bsc/${B20_SCHEDULE[0]!.address}`)).body).toEqual([]);
    });

    it("has the market traps the facts name", async () => {
      const pairs = await b20Pairs();
      for (const address of facts.b20.withMarket) {
        const p = main(pairs, address)!;
        const liquidity = p.liquidity?.usd;
        const change = p.priceChange.h24;
        const thin = facts.b20.thinLiquidity.includes(address);
        if (liquidity !== undefined) {
          if (thin) expect(liquidity).toBeLessThanOrEqual(MARKET_THRESHOLDS.thinLiquidityMaxUsd);
          else expect(liquidity).toBeGreaterThanOrEqual(MARKET_THRESHOLDS.normalLiquidityMinUsd);
        }
        if (facts.b20.extremeMove.includes(address)) expect(Math.abs(change!)).toBeGreaterThanOrEqual(90);
        else if (change !== undefined) expect(Math.abs(change)).toBeLessThanOrEqual(40);
        expect(change === undefined).toBe(facts.b20.withoutH24Change.includes(address));
        expect(p.priceUsd === undefined).toBe(facts.b20.noUsdPrice.includes(address));
        expect(p.marketCap === undefined).toBe(facts.b20.noMarketCap.includes(address));
      }
      for (const address of facts.b20.noUsdPrice) {
        const p = main(pairs, address)!;
        expect(p.liquidity).toBeDefined();
        expect(p.liquidity!.usd).toBeUndefined();
        expect(p.fdv).toBeUndefined();
      }
      for (const address of facts.b20.multiPair) expect(pairsOf(pairs, address).length).toBe(2);
      for (const t of B20_SCHEDULE.filter((x) => x.variant === "STABLECOIN" && x.currency === "USD")) {
        const p = main(pairs, t.address);
        if (!p) continue;
        const price = Number(p.priceUsd);
        if (facts.b20.depegged.some((a) => same(a, t.address))) expect(price).toBeLessThan(0.97);
        else expect(Math.abs(price - 1)).toBeLessThan(0.005);
      }
      expect(facts.b20.thinLiquidity.length).toBeGreaterThanOrEqual(2);
      expect(facts.b20.extremeMove.length).toBeGreaterThanOrEqual(2);
    });

    it("/token-pairs/v1/{chainId}/{tokenAddress}: the pools of one token, deepest first", async () => {
      const [address] = facts.b20.multiPair;
      const res = await get<DexPairWire[]>(`/token-pairs/v1/base/${address}`);
      expectValid(validTokens, res.body);
      expect(res.body).toHaveLength(2);
      expect(res.body[0]!.liquidity!.usd).toBeGreaterThan(res.body[1]!.liquidity!.usd!);
      // A quote token's pools include the pairs it quotes (at most 30).
      const weth = await get<DexPairWire[]>("/token-pairs/v1/base/0x4200000000000000000000000000000000000006");
      expect(weth.body.length).toBeGreaterThan(20);
      expect(weth.body.length).toBeLessThanOrEqual(30);
      expect(weth.body.some((p) => p.quoteToken.symbol === "WETH")).toBe(true);
    });
  });

  describe(`the second chain (${facts.altChainId})`, () => {
    it("has community tokens, tokenized assets, stablecoins and wrapped natives", async () => {
      expect(facts.altChainId).toBe("bsc");
      const groups = [facts.alt.community, facts.alt.tokenizedAssets, facts.alt.stablecoins, facts.alt.wrappedNatives];
      for (const g of groups) expect(g.length).toBeGreaterThanOrEqual(3);
      const all = groups.flat();
      const pairs: DexPairWire[] = [];
      for (let i = 0; i < all.length; i += 30) {
        const res = await get<DexPairWire[]>(`/tokens/v1/bsc/${all.slice(i, i + 30).join(",")}`);
        expectValid(validTokens, res.body);
        pairs.push(...res.body);
      }
      for (const address of all) expect(pairsOf(pairs, address).length, address).toBeGreaterThan(0);
      for (const address of facts.alt.stablecoins) {
        expect(Math.abs(Number(main(pairs, address)!.priceUsd) - 1)).toBeLessThan(0.01);
      }
      const [impostor] = facts.alt.impostors;
      const fake = main(pairs, impostor!)!;
      expect(fake.baseToken.symbol).toBe("USDT");
      expect(facts.alt.stablecoins).not.toContain(impostor);
      expect(Number(fake.priceUsd)).toBeLessThan(0.01);
      for (const address of facts.alt.thinLiquidity) {
        expect(main(pairs, address)!.liquidity!.usd).toBeLessThanOrEqual(MARKET_THRESHOLDS.thinLiquidityMaxUsd);
      }
      for (const address of facts.alt.extremeMove) {
        expect(Math.abs(main(pairs, address)!.priceChange.h24!)).toBeGreaterThanOrEqual(
          MARKET_THRESHOLDS.extremeMoveMinPct,
        );
      }
      for (const address of facts.alt.noMarketCap) {
        expect(main(pairs, address)!.marketCap).toBeUndefined();
        expect(main(pairs, address)!.fdv).toBeGreaterThan(0);
      }
      // Querying the wrapped native returns the pairs it quotes too: match on baseToken.
      const wbnb = await get<DexPairWire[]>(`/tokens/v1/bsc/${facts.alt.wrappedNative}`);
      expect(wbnb.body.some((p) => same(p.quoteToken.address, facts.alt.wrappedNative))).toBe(true);
    });

    it("/latest/dex/search: the most active pairs of the chain come from its native and stablecoin queries", async () => {
      const found = new Map<string, DexPairWire>();
      for (const q of facts.alt.mostActiveQueries) {
        const res = await get<{ schemaVersion: string; pairs: DexPairWire[] }>(`/latest/dex/search?q=${q}`);
        expectValid(validSearch, res.body);
        expect(res.body.pairs.length).toBeLessThanOrEqual(30);
        const volumes = res.body.pairs.map((p) => p.volume.h24);
        expect(volumes).toEqual([...volumes].sort((a, b) => b - a));
        for (const p of res.body.pairs.filter((x) => x.chainId === "bsc")) found.set(p.pairAddress, p);
      }
      const bases = new Set([...found.values()].map((p) => p.baseToken.address));
      for (const address of [
        ...facts.alt.community,
        ...facts.alt.tokenizedAssets,
        ...facts.alt.stablecoins,
        ...facts.alt.wrappedNatives,
      ]) {
        expect(bases.has(address), address).toBe(true);
      }
      const usdc = await get<{ pairs: DexPairWire[] }>("/latest/dex/search?q=USDC");
      expect(new Set(usdc.body.pairs.map((p) => p.chainId))).toEqual(new Set(["base", "bsc"]));
      const two = await get<{ pairs: DexPairWire[] }>("/latest/dex/search?q=PFROG/USDT");
      expect(two.body.pairs).toHaveLength(1);
      expect((await get("/latest/dex/search")).status).toBe(400);
      expect((await get<{ pairs: DexPairWire[] }>("/latest/dex/search?q=zzzzzz")).body.pairs).toEqual([]);
    });

    it("/latest/dex/pairs, /token-boosts/top/v1, /token-boosts/latest/v1, /token-profiles/latest/v1", async () => {
      const some = (await get<DexPairWire[]>(`/tokens/v1/bsc/${facts.alt.community[0]}`)).body[0]!;
      const pairs = await get<{ pairs: DexPairWire[] | null }>(`/latest/dex/pairs/bsc/${some.pairAddress}`);
      expectValid(validPairs, pairs.body);
      expect(pairs.body.pairs).toEqual([some]);
      expect((await get<{ pairs: null }>(`/latest/dex/pairs/bsc/0x${"34".repeat(20)}`)).body.pairs).toBeNull();
      for (const path of ["/token-boosts/top/v1", "/token-boosts/latest/v1"]) {
        const res = await get<{ chainId: string; totalAmount: number }[]>(path);
        expectValid(validBoosts, res.body);
        expect(new Set(res.body.map((b) => b.chainId)).has("bsc")).toBe(true);
        expect(new Set(res.body.map((b) => b.chainId)).has("solana")).toBe(true);
      }
      const top = (await get<{ totalAmount: number }[]>("/token-boosts/top/v1")).body.map((b) => b.totalAmount);
      expect(top).toEqual([...top].sort((a, b) => b - a));
      expectValid(validProfiles, (await get("/token-profiles/latest/v1")).body);
    });
  });

  it("carries every field the service reads, with DexScreener's types", async () => {
    const tokens = facts.alt.community.slice(0, 5);
    const res = await get<DexPairWire[]>(`/tokens/v1/bsc/${tokens.join(",")}`);
    expect(res.body.length).toBeGreaterThan(tokens.length); // a token can have several pairs
    for (const p of tokens.map((t) => main(res.body, t)!)) {
      expect(typeof p.priceUsd).toBe("string");
      expect(typeof p.volume.h24).toBe("number");
      expect(typeof p.liquidity?.usd).toBe("number");
      expect(typeof p.priceChange.h24).toBe("number");
      expect(Number.isInteger(p.txns.h24.buys) && Number.isInteger(p.txns.h24.sells)).toBe(true);
      expect(typeof p.fdv).toBe("number");
      expect(p.url).toBe(`https://dexscreener.com/bsc/${p.pairAddress.toLowerCase()}`);
      expect(Object.keys(p.baseToken).sort()).toEqual(["address", "name", "symbol"]);
      expect(p.pairCreatedAt).toBeLessThan(Date.now());
    }
  });

  it("lays pair ages out relative to its clock", async () => {
    const at = Date.parse("2030-01-02T03:04:00Z");
    const shifted = await createMarketDataSim({ now: () => at });
    try {
      const [address] = facts.b20.withoutH24Change;
      const res = await getJson<DexPairWire[]>(`${shifted.url}/tokens/v1/base/${address}`, {});
      const age = at - res.body[0]!.pairCreatedAt;
      expect(age).toBeGreaterThan(0);
      expect(age).toBeLessThan(86_400_000);
    } finally {
      await shifted.close();
    }
  });
});

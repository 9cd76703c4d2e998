import { altchainRadarResponseSchema, errorBodySchema } from "@agent-tools/schema";
import { type DexPairWire, type Fault, MARKET_DATA_FACTS } from "@agent-tools/upstream-sim";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { getAddress } from "viem";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { classifyToken } from "../src/upstream/market-data/known-tokens.js";
import { type PaidTestServer, startPaidTestServer, TIMEOUT_CASE_UPSTREAM_MS } from "./helpers/paid-server.js";

const PATH = "/altchain-radar";
const ALT = MARKET_DATA_FACTS.alt;
const REAL_USDT = "0x55d398326f99059fF775485246999027B3197955";

let t: PaidTestServer;
/** An Elite token of a demo account, and that account. */
let elite: { tokenId: number; index: number };
/** A Holder-clearance token of a demo account, and that account. */
let holder: { tokenId: number; index: number };
const account = (index: number) => t.devnet.deployment.accounts[index]!.address;

function tokenWith(clearance: string): { tokenId: number; index: number } {
  for (let tokenId = 1; tokenId <= 6666; tokenId++) {
    const token = t.chain.collection.token(tokenId);
    if (token?.clearance !== clearance) continue;
    const index = t.devnet.deployment.accounts.findIndex((a) => a.address === token.owner);
    if (index > 0) return { tokenId, index };
  }
  throw new Error(`no ${clearance} token held by a demo account`);
}

beforeAll(async () => {
  t = await startPaidTestServer({ env: { UPSTREAM_TIMEOUT_MS: TIMEOUT_CASE_UPSTREAM_MS } });
  elite = tokenWith("Elite");
  holder = tokenWith("Holder");
}, 120_000);
afterAll(async () => {
  await t?.close();
});
afterEach(() => {
  t.sims.marketData.faults.clear();
});

/** A call signed in as the Elite token's holder (or anonymous): the challenge, then the paid retry. */
async function call(input: Record<string, unknown>, options: { anonymous?: boolean; method?: "GET" } = {}) {
  const payer = options.anonymous ? 3 : elite.index;
  const headers: Record<string, string> = options.anonymous
    ? {}
    : { "SIGN-IN-WITH-X": await t.signIn(elite.index, PATH) };
  const body = { tokenId: elite.tokenId, ...input };
  const { res, required, before } = await t.paidCall(
    { path: PATH, body, headers, method: options.method ?? "POST" },
    payer,
  );
  expect(required.accepts[0]!.amount).toBe(options.anonymous ? "1000000" : "10000");
  return { res, json: await res.json(), before, payer };
}

async function radar(input: Record<string, unknown>, options: { anonymous?: boolean; method?: "GET" } = {}) {
  const { res, json } = await call(input, options);
  expect(res.status, JSON.stringify(json)).toBe(200);
  expect(decodePaymentResponseHeader(res.headers.get("payment-response")!).success).toBe(true);
  return altchainRadarResponseSchema.parse(json);
}

/** Per base token of bsc, its deepest pair, most traded first: what the radar ranks. */
function expectedRanking(includeStables: boolean): DexPairWire[] {
  const deepest = new Map<string, DexPairWire>();
  for (const pair of t.sims.marketData.fixture().pairs.filter((p) => p.chainId === "bsc")) {
    const key = pair.baseToken.address.toLowerCase();
    const known = deepest.get(key);
    if (!known || (pair.liquidity?.usd ?? -1) > (known.liquidity?.usd ?? -1)) deepest.set(key, pair);
  }
  const excluded = new Set([...ALT.stablecoins, ...ALT.wrappedNatives]);
  return [...deepest.values()]
    .filter((p) => includeStables || !excluded.has(p.baseToken.address))
    .sort((a, b) => b.volume.h24 - a.volume.h24);
}

describe("upstream trouble costs nothing", () => {
  // First in the file: the scan's searches are not cached yet, so the faults reach the client.
  it("a 429 with Retry-After on the search: 503 upstream_unavailable with Retry-After, nothing settled", async () => {
    t.sims.marketData.faults.set("/latest/dex/search", { status: 429, retryAfterSeconds: 30 });
    const { res, json, before, payer } = await call({});
    expect(res.status).toBe(503);
    expect(errorBodySchema.parse(json).error.code).toBe("upstream_unavailable");
    expect(res.headers.get("retry-after")).toBe("30");
    expect(res.headers.get("payment-response")).toBeNull();
    expect(await t.balance(account(payer))).toBe(before);
    expect(t.sims.marketData.requests("/latest/dex/search").every((r) => r.status === 429)).toBe(true);
  });

  it("a search answer that is not JSON: 502 upstream_error, nothing settled; the same call works once it clears", async () => {
    t.sims.marketData.faults.set("/latest/dex/search", { malformed: true });
    const failed = await call({});
    expect(failed.res.status).toBe(502);
    expect(failed.json.error.code).toBe("upstream_error");
    expect(failed.res.headers.get("payment-response")).toBeNull();
    expect(await t.balance(account(failed.payer))).toBe(failed.before);

    t.sims.marketData.faults.clear();
    const body = await radar({});
    expect(body.count).toBe(15);
  });

  // One-token inspections of different tokens: each asks for a path the client has not cached.
  const cases: { name: string; fault: Fault; status: number; code: string; token: number }[] = [
    {
      name: "429 with Retry-After",
      fault: { status: 429, retryAfterSeconds: 45 },
      status: 503,
      code: "upstream_unavailable",
      token: 0,
    },
    { name: "500", fault: { status: 500 }, status: 502, code: "upstream_error", token: 1 },
    { name: "502 (an HTML page)", fault: { status: 502 }, status: 502, code: "upstream_error", token: 2 },
    { name: "a timeout", fault: { timeout: true }, status: 504, code: "upstream_timeout", token: 3 },
    {
      name: "a body that is not JSON",
      fault: { malformed: "invalid-json" },
      status: 502,
      code: "upstream_error",
      token: 4,
    },
    {
      name: "a body of the wrong shape",
      fault: { malformed: "wrong-shape" },
      status: 502,
      code: "upstream_error",
      token: 5,
    },
  ];
  it.each(cases)(
    "$name on the one-token route: $status $code, nothing settled; the same call works once it clears",
    async ({ fault, status, code, token }) => {
      const address = ALT.community[token]!;
      t.sims.marketData.faults.set("/token-pairs/v1/{chainId}/{tokenAddress}", fault);
      const { res, json, before, payer } = await call({ address });
      expect(res.status).toBe(status);
      expect(errorBodySchema.parse(json).error.code).toBe(code);
      if (fault.retryAfterSeconds) expect(res.headers.get("retry-after")).toBe(String(fault.retryAfterSeconds));
      expect(res.headers.get("payment-response")).toBeNull();
      expect(await t.balance(account(payer))).toBe(before);

      t.sims.marketData.faults.clear();
      const body = await radar({ address });
      expect(body.tokens.map((x) => x.address)).toEqual([address]);
    },
  );
});

describe("access and validation", () => {
  it("rejects unknown body properties and out-of-bounds limits with 400, before any challenge", async () => {
    for (const body of [
      { tokenId: elite.tokenId, chain: "bsc" },
      { tokenId: elite.tokenId, limit: 4 },
      { tokenId: elite.tokenId, limit: 31 },
      { tokenId: elite.tokenId, includeStables: "yes" },
    ]) {
      const res = await t.post(PATH, body);
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe("invalid_request");
    }
  });

  it("refuses a signed-in holder whose token lacks Elite clearance (403)", async () => {
    const res = await t.post(
      PATH,
      { tokenId: holder.tokenId },
      { "SIGN-IN-WITH-X": await t.signIn(holder.index, PATH) },
    );
    expect(res.status).toBe(403);
    const error = (await res.json()).error;
    expect(error.code).toBe("insufficient_clearance");
    expect(error.details[0].requiredClearance).toBe("Elite");
  });

  it("serves an anonymous caller at the standard price, echoing the named token's clearance", async () => {
    const body = await radar({ limit: 5 }, { anonymous: true });
    expect(body.caller).toBeUndefined();
    expect(body.clearance).toBe("Elite");
    expect(body.count).toBe(5);
  });
});

describe("most active tokens", () => {
  it("ranks community tokens and tokenized assets by 24h volume, stablecoins and wrapped natives left out", async () => {
    const body = await radar({});
    expect(body.count).toBe(15);
    expect(body.caller).toBe(account(elite.index));
    expect(body.clearance).toBe("Elite");
    const expected = expectedRanking(false).slice(0, 15);
    expect(body.tokens.map((x) => x.address)).toEqual(expected.map((p) => p.baseToken.address));
    for (const [i, token] of body.tokens.entries()) {
      const pair = expected[i]!;
      expect(token).toEqual({
        address: pair.baseToken.address,
        symbol: pair.baseToken.symbol,
        name: pair.baseToken.name,
        priceUsd: pair.priceUsd === undefined ? null : Number(pair.priceUsd),
        volume24hUsd: pair.volume.h24,
        liquidityUsd: pair.liquidity?.usd ?? null,
        marketCapUsd: pair.marketCap ?? null,
        priceChange24h: pair.priceChange.h24 ?? null,
        txns24: pair.txns.h24.buys + pair.txns.h24.sells,
        risk: expect.objectContaining({ level: expect.stringMatching(/^(low|elevated|high)$/) }),
        url: pair.url,
      });
      expect(token.address).toBe(getAddress(token.address));
    }
    const volumes = body.tokens.map((x) => x.volume24hUsd!);
    expect(volumes).toEqual([...volumes].sort((a, b) => b - a));
    const excluded = [...ALT.stablecoins, ...ALT.wrappedNatives];
    expect(body.tokens.filter((x) => excluded.includes(x.address))).toEqual([]);
    expect(body.tokens.some((x) => ALT.tokenizedAssets.includes(x.address))).toBe(true);
    expect(body.brief).toContain("on BNB Smart Chain (bsc) by 24h volume");
    expect(body.brief).toContain("6 stablecoins and wrapped natives left out");
    expect(body.brief).toContain("Leader: Pixel Frog (PFROG)");
  });

  it("includes stablecoins and wrapped natives on request, ranked with the rest; the impostor stays an ordinary token", async () => {
    const body = await radar({ includeStables: true, limit: 30 });
    const expected = expectedRanking(true);
    expect(body.count).toBe(Math.min(30, expected.length));
    expect(body.tokens.map((x) => x.address)).toEqual(expected.slice(0, 30).map((p) => p.baseToken.address));
    expect(body.tokens[0]!.address).toBe(REAL_USDT);
    for (const address of [...ALT.stablecoins, ...ALT.wrappedNatives]) {
      expect(body.tokens.map((x) => x.address)).toContain(address);
    }
    expect(body.brief).toContain("stablecoins and wrapped natives included");

    // The copy of USDT at another address: listed among ordinary tokens, high risk, the real address named.
    const [impostor] = ALT.impostors;
    const copy = body.tokens.find((x) => x.address === impostor)!;
    expect(copy.symbol).toBe("USDT");
    expect(copy.risk.level).toBe("high");
    expect(copy.risk.flags[0]).toContain(
      `impostor: copies the symbol USDT of Tether USD, whose real address is ${REAL_USDT}`,
    );
    expect(classifyToken("bsc", { address: impostor!, symbol: "USDT", priceUsd: 1 }).kind).toBe("impostor");
    const real = body.tokens.find((x) => x.address === REAL_USDT)!;
    expect(real.risk.flags.join(" ")).not.toContain("impostor");

    // Thin liquidity and extreme moves are flagged high.
    for (const address of ALT.thinLiquidity) {
      const token = body.tokens.find((x) => x.address === address)!;
      expect(token.risk.level).toBe("high");
      expect(token.risk.flags.join(" ")).toMatch(/thin liquidity/);
    }
    for (const address of ALT.extremeMove) {
      const token = body.tokens.find((x) => x.address === address)!;
      expect(token.risk.level).toBe("high");
      expect(token.risk.flags.join(" ")).toMatch(/extreme 24h move/);
    }
    // Deep, calm, old markets are low risk; tokens without market cap answer null.
    expect(body.tokens.find((x) => x.symbol === "TGOLD")!.risk).toEqual({ level: "low", volToLiq: 0.34, flags: [] });
    for (const address of ALT.noMarketCap) {
      expect(body.tokens.find((x) => x.address === address)!.marketCapUsd).toBeNull();
    }
  });

  it("takes its figures from a token's deepest pair (Pixel Frog trades on two)", async () => {
    const body = await radar({ limit: 5 });
    const frog = body.tokens.find((x) => x.symbol === "PFROG")!;
    expect(frog).toMatchObject({ volume24hUsd: 9_850_000, liquidityUsd: 412_000, priceChange24h: 2150.4 });
    expect(body.count).toBe(5);
  });

  it("answers the GET variant with the same fields", async () => {
    const body = await radar({ limit: 5, includeStables: true }, { method: "GET" });
    expect(body.count).toBe(5);
    expect(body.tokens[0]!.address).toBe(REAL_USDT);
  });

  it("reads the searches the documented recipe names, and caches them", async () => {
    const searches = t.sims.marketData.requests("/latest/dex/search").filter((r) => r.status === 200);
    expect(new Set(searches.map((r) => r.query.q))).toEqual(new Set(ALT.mostActiveQueries));
    await radar({ limit: 6 });
    const before = t.sims.marketData.requests().length;
    await radar({ limit: 7 });
    expect(t.sims.marketData.requests().length).toBe(before);
  });
});

describe("one token by address", () => {
  it("inspects a community token with the same fields", async () => {
    const [address] = ALT.extremeMove.filter((a) => !ALT.impostors.includes(a));
    const body = await radar({ address: address!.toLowerCase() });
    expect(body.count).toBe(1);
    expect(body.tokens[0]!.address).toBe(address);
    expect(body.tokens[0]!.risk.level).toBe("high");
    expect(body.clearance).toBe("Elite");
    expect(body.brief).toContain(`(${body.tokens[0]!.symbol}) on BNB Smart Chain (bsc) trades at`);
  });

  it("inspects a stablecoin even without includeStables, and says what it is", async () => {
    const body = await radar({ address: REAL_USDT });
    expect(body.tokens[0]).toMatchObject({ address: REAL_USDT, symbol: "USDT" });
    expect(body.brief).toContain("It is a stablecoin");
  });

  it("flags the impostor USDT", async () => {
    const body = await radar({ address: ALT.impostors[0] });
    expect(body.tokens[0]!.risk.level).toBe("high");
    expect(body.brief).toContain("impostor: copies the symbol USDT");
  });

  it("answers 404 market_not_found for an address without a market, and charges nothing", async () => {
    const { res, json, before, payer } = await call({ address: "0x000000000000000000000000000000000000dEaD" });
    expect(res.status).toBe(404);
    expect(res.headers.get("payment-response")).toBeNull();
    const { error } = errorBodySchema.parse(json);
    expect(error.code).toBe("market_not_found");
    expect(error.message).toMatch(
      /^No pair on BNB Smart Chain \(bsc\) has 0x0+dEaD as its base token: .* Nothing was charged; check the address and the chain\.$/,
    );
    expect(error.details).toEqual([{ field: "address", message: "no market on BNB Smart Chain (bsc)" }]);
    expect(await t.balance(account(payer))).toBe(before);
  });
});

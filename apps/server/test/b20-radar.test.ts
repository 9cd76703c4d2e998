import {
  B20_FACTORY_ADDRESS,
  B20_VARIANTS,
  b20FactoryAbi,
  b20TokenAbi,
  b20TokenAddress,
  b20TokenDeployedBytecode,
  computeB20Address,
  encodeAssetCreateParams,
} from "@agent-tools/contracts";
import { B20_SCHEDULE, b20ScheduleCountWithin } from "@agent-tools/devnet";
import { b20RadarResponseSchema, errorBodySchema } from "@agent-tools/schema";
import { type DexPairWire, type Fault, MARKET_DATA_FACTS } from "@agent-tools/upstream-sim";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { encodeFunctionData, getAddress, type PublicClient } from "viem";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createB20Scanner } from "../src/chain/b20-scanner.js";
import { type PaidTestServer, startPaidTestServer, TIMEOUT_CASE_UPSTREAM_MS } from "./helpers/paid-server.js";

/** Token 1 belongs to devnet account 1 (Holder clearance: enough for /b20-radar, discounted price). */
const HOLDER = 1;
const TOKEN_ID = 1;
const PATH = "/b20-radar";

let t: PaidTestServer;
const account = (index: number) => t.devnet.deployment.accounts[index]!.address;

beforeAll(async () => {
  t = await startPaidTestServer({ env: { UPSTREAM_TIMEOUT_MS: TIMEOUT_CASE_UPSTREAM_MS } });
}, 120_000);
afterAll(async () => {
  await t?.close();
});
afterEach(() => {
  t.sims.marketData.faults.clear();
});

/** POST (or GET) signed in as the holder: the challenge, then the paid retry. The 402 must come first. */
async function call(input: Record<string, unknown>, method: "POST" | "GET" = "POST") {
  const headers = { "SIGN-IN-WITH-X": await t.signIn(HOLDER, PATH) };
  const body = { tokenId: TOKEN_ID, ...input };
  const { res, required, before } = await t.paidCall({ path: PATH, body, headers, method }, HOLDER);
  expect(required.accepts[0]!.amount).toBe("10000");
  return { res, json: await res.json(), before };
}

async function scan(input: Record<string, unknown>) {
  const { res, json } = await call(input);
  expect(res.status, JSON.stringify(json)).toBe(200);
  expect(decodePaymentResponseHeader(res.headers.get("payment-response")!).success).toBe(true);
  return b20RadarResponseSchema.parse(json);
}

/** The schedule's tokens created within [from, to], newest first. */
function scheduled(from: string, to: string) {
  return B20_SCHEDULE.filter((s) => s.blockNumber >= Number(from) && s.blockNumber <= Number(to)).sort(
    (a, b) => b.blockNumber - a.blockNumber,
  );
}

/** The deepest pair of a token as base token, as the simulator answers right now. */
function deepestPair(address: string): DexPairWire | undefined {
  return t.sims.marketData
    .fixture()
    .pairs.filter((p) => p.chainId === "base" && p.baseToken.address.toLowerCase() === address.toLowerCase())
    .sort((a, b) => (b.liquidity?.usd ?? -1) - (a.liquidity?.usd ?? -1))[0];
}

const symbolOf = (symbol: string) => B20_SCHEDULE.find((s) => s.symbol === symbol)!;

describe("scan of recent deployments", () => {
  it("defaults to 302,400 blocks (~7 days) and answers every field of the schedule's tokens, newest first", async () => {
    const before = Date.now();
    const body = await scan({});
    expect(body.blocksBack).toBe(302_400);
    expect(BigInt(body.toBlock!) - BigInt(body.fromBlock!) + 1n).toBe(302_400n);
    expect(Number(body.toBlock)).toBeGreaterThanOrEqual(720_000);
    const expected = scheduled(body.fromBlock!, body.toBlock!);
    expect(body.detectedCount).toBe(expected.length);
    expect(body.detectedCount).toBe(b20ScheduleCountWithin(302_400));
    expect(body.count).toBe(Math.min(25, expected.length));
    expect(body.truncated).toBe(expected.length > 25);
    expect(body.tokens.map((x) => x.address)).toEqual(expected.slice(0, 25).map((s) => s.address));
    for (const [i, token] of body.tokens.entries()) {
      const s = expected[i]!;
      expect(token.address).toBe(getAddress(token.address));
      expect(token).toMatchObject({
        variant: s.variant,
        name: s.name,
        symbol: s.symbol,
        decimals: s.decimals,
        totalSupply: s.initialSupply.toString(),
        currency: s.currency ?? "",
        initialized: true,
      });
    }
    expect(body.caller).toBe(account(HOLDER));
    expect(body).not.toHaveProperty("clearance");
    // generatedAt is when the answer was made, at whole-millisecond precision.
    expect(Date.parse(body.generatedAt)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(body.generatedAt)).toBeLessThanOrEqual(Date.now());
    expect(body.brief).toContain(`${expected.length} new B20 tokens in the last 302,400 blocks (~7 days`);
  });

  // First to ask for more than 30 tokens: later scans of the same tokens are answered from the client's cache.
  it("asks the aggregator for at most 30 tokens a call, the calls in parallel", async () => {
    const before = t.sims.marketData.requests("/tokens/v1/{chainId}/{addresses}").length;
    const body = await scan({ blocksBack: 604_800, limit: 36 });
    expect(body.count).toBe(36);
    const calls = t.sims.marketData.requests("/tokens/v1/{chainId}/{addresses}").slice(before);
    expect(calls).toHaveLength(2);
    const sizes = calls.map((c) => c.path.split("/").at(-1)!.split(",").length).sort((a, b) => a - b);
    expect(sizes).toEqual([6, 30]);
    expect(calls.every((c) => c.path.startsWith("/tokens/v1/base/"))).toBe(true);
  });

  it.each([
    [1_000, 6],
    [302_400, 22],
    [604_800, 36],
  ])("counts the tokens of the last %i blocks against the schedule", async (blocksBack, inSchedule) => {
    const body = await scan({ blocksBack, limit: 100 });
    expect(b20ScheduleCountWithin(blocksBack)).toBe(inSchedule);
    const expected = scheduled(body.fromBlock!, body.toBlock!);
    expect(body.blocksBack).toBe(blocksBack);
    expect(BigInt(body.toBlock!) - BigInt(body.fromBlock!) + 1n).toBe(BigInt(blocksBack));
    // A few blocks were mined since seeding (each settled payment is one); no boundary token is that close.
    expect(body.detectedCount).toBe(inSchedule);
    expect(body.count).toBe(expected.length);
    expect(body.truncated).toBe(false);
    expect(body.tokens.map((x) => x.symbol)).toEqual(expected.map((s) => s.symbol));
  });

  it("cuts at limit, newest first, and says it truncated", async () => {
    const body = await scan({ blocksBack: 604_800, limit: 5 });
    expect(body.count).toBe(5);
    expect(body.detectedCount).toBe(36);
    expect(body.truncated).toBe(true);
    expect(body.tokens.map((x) => x.symbol)).toEqual(["NAUT", "MUSD", "CPHD", "TERN", "LSGD"]);
    expect(body.brief).toContain("36 new B20 tokens");
    expect(body.brief).toContain("Showing the newest 5.");
  });

  it("takes the smallest window (100 blocks): only what lies inside it", async () => {
    const body = await scan({ blocksBack: 100, limit: 1 });
    const expected = scheduled(body.fromBlock!, body.toBlock!);
    expect(body.detectedCount).toBe(expected.length);
    expect(body.count).toBe(Math.min(1, expected.length));
    expect(body.truncated).toBe(expected.length > 1);
  });

  it("gives each token its market from the deepest pair, and risk flags for thin and extreme markets", async () => {
    const body = await scan({ blocksBack: 604_800, limit: 100 });
    const bySymbol = new Map(body.tokens.map((x) => [x.symbol, x]));

    // Market figures: the deepest pair where the token is the base token (FUEL has a deep and a shallow pair).
    for (const token of body.tokens) {
      const pair = deepestPair(token.address);
      if (!pair) continue;
      expect(token.market).toMatchObject({
        priceUsd: pair.priceUsd === undefined ? null : Number(pair.priceUsd),
        volumeH24: pair.volume.h24,
        liquidityUsd: pair.liquidity?.usd ?? null,
        priceChangeH24: pair.priceChange.h24 ?? null,
        txns24: pair.txns.h24.buys + pair.txns.h24.sells,
        marketCap: pair.marketCap ?? null,
        url: pair.url,
      });
    }
    const fuel = bySymbol.get("FUEL")!;
    expect(MARKET_DATA_FACTS.b20.multiPair).toContain(fuel.address);
    expect(fuel.market.liquidityUsd).toBe(640_000);

    // Without a pair (created less than 300 blocks before the tip): nulls and a risk saying so.
    for (const address of MARKET_DATA_FACTS.b20.withoutMarket) {
      const token = body.tokens.find((x) => x.address === address)!;
      expect(token.market).toMatchObject({
        priceUsd: null,
        volumeH24: null,
        liquidityUsd: null,
        priceChangeH24: null,
        txns24: null,
        marketCap: null,
        url: null,
        risk: { level: "high", volToLiq: null },
      });
      expect(token.market.risk!.flags.join(" ")).toMatch(/no market/);
    }

    // Thin liquidity and extreme moves are high risk, with a flag a person can read.
    for (const address of MARKET_DATA_FACTS.b20.thinLiquidity) {
      const token = body.tokens.find((x) => x.address === address);
      if (!token) continue;
      expect(token.market.risk).toMatchObject({ level: "high" });
      expect(token.market.risk!.flags.join(" ")).toMatch(/thin liquidity/);
    }
    for (const address of MARKET_DATA_FACTS.b20.extremeMove) {
      const token = body.tokens.find((x) => x.address === address);
      if (!token) continue;
      expect(token.market.risk!.level).toBe("high");
      expect(token.market.risk!.flags.join(" ")).toMatch(/extreme 24h move/);
    }
    expect(bySymbol.get("WAVE")!.market.risk!.flags).toContain("extreme 24h move (+1240.5%)");
    const wave = bySymbol.get("WAVE")!.market;
    expect(wave.risk!.volToLiq).toBeCloseTo(wave.volumeH24! / wave.liquidityUsd!, 2);

    // No USD price and no USD liquidity; no market cap.
    const qry = bySymbol.get("QRY")!;
    expect(qry.market).toMatchObject({ priceUsd: null, liquidityUsd: null, marketCap: null });
    expect(qry.market.risk!.flags).toContain("no liquidity known");
    expect(bySymbol.get("DWOOD")!.market.marketCap).toBeNull();

    // A calm, deep market is low risk; a depegged stablecoin keeps its price.
    expect(bySymbol.get("RUSD")!.market.priceUsd).toBe(0.9612);
    expect(body.tokens.some((x) => x.market.risk!.level === "low")).toBe(true);

    // The brief names the most traded token with its figures.
    const top = [...body.tokens].sort((a, b) => (b.market.volumeH24 ?? -1) - (a.market.volumeH24 ?? -1))[0]!;
    expect(body.brief).toContain(`Most traded: ${top.name} (${top.symbol})`);
    expect(body.brief).toMatch(/Risk: \d+ high \(/);
    expect(body.brief).toContain("3 without a trading pair yet");
  });

  it("answers the GET variant with the same fields", async () => {
    const { res, json } = await call({ blocksBack: 1_000, limit: 3 }, "GET");
    expect(res.status).toBe(200);
    const body = b20RadarResponseSchema.parse(json);
    expect(body).toMatchObject({ blocksBack: 1_000, count: 3, detectedCount: 6, truncated: true });
  });

  it("rejects out-of-bounds blocksBack and limit before any challenge", async () => {
    for (const input of [{ blocksBack: 99 }, { blocksBack: 604_801 }, { limit: 0 }, { limit: 101 }]) {
      const res = await t.post(PATH, { tokenId: TOKEN_ID, ...input });
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe("invalid_request");
    }
  });
});

describe("one token by address", () => {
  it("inspects a token with its market; scan fields are left out", async () => {
    const wave = symbolOf("WAVE");
    const { res, json } = await call({ address: wave.address.toLowerCase() });
    expect(res.status).toBe(200);
    const body = b20RadarResponseSchema.parse(json);
    expect(body).toMatchObject({ count: 1, detectedCount: 1, truncated: false });
    expect(body.fromBlock).toBeUndefined();
    expect(body.toBlock).toBeUndefined();
    const [token] = body.tokens;
    expect(token).toMatchObject({
      address: wave.address,
      variant: "ASSET",
      name: "Wavelength",
      symbol: "WAVE",
      decimals: 18,
      totalSupply: wave.initialSupply.toString(),
      currency: "",
      initialized: true,
    });
    const pair = deepestPair(wave.address)!;
    expect(token!.market).toMatchObject({
      volumeH24: pair.volume.h24,
      liquidityUsd: pair.liquidity!.usd,
      url: pair.url,
    });
    expect(body.brief).toMatch(/^Wavelength \(WAVE\) is a B20 asset/);
    expect(body.brief).toContain("extreme 24h move (+1240.5%)");
  });

  it("inspects a token older than any scan window (read from the factory and the token)", async () => {
    const harbor = symbolOf("HBUSD");
    const body = b20RadarResponseSchema.parse((await call({ address: harbor.address })).json);
    expect(body.tokens[0]).toMatchObject({ symbol: "HBUSD", variant: "STABLECOIN", currency: "USD", decimals: 6 });
    expect(body.tokens[0]!.market.liquidityUsd).toBe(deepestPair(harbor.address)!.liquidity!.usd);
    expect(body.brief).toContain("is a B20 USD stablecoin");
  });

  it("answers a token without a pair with nulls and a no-market risk", async () => {
    const naut = symbolOf("NAUT");
    const body = b20RadarResponseSchema.parse((await call({ address: naut.address })).json);
    expect(body.tokens[0]!.market).toMatchObject({ priceUsd: null, liquidityUsd: null, risk: { level: "high" } });
    expect(body.brief).toContain("no trading pair yet");
  });

  it.each([
    ["an address of another form", () => account(2), /not a B20 token address/],
    ["the factory itself (0xB20f…)", () => B20_FACTORY_ADDRESS, /B20 factory itself/],
    ["a B20-form address the factory never created", () => b20TokenAddress(0, 999_999), /has not created a token/],
  ])("answers 400 not_b20_address for %s, and charges nothing", async (_, address, message) => {
    const { res, json, before } = await call({ address: address() });
    expect(res.status).toBe(400);
    const error = errorBodySchema.parse(json).error;
    expect(error.code).toBe("not_b20_address");
    expect(error.message).toMatch(message);
    expect(error.details[0]!.field).toBe("address");
    expect(res.headers.get("payment-response")).toBeNull();
    expect(await t.balance(account(HOLDER))).toBe(before);
  });
});

describe("the scanner on the devnet's factory and tokens", () => {
  // A scanner that has scanned nothing reads each token from the factory and the token itself, as it would a
  // token older than its scans on Base: assets have no currency(), stablecoins carry it in B20Created too.
  it.each([
    ["an asset", "HARBOR", { variant: "ASSET", currency: "", decimals: 18 }],
    ["a stablecoin", "HBUSD", { variant: "STABLECOIN", currency: "USD", decimals: 6 }],
  ])("inspects %s read fresh", async (_, symbol, expected) => {
    const scheduled = symbolOf(symbol);
    const scanner = createB20Scanner({ client: t.devnet.l2.publicClient as unknown as PublicClient });
    const record = await scanner.inspect(scheduled.address);
    expect(record).toMatchObject({
      address: scheduled.address,
      name: scheduled.name,
      symbol,
      totalSupply: scheduled.initialSupply,
      initialized: true,
      ...expected,
    });
    // The same currency as the stablecoin's creation event says, read through a scan.
    const scan = await scanner.scanCreated(Number(await t.devnet.l2.publicClient.getBlockNumber()));
    expect(scan.created.find((token) => token.address === scheduled.address)).toMatchObject(expected);
  });
});

describe("upstream trouble costs nothing", () => {
  // Each case asks for another number of tokens: another address list, so no cached answer hides the fault.
  const cases: { name: string; fault: Fault; status: number; code: string; limit: number }[] = [
    {
      name: "429 with Retry-After",
      fault: { status: 429, retryAfterSeconds: 30 },
      status: 503,
      code: "upstream_unavailable",
      limit: 10,
    },
    { name: "500", fault: { status: 500 }, status: 502, code: "upstream_error", limit: 11 },
    {
      name: "503 (an HTML page)",
      fault: { status: 503, retryAfterSeconds: 20 },
      status: 503,
      code: "upstream_unavailable",
      limit: 12,
    },
    { name: "a timeout", fault: { timeout: true }, status: 504, code: "upstream_timeout", limit: 13 },
    {
      name: "a body that is not JSON",
      fault: { malformed: "invalid-json" },
      status: 502,
      code: "upstream_error",
      limit: 14,
    },
    {
      name: "a body of the wrong shape",
      fault: { malformed: "wrong-shape" },
      status: 502,
      code: "upstream_error",
      limit: 15,
    },
  ];
  it.each(cases)(
    "$name: $status $code, no settlement, and the same call succeeds once the fault clears",
    async ({ fault, status, code, limit }) => {
      t.sims.marketData.faults.set("/tokens/v1/**", fault);
      const { res, json, before } = await call({ blocksBack: 604_800, limit });
      expect(res.status).toBe(status);
      expect(errorBodySchema.parse(json).error.code).toBe(code);
      if (status === 503) expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      if (fault.retryAfterSeconds === 30) expect(res.headers.get("retry-after")).toBe("30");
      expect(res.headers.get("payment-response")).toBeNull();
      expect(await t.balance(account(HOLDER))).toBe(before);
      expect(t.sims.marketData.requests("/tokens/v1/**").at(-1)!.fault).toBeDefined();

      t.sims.marketData.faults.clear();
      const again = await call({ blocksBack: 604_800, limit });
      expect(again.res.status).toBe(200);
      expect(b20RadarResponseSchema.parse(again.json).count).toBe(limit);
      expect(await t.balance(account(HOLDER))).toBe(again.before - 10_000n);
    },
  );

  it("maps a fault on the one-token route the same way", async () => {
    t.sims.marketData.faults.set("/token-pairs/v1/**", { status: 500 });
    const { res, json, before } = await call({ address: symbolOf("KELP").address });
    expect(res.status).toBe(502);
    expect(json.error.code).toBe("upstream_error");
    expect(await t.balance(account(HOLDER))).toBe(before);
  });
});

describe("repeat scans", () => {
  it("read only the blocks mined since the last scan, and see a token created in them", async () => {
    const first = await scan({ blocksBack: 604_800, limit: 1 });
    const getLogs = vi.spyOn(t.devnet.l2.publicClient, "getLogs");
    try {
      // Mine a block that creates nothing: the next scan reads just the new blocks and finds what it found before.
      await t.devnet.l2.provider.request({ method: "evm_mine", params: [] });
      const second = await scan({ blocksBack: 604_800, limit: 1 });
      expect(BigInt(second.toBlock!)).toBeGreaterThan(BigInt(first.toBlock!));
      expect(second.detectedCount).toBe(first.detectedCount);
      const ranges = getLogs.mock.calls.map(([args]) => [args!.fromBlock as bigint, args!.toBlock as bigint]);
      expect(ranges).toEqual([[BigInt(first.toBlock!) + 1n, BigInt(second.toBlock!)]]);

      // A token created after that scan: the next scan reads only the blocks since, and lists it first.
      getLogs.mockClear();
      const creator = t.devnet.l2.walletClient(4);
      const salt = `0x${"42".repeat(32)}` as const;
      const address = computeB20Address(B20_VARIANTS.ASSET, creator.account.address, salt);
      await t.devnet.l2.provider.request({ method: "hardhat_setCode", params: [address, b20TokenDeployedBytecode] });
      const hash = await creator.sendTransaction({
        to: B20_FACTORY_ADDRESS,
        gas: 1_000_000n,
        data: encodeFunctionData({
          abi: b20FactoryAbi,
          functionName: "createB20",
          args: [
            B20_VARIANTS.ASSET,
            salt,
            encodeAssetCreateParams({ name: "Late Arrival", symbol: "LATE", initialAdmin: account(4), decimals: 18 }),
            [encodeFunctionData({ abi: b20TokenAbi, functionName: "mint", args: [account(4), 5n * 10n ** 18n] })],
          ],
        }),
      });
      const receipt = await t.devnet.l2.publicClient.waitForTransactionReceipt({ hash });
      const third = await scan({ blocksBack: 100, limit: 1 });
      expect(third.tokens[0]).toMatchObject({
        address,
        name: "Late Arrival",
        symbol: "LATE",
        totalSupply: (5n * 10n ** 18n).toString(),
        initialized: true,
        market: { priceUsd: null, risk: { level: "high" } },
      });
      const read = getLogs.mock.calls.map(([args]) => [args!.fromBlock as bigint, args!.toBlock as bigint]);
      expect(read).toEqual([[BigInt(second.toBlock!) + 1n, BigInt(third.toBlock!)]]);
      expect(receipt.blockNumber).toBeLessThanOrEqual(BigInt(third.toBlock!));

      // Inspecting it uses what the scan recorded (its creation block).
      const inspected = b20RadarResponseSchema.parse((await call({ address })).json);
      expect(inspected.brief).toContain(`created in block ${receipt.blockNumber.toLocaleString("en-US")}`);
    } finally {
      getLogs.mockRestore();
    }
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createMarketDataSim,
  createMarketplaceSim,
  MARKETPLACE_ROUTES,
  type MarketDataSim,
  type MarketplaceSim,
  startUpstreamSims,
} from "../src/index.js";
import { API_KEY, getJson } from "./helpers.js";
import { validateResponse } from "./openapi-validator.js";

const DROPS = "/api/v2/drops";
const DROP = "/api/v2/drops/neon-harbor-passes";

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

describe("fault injection, latency and the request log", () => {
  let marketplace: MarketplaceSim;
  let marketData: MarketDataSim;
  const mp = <T>(path: string, headers: Record<string, string> = API_KEY) =>
    getJson<T>(`${marketplace.url}${path}`, headers);
  const md = <T>(path: string) => getJson<T>(`${marketData.url}${path}`, {});

  beforeAll(async () => {
    [marketplace, marketData] = await Promise.all([createMarketplaceSim(), createMarketDataSim()]);
  });
  afterEach(() => {
    marketplace.faults.clear();
    marketData.faults.clear();
    marketplace.setLatency(0);
    marketData.setLatency(0);
  });
  afterAll(async () => {
    await Promise.all([marketplace.close(), marketData.close()]);
  });

  describe("status faults", () => {
    it("429 with Retry-After, in each upstream's own error body", async () => {
      marketplace.faults.set(DROPS, { status: 429, retryAfterSeconds: 7 });
      const res = await mp<{ detail: string }>(DROPS);
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("7");
      expect(res.body).toEqual({ detail: "Request was throttled. Expected available in 7 seconds." });

      marketData.faults.set("/latest/dex/search", { status: 429, retryAfterSeconds: 1 });
      const dex = await md("/latest/dex/search?q=WBNB");
      expect(dex.status).toBe(429);
      expect(dex.headers.get("retry-after")).toBe("1");
    });

    it("429 without retryAfterSeconds carries no Retry-After", async () => {
      marketplace.faults.set(DROPS, { status: 429 });
      const res = await mp(DROPS);
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBeNull();
    });

    it("500 answers JSON; 502 and 503 answer a CDN's HTML page, 503 with Retry-After when given", async () => {
      marketplace.faults.set(DROPS, { status: 500 });
      const e500 = await mp(DROPS);
      expect(e500.status).toBe(500);
      expect(e500.body).toEqual({ errors: ["Internal server error"] });
      for (const status of [502, 503] as const) {
        marketplace.faults.set(DROPS, { status, retryAfterSeconds: status === 503 ? 30 : undefined });
        const res = await mp<string>(DROPS);
        expect(res.status).toBe(status);
        expect(res.headers.get("content-type")).toMatch(/^text\/html/);
        expect(res.body).toContain(`Error code ${status}`);
        expect(res.headers.get("retry-after")).toBe(status === 503 ? "30" : null);
      }
      marketData.faults.set("/tokens/v1/{chainId}/{tokenAddresses}", { status: 502 });
      const dex = await md<string>("/tokens/v1/base/0xb200000000000000000000000000000000000001");
      expect(dex.status).toBe(502);
      expect(dex.body).toContain("api.dexscreener.com");
    });

    it("applies `times` requests, then clears itself", async () => {
      marketplace.faults.set(DROP, { status: 503, times: 2 });
      expect(marketplace.faults.list()[0]!.remaining).toBe(2);
      expect((await mp(DROP)).status).toBe(503);
      expect(marketplace.faults.list()[0]!.remaining).toBe(1);
      expect((await mp(DROP)).status).toBe(503);
      expect(marketplace.faults.list()).toEqual([]);
      expect((await mp(DROP)).status).toBe(200);
    });

    it("strikes before the API-key check, like a CDN or rate limiter in front of the API", async () => {
      marketplace.faults.set(DROPS, { status: 429, retryAfterSeconds: 2 });
      expect((await mp(DROPS, {})).status).toBe(429);
    });

    it("refuses malformed faults", () => {
      expect(() => marketplace.faults.set(DROPS, { status: 418 as 429 })).toThrow(/status/);
      expect(() => marketplace.faults.set(DROPS, { status: 500, timeout: true })).toThrow(/one of/);
      expect(() => marketplace.faults.set(DROPS, { latencyMs: -1 })).toThrow(/latencyMs/);
    });
  });

  describe("patterns", () => {
    it("route templates match one segment per parameter; ** globs, RegExps and * reach further", async () => {
      marketplace.faults.set(MARKETPLACE_ROUTES.drop, { status: 500 });
      expect((await mp(DROP)).status).toBe(500);
      expect((await mp(DROPS)).status).toBe(200);
      expect((await mp(`${DROP}/eligibility`)).status).toBe(401); // reached the route (no bearer), no fault
      marketplace.faults.clear();

      marketplace.faults.set("/api/v2/drops/**", { status: 502 });
      expect((await mp(DROP)).status).toBe(502);
      expect((await mp(`${DROP}/eligibility`)).status).toBe(502);
      expect((await mp(DROPS)).status).toBe(200);
      marketplace.faults.clear();

      marketplace.faults.set(/\/stats$/, { status: 503 });
      expect((await mp("/api/v2/collections/lumen-apes/stats")).status).toBe(503);
      expect((await mp("/api/v2/collections/lumen-apes")).status).toBe(200);
      marketplace.faults.clear();

      marketplace.faults.set("*", { status: 500 });
      expect((await mp("/api/v2/collections/lumen-apes")).status).toBe(500);
    });

    it("the fault set last wins; clear(pattern) removes only that one", async () => {
      marketplace.faults.set("*", { status: 500 });
      marketplace.faults.set(DROPS, { status: 503 });
      expect((await mp(DROPS)).status).toBe(503);
      marketplace.faults.clear(DROPS);
      expect((await mp(DROPS)).status).toBe(500);
      marketplace.faults.clear();
      expect((await mp(DROPS)).status).toBe(200);
    });
  });

  describe("timeouts and malformed answers", () => {
    it("timeout: never answers; the client gives up; close() still ends promptly", async () => {
      const sim = await createMarketDataSim();
      try {
        sim.faults.set("/latest/dex/search", { timeout: true });
        const { ms, value } = await timed(() =>
          fetch(`${sim.url}/latest/dex/search?q=WBNB`, { signal: AbortSignal.timeout(300) }).then(
            () => "answered",
            (error: Error) => error.name,
          ),
        );
        expect(value).toBe("TimeoutError");
        expect(ms).toBeGreaterThanOrEqual(290);
        const [logged] = sim.requests("/latest/dex/search");
        expect(logged!.fault).toBe("timeout");
        expect(logged!.status).toBeUndefined();
        // A request still hanging when the simulator closes does not hold it open: close() ends it.
        const arrived = sim.nextRequest("/latest/dex/search");
        const hanging = fetch(`${sim.url}/latest/dex/search?q=USDT`).catch((error: Error) => error);
        expect((await arrived).fault).toBe("timeout");
        await sim.close();
        expect(await hanging).toBeInstanceOf(Error);
      } finally {
        await sim.close();
      }
    });

    it("malformed: 200 with truncated JSON", async () => {
      marketplace.faults.set(DROPS, { malformed: true });
      const res = await fetch(`${marketplace.url}${DROPS}`, { headers: API_KEY });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      const text = await res.text();
      expect(text.startsWith('{"drops":[')).toBe(true);
      expect(() => JSON.parse(text)).toThrow();
    });

    it("malformed wrong-shape: valid JSON that fails the schema", async () => {
      marketplace.faults.set(DROPS, { malformed: "wrong-shape" });
      const res = await mp(DROPS);
      expect(res.status).toBe(200);
      expect(validateResponse(DROPS, res.body).length).toBeGreaterThan(0);
      marketData.faults.set("/tokens/v1/**", { malformed: "wrong-shape" });
      const dex = await md("/tokens/v1/base/0xb200000000000000000000000000000000000001");
      expect(Array.isArray(dex.body)).toBe(false);
    });

    it("leaves error answers alone (a malformed fault only breaks 200s)", async () => {
      marketplace.faults.set("/api/v2/drops/{slug}", { malformed: true });
      const res = await mp("/api/v2/drops/no-such-drop");
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ errors: ["Drop not found for collection slug 'no-such-drop'"] });
    });
  });

  describe("latency", () => {
    it("adds a per-route fault latency to that route only", async () => {
      marketplace.faults.set(DROP, { latencyMs: 250 });
      const slow = await timed(() => mp(DROP));
      expect(slow.value.status).toBe(200);
      expect(slow.ms).toBeGreaterThanOrEqual(245);
      expect(marketplace.requests(DROP).at(-1)).toMatchObject({ fault: "latency", delayMs: 250 });
      expect((await mp(DROPS)).status).toBe(200);
      expect(marketplace.requests(DROPS).at(-1)).toMatchObject({ delayMs: 0 });
      expect(marketplace.requests(DROPS).at(-1)!.fault).toBeUndefined();
    });

    it("delays every answer by the global latency option, changeable at run time", async () => {
      const sim = await createMarketplaceSim({ latencyMs: 150 });
      try {
        expect(sim.latencyMs).toBe(150);
        const results = await Promise.all([0, 1, 2].map(() => timed(() => getJson(`${sim.url}${DROPS}`, API_KEY))));
        for (const r of results) expect(r.ms).toBeGreaterThanOrEqual(145);
        expect(sim.requests(DROPS).map((r) => r.delayMs)).toEqual([150, 150, 150]);
        sim.setLatency(0);
        expect((await getJson(`${sim.url}${DROPS}`, API_KEY)).status).toBe(200);
        expect(sim.requests(DROPS).at(-1)!.delayMs).toBe(0);
        expect(() => sim.setLatency(-5)).toThrow();
      } finally {
        await sim.close();
      }
    });

    it("combines fault latency with a status (slow, then failing)", async () => {
      marketData.faults.set("/latest/dex/search", { latencyMs: 200, status: 503, retryAfterSeconds: 5 });
      const r = await timed(() => md("/latest/dex/search?q=WBNB"));
      expect(r.value.status).toBe(503);
      expect(r.ms).toBeGreaterThanOrEqual(195);
    });
  });

  describe("request log", () => {
    it("records path, query, route, clock time and status, so tests can count upstream calls", async () => {
      const at = Date.parse("2029-03-04T05:06:07Z");
      const sim = await createMarketplaceSim({ now: () => at });
      try {
        await getJson(`${sim.url}${DROPS}?type=upcoming&chains=base&chains=zora&limit=3`, API_KEY);
        await getJson(`${sim.url}${DROP}`, API_KEY);
        await getJson(`${sim.url}${DROP}`, {});
        const log = sim.requests();
        expect(log).toHaveLength(3);
        expect(log[0]).toMatchObject({
          seq: 1,
          method: "GET",
          path: DROPS,
          route: DROPS,
          query: { type: "upcoming", chains: ["base", "zora"], limit: "3" },
          time: at,
          status: 200,
        });
        expect(log[0]!.receivedAt).toBeGreaterThan(0);
        expect(log[0]!.headers["x-api-key"]).toBe(API_KEY["x-api-key"]);
        expect(log.map((r) => r.status)).toEqual([200, 200, 401]);
        expect(sim.requests("/api/v2/drops/{slug}").map((r) => r.seq)).toEqual([2, 3]);
        sim.resetRequests();
        expect(sim.requests()).toEqual([]);
        await getJson(`${sim.url}/api/v2/nothing-here`, API_KEY);
        expect(sim.requests()[0]).toMatchObject({ route: null, status: 404, seq: 4 });
      } finally {
        await sim.close();
      }
    });

    it("counts concurrent identical calls one by one (for coalescing tests)", async () => {
      marketData.resetRequests();
      marketData.setLatency(50);
      await Promise.all(
        Array.from({ length: 5 }, () => md("/tokens/v1/bsc/0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c")),
      );
      expect(marketData.requests("/tokens/v1/{chainId}/{tokenAddresses}")).toHaveLength(5);
    });
  });

  it("rate limit option: 429 with Retry-After past the limit", async () => {
    const sim = await createMarketDataSim({ rateLimit: { limit: 3, windowMs: 60_000 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await getJson(`${sim.url}/token-boosts/top/v1`, {})).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const res = await getJson(`${sim.url}/token-boosts/top/v1`, {});
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers.get("retry-after"))).toBeLessThanOrEqual(60);
      expect(sim.requests().at(-1)!.fault).toBe("rate-limit");
    } finally {
      await sim.close();
    }
  });

  it("a marketplace key's budget: each API key has its own minute, and past it 429 as OpenSea throttles", async () => {
    const sims = await startUpstreamSims({ marketplaceKeyBudgetPerMinute: 2 });
    try {
      const get = (key: string) =>
        getJson<{ detail?: string }>(`${sims.urls.marketplace}/api/v2/collections/base-bloomers/stats`, {
          "x-api-key": key,
        });
      const a = [await get("key-a"), await get("key-a"), await get("key-a")];
      expect(a.map((res) => res.status)).toEqual([200, 200, 429]);
      expect(Number(a[2]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(a[2]!.body.detail).toMatch(/throttled/);
      // Another key is not held back by the first one's budget.
      expect((await get("key-b")).status).toBe(200);
    } finally {
      await sims.close();
    }
  });
});

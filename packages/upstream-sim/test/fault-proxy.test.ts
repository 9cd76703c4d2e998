import { Agent, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMarketDataSim, type FaultProxy, type MarketDataSim, startFaultProxy } from "../src/index.js";

/** Two requests on one kept-alive connection (node:http with a one-socket agent), each outcome reported. */
async function twoOnOneConnection(url: string): Promise<(number | string)[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = () =>
    new Promise<number | string>((resolve) => {
      request(url, { agent }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      })
        .on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
        .end();
    });
  try {
    return [await get(), await get()];
  } finally {
    agent.destroy();
  }
}

describe("fault proxy", () => {
  let sim: MarketDataSim;
  let proxy: FaultProxy;
  beforeAll(async () => {
    sim = await createMarketDataSim();
    proxy = await startFaultProxy(sim.url);
  });
  afterAll(async () => {
    await proxy.close();
    await sim.close();
  });

  it("forwards requests and answers to the origin", async () => {
    sim.resetRequests();
    const res = await fetch(`${proxy.url}/latest/dex/search?q=WBNB`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { pairs: unknown[] }).pairs.length).toBeGreaterThan(0);
    expect(sim.requests().map((r) => r.query)).toEqual([{ q: "WBNB" }]);
  });

  it("resets a kept-alive connection under its next request, which never reaches the origin", async () => {
    sim.resetRequests();
    proxy.resetNext({ match: (r) => r.onConnection === 2 });
    const outcomes = await twoOnOneConnection(`${proxy.url}/latest/dex/search?q=USDT`);
    expect(outcomes).toEqual([200, "ECONNRESET"]);
    expect(sim.requests()).toHaveLength(1);
    expect(
      proxy
        .requests()
        .slice(-2)
        .map((r) => [r.onConnection, r.fate]),
    ).toEqual([
      [1, "forwarded"],
      [2, "reset"],
    ]);
    // Armed for one request only: the next connection is served again.
    expect(await twoOnOneConnection(`${proxy.url}/latest/dex/search?q=USDT`)).toEqual([200, 200]);
  });

  it("resets the requests a match picks, on any connection", async () => {
    proxy.resetNext({ count: 2, match: (r) => r.url.includes("q=WETH") });
    const reset = await fetch(`${proxy.url}/latest/dex/search?q=WETH`).catch((error: Error) => error);
    expect(reset).toBeInstanceOf(TypeError);
    expect(((reset as TypeError).cause as NodeJS.ErrnoException).code).toBe("ECONNRESET");
    expect((await fetch(`${proxy.url}/latest/dex/search?q=WBNB`)).status).toBe(200);
  });

  describe("HTTP faults", () => {
    const url = () => `${proxy.url}/latest/dex/search?q=WBNB`;

    it("answers an error status, with Retry-After when asked, as JSON or as an HTML page", async () => {
      proxy.inject({ kind: "status", status: 429, retryAfterSeconds: 7 }, { count: 1 });
      const limited = await fetch(url());
      expect([limited.status, limited.headers.get("retry-after")]).toEqual([429, "7"]);
      expect(await limited.json()).toEqual({ errors: ["fault proxy: 429"] });
      proxy.inject({ kind: "status", status: 502, html: true }, { count: 1 });
      const html = await fetch(url());
      expect([html.status, html.headers.get("content-type"), html.headers.get("retry-after")]).toEqual([
        502,
        "text/html",
        null,
      ]);
      expect(await html.text()).toMatch(/^<html>/);
      expect((await fetch(url())).status).toBe(200);
    });

    it("applies a fault to matching requests until cleared", async () => {
      proxy.inject({ kind: "status", status: 503 }, { match: (r) => r.url.includes("USDT") });
      expect((await fetch(`${proxy.url}/latest/dex/search?q=USDT`)).status).toBe(503);
      expect((await fetch(`${proxy.url}/latest/dex/search?q=USDT`)).status).toBe(503);
      expect((await fetch(url())).status).toBe(200);
      proxy.clearFaults();
      expect((await fetch(`${proxy.url}/latest/dex/search?q=USDT`)).status).toBe(200);
    });

    it("cuts the body short after the headers: the client's read fails", async () => {
      proxy.inject({ kind: "truncate" }, { count: 1 });
      const res = await fetch(url());
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
    });

    it("answers JSON of another shape", async () => {
      proxy.inject({ kind: "wrong-shape" }, { count: 1 });
      expect(await (await fetch(url())).json()).toEqual([{ unexpected: [1, "two"] }]);
    });

    it("never answers a hung request: the client's own timeout ends it", async () => {
      proxy.inject({ kind: "hang" }, { count: 1 });
      await expect(fetch(url(), { signal: AbortSignal.timeout(200) })).rejects.toThrow(/aborted|timeout/i);
      expect(proxy.requests().at(-1)!.fate).toBe("hang");
    });

    it("holds requests back until the faults are cleared, then forwards each as it came", async () => {
      proxy.inject({ kind: "hold" });
      let answered = 0;
      const calls = [url(), url()].map(async (u) => {
        const res = await fetch(u);
        answered++;
        return res;
      });
      // Both arrived and wait: the proxy counts them, and neither has an answer.
      while (proxy.held() < 2) await new Promise((resolve) => setImmediate(resolve));
      expect(answered).toBe(0);
      expect(
        proxy
          .requests()
          .slice(-2)
          .map((r) => r.fate),
      ).toEqual(["hold", "hold"]);
      proxy.clearFaults();
      expect(proxy.held()).toBe(0);
      const answers = await Promise.all(calls);
      expect(answers.map((res) => res.status)).toEqual([200, 200]);
      expect(((await answers[0]!.json()) as { pairs: unknown[] }).pairs.length).toBeGreaterThan(0);
      await answers[1]!.arrayBuffer();
    });

    it("trickles the body in over the time asked, whole in the end", async () => {
      proxy.inject({ kind: "slow-body", totalMs: 160 }, { count: 1 });
      const started = performance.now();
      const res = await fetch(url());
      const body = (await res.json()) as { pairs: unknown[] };
      expect(body.pairs.length).toBeGreaterThan(0);
      expect(performance.now() - started).toBeGreaterThanOrEqual(100);
    });
  });
});

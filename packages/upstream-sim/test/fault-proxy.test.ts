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
});

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RpcProxy, startRpcProxy } from "../src/index.js";

/** A node that knows one thing: its head is block 10,000; `eth_getLogs` answers the range it was asked. */
let node: Server;
let nodeUrl: string;
const asked: string[] = [];

beforeAll(async () => {
  node = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => {
      text += chunk;
    });
    req.on("end", () => {
      const answer = (call: { id: unknown; method: string; params?: unknown[] }) => {
        asked.push(call.method);
        if (call.method === "eth_blockNumber") return { jsonrpc: "2.0", id: call.id, result: "0x2710" };
        return { jsonrpc: "2.0", id: call.id, result: call.params ?? [] };
      };
      const body = JSON.parse(text);
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)));
    });
  });
  await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
  nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => node.close(() => resolve()));
});

const call = (proxy: RpcProxy, body: unknown) =>
  fetch(proxy.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const getLogs = (id: number, fromBlock: string, toBlock?: string) => ({
  jsonrpc: "2.0",
  id,
  method: "eth_getLogs",
  params: [{ fromBlock, ...(toBlock ? { toBlock } : {}) }],
});

describe("the RPC proxy", () => {
  it("refuses eth_getLogs over its cap as providers do, and forwards what fits, in batches too", async () => {
    const proxy = await startRpcProxy(nodeUrl, { maxLogRange: 2000 });
    try {
      const wide = await (await call(proxy, getLogs(1, "0x0", "0x7d0"))).json();
      expect(wide).toMatchObject({ id: 1, error: { code: -32600, message: /2000 block range/ } });
      // Up to `latest` (block 10,000), from 8,001: 2,000 blocks.
      const fits = await (await call(proxy, getLogs(2, "0x1f41"))).json();
      expect(fits).toMatchObject({ id: 2, result: [{ fromBlock: "0x1f41" }] });
      const batch = await (await call(proxy, [getLogs(3, "0x0", "0x1"), getLogs(4, "0x0", "latest")])).json();
      expect(batch).toMatchObject([
        { id: 3, result: [{ fromBlock: "0x0" }] },
        { id: 4, error: { code: -32600 } },
      ]);
      expect(proxy.stats()).toMatchObject({ logRangeRefused: 2, logs: 2 });
    } finally {
      await proxy.close();
    }
  });

  it("throttles in bursts: after every N requests, the next M get 429 with Retry-After", async () => {
    const proxy = await startRpcProxy(nodeUrl, { throttle: { every: 3, length: 2 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await call(proxy, { jsonrpc: "2.0", id: i, method: "eth_blockNumber" });
        statuses.push(res.status);
        if (res.status === 429) {
          expect(res.headers.get("retry-after")).toBe("1");
          expect(await res.json()).toMatchObject({ error: { code: -32005 } });
        } else await res.arrayBuffer();
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429, 200, 200, 200, 429, 429]);
      expect(proxy.stats()).toMatchObject({ requests: 10, throttled: 4 });
    } finally {
      await proxy.close();
    }
  });

  it("adds its latency to every answer", async () => {
    const proxy = await startRpcProxy(nodeUrl, { latencyMs: 80 });
    try {
      const started = performance.now();
      await (await call(proxy, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber" })).json();
      expect(performance.now() - started).toBeGreaterThanOrEqual(75);
    } finally {
      await proxy.close();
    }
  });
});

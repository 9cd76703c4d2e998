/**
 * A JSON-RPC proxy that behaves like a hosted RPC provider in front of a local chain: it adds latency to every
 * answer, throttles in bursts (HTTP 429 with `Retry-After` and a JSON-RPC error, as providers do past a plan's
 * rate), and refuses `eth_getLogs` over more blocks than its cap. Batches are answered element by element.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface RpcProxyOptions {
  /** Interface to bind. Default `127.0.0.1`. */
  host?: string;
  /** Added to every answer, in milliseconds. Default 0. */
  latencyMs?: number;
  /** After every `every` requests, the next `length` are throttled (429). Off by default. */
  throttle?: { every: number; length: number };
  /** Most blocks one `eth_getLogs` may span; wider ones get a JSON-RPC error, as providers answer. Off by default. */
  maxLogRange?: number;
}

export interface RpcProxyStats {
  /** HTTP requests received (a batch is one). */
  requests: number;
  /** Requests answered 429. */
  throttled: number;
  /** `eth_getLogs` calls refused for their range. */
  logRangeRefused: number;
  /** `eth_getLogs` calls forwarded. */
  logs: number;
}

export interface RpcProxy {
  readonly url: string;
  stats(): RpcProxyStats;
  close(): Promise<void>;
}

interface RpcRequest {
  jsonrpc?: string;
  id?: unknown;
  method?: string;
  params?: unknown[];
}

const hexBlock = (value: unknown): bigint | undefined =>
  typeof value === "string" && /^0x[0-9a-fA-F]+$/.test(value) ? BigInt(value) : undefined;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Starts a proxy on a free port in front of `target` (a JSON-RPC URL such as `http://127.0.0.1:8545`). */
export async function startRpcProxy(target: string, options: RpcProxyOptions = {}): Promise<RpcProxy> {
  const stats: RpcProxyStats = { requests: 0, throttled: 0, logRangeRefused: 0, logs: 0 };
  const sockets = new Set<Socket>();
  let counted = 0;

  /** The block number `tag` stands for (`latest` is asked of the chain). */
  async function blockOf(tag: unknown): Promise<bigint | undefined> {
    const hex = hexBlock(tag);
    if (hex !== undefined) return hex;
    if (tag === undefined || tag === "latest" || tag === "safe" || tag === "finalized" || tag === "pending") {
      const answer = await forward({ jsonrpc: "2.0", id: 0, method: "eth_blockNumber", params: [] });
      return hexBlock((answer as { result?: unknown }).result);
    }
    return tag === "earliest" ? 0n : undefined;
  }

  async function forward(body: RpcRequest | RpcRequest[]): Promise<unknown> {
    const res = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return res.json();
  }

  /** One request's answer: refused for its range, or the chain's. */
  async function answer(request: RpcRequest): Promise<unknown> {
    if (request.method === "eth_getLogs" && options.maxLogRange !== undefined) {
      const filter = (request.params?.[0] ?? {}) as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown };
      if (filter.blockHash === undefined) {
        const [from, to] = await Promise.all([blockOf(filter.fromBlock ?? "earliest"), blockOf(filter.toBlock)]);
        if (from !== undefined && to !== undefined && to - from + 1n > BigInt(options.maxLogRange)) {
          stats.logRangeRefused++;
          return {
            jsonrpc: "2.0",
            id: request.id ?? null,
            error: {
              code: -32600,
              message: `eth_getLogs is limited to a ${options.maxLogRange} block range`,
            },
          };
        }
      }
    }
    if (request.method === "eth_getLogs") stats.logs++;
    return forward(request);
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      stats.requests++;
      const text = await readBody(req);
      const throttled =
        options.throttle !== undefined &&
        counted++ % (options.throttle.every + options.throttle.length) >= options.throttle.every;
      if (options.latencyMs) await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
      if (throttled) {
        stats.throttled++;
        res
          .writeHead(429, { "content-type": "application/json", "retry-after": "1" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32005, message: "rate limit exceeded" } }));
        return;
      }
      let body: RpcRequest | RpcRequest[];
      try {
        body = JSON.parse(text);
      } catch {
        res
          .writeHead(400, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } }));
        return;
      }
      const result = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(result));
    })().catch(() => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "upstream node failed" } }));
    });
  });
  server.keepAliveTimeout = 65_000;
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    stats: () => ({ ...stats }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

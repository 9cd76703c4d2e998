/**
 * A reverse proxy that forwards HTTP requests to one origin and injects connection faults on the way: a request can
 * be met with a TCP reset instead of being forwarded. That is what a client meets when a server closes a
 * kept-alive connection just as the client sends its next request on it, or when a proxy or the network drops
 * the connection: the client sees ECONNRESET and never learns whether the request was handled. Here it never is.
 */
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One request as the proxy saw it. */
export interface ProxiedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  /** Request headers, lower-cased names. */
  headers: IncomingMessage["headers"];
  /** 1 for the first request on its connection, 2 for the next one on the same kept-alive connection, ... */
  onConnection: number;
  /** `"reset"` when the proxy reset the connection instead of forwarding; `"forwarded"` otherwise. */
  fate: "forwarded" | "reset";
}

export interface FaultProxy {
  /** Base URL of the proxy, e.g. `http://127.0.0.1:49152`. */
  readonly url: string;
  /**
   * Resets the connection of the next `count` requests (default 1) that `match` accepts (default: any), before
   * anything is forwarded. The client sees what a kept-alive socket closed under its request looks like:
   * ECONNRESET, and no answer.
   */
  resetNext(options?: { count?: number; match?: (request: ProxiedRequest) => boolean }): void;
  /** Every request so far, oldest first. */
  requests(): ProxiedRequest[];
  close(): Promise<void>;
}

/** Headers that describe one connection, not the message (RFC 9110, section 7.6.1): a proxy does not pass them on. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

/** Starts a proxy on 127.0.0.1 (a free port) in front of `target` (an origin such as `http://127.0.0.1:8402`). */
export async function startFaultProxy(target: string, options: { host?: string } = {}): Promise<FaultProxy> {
  const origin = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const log: ProxiedRequest[] = [];
  const served = new WeakMap<Socket, number>();
  const sockets = new Set<Socket>();
  let armed: { count: number; match: (request: ProxiedRequest) => boolean } | undefined;

  const server = createServer((req, res) => {
    const onConnection = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, onConnection);
    const seen: ProxiedRequest = {
      method: req.method ?? "GET",
      url: req.url ?? "/",
      headers: { ...req.headers },
      onConnection,
      fate: "forwarded",
    };
    log.push(seen);
    if (armed && armed.count > 0 && armed.match(seen)) {
      armed.count--;
      seen.fate = "reset";
      req.socket.resetAndDestroy();
      return;
    }
    const upstream = httpRequest(
      {
        protocol: origin.protocol,
        hostname: origin.hostname,
        port: origin.port,
        method: req.method,
        path: req.url,
        headers: { ...endToEnd(req.headers), host: origin.host },
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end("fault proxy: origin unreachable");
      else res.destroy();
    });
    req.pipe(upstream);
  });
  // As long-lived as the servers it stands for: a reset happens only when asked for.
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
    url: `http://${address.includes(":") ? `[${address}]` : address}:${port}`,
    resetNext({ count = 1, match = () => true } = {}) {
      armed = { count, match };
    },
    requests: () => log.map((request) => ({ ...request })),
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        agent.destroy();
      });
    },
  };
}

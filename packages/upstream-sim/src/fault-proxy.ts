/**
 * A reverse proxy that forwards HTTP requests to one origin and injects faults on the way, as the network and a
 * failing upstream produce them:
 * - a TCP reset instead of forwarding: what a client meets when a server closes a kept-alive connection just as the
 *   client sends its next request on it, or when the network drops the connection (ECONNRESET, no answer);
 * - an error status (with or without `Retry-After`, as JSON or as an HTML page, as load balancers send them);
 * - no answer at all (a hang), the answer cut off after its headers, JSON of another shape, or a body that trickles
 *   in slower than any client waits;
 * - an answer held back until the test lets it go (`hold`, released by `clearFaults`): a request that is certainly
 *   still in flight when something else happens, whatever the machine's speed.
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** A fault the proxy answers a request with instead of (or while) forwarding it. */
export type ProxyFault =
  | { kind: "reset" }
  | { kind: "status"; status: number; retryAfterSeconds?: number; html?: boolean }
  | { kind: "hang" }
  | { kind: "truncate" }
  | { kind: "wrong-shape" }
  | { kind: "slow-body"; totalMs: number }
  | { kind: "hold" };

/** One request as the proxy saw it. */
export interface ProxiedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  /** Request headers, lower-cased names. */
  headers: IncomingMessage["headers"];
  /** 1 for the first request on its connection, 2 for the next one on the same kept-alive connection, ... */
  onConnection: number;
  /** `"forwarded"` as it came, `"reset"` when the proxy reset the connection, or the kind of fault it answered with. */
  fate: "forwarded" | ProxyFault["kind"];
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
  /**
   * Answers every request `match` accepts (default: any) with `fault`, until {@link clearFaults} (or for the next
   * `count` of them).
   */
  inject(fault: ProxyFault, options?: { count?: number; match?: (request: ProxiedRequest) => boolean }): void;
  /** Forwards every request as it comes again, and the requests held so far (`hold`) now. */
  clearFaults(): void;
  /** Requests held back by a `hold` fault and not yet let go. */
  held(): number;
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
  let faults: { fault: ProxyFault; count: number; match: (request: ProxiedRequest) => boolean }[] = [];
  /** Answers held open by a hang, ended when the proxy closes. */
  const hanging = new Set<() => void>();
  /** Requests held back by `hold`, forwarded when the faults are cleared. */
  let holding: (() => void)[] = [];

  const server = createServer(handle);
  function handle(req: IncomingMessage, res: ServerResponse): void {
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
    const armed = faults.find((f) => f.count > 0 && f.match(seen));
    if (armed) armed.count--;
    const fault = armed?.fault;
    if (fault) seen.fate = fault.kind;
    switch (fault?.kind) {
      case "reset":
        req.socket.resetAndDestroy();
        return;
      case "status": {
        const headers: Record<string, string> = fault.html
          ? { "content-type": "text/html" }
          : { "content-type": "application/json" };
        if (fault.retryAfterSeconds !== undefined) headers["retry-after"] = String(fault.retryAfterSeconds);
        const body = fault.html
          ? `<html><head><title>${fault.status}</title></head><body><h1>${fault.status}</h1></body></html>`
          : JSON.stringify({ errors: [`fault proxy: ${fault.status}`] });
        req.resume();
        res.writeHead(fault.status, headers).end(body);
        return;
      }
      case "hang":
        req.resume();
        hanging.add(() => res.destroy());
        return;
      case "wrong-shape":
        req.resume();
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify([{ unexpected: [1, "two"] }]));
        return;
      case "hold":
        holding.push(() => forward(req, res, undefined));
        hanging.add(() => res.destroy());
        return;
    }
    forward(req, res, fault);
  }

  function forward(req: IncomingMessage, res: ServerResponse, fault: ProxyFault | undefined): void {
    // The client may have gone while its request was held.
    if (res.destroyed || req.socket.destroyed) return;
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
        if (fault?.kind === "truncate" || fault?.kind === "slow-body") {
          // The whole answer first, then sent with its length as announced but cut short, or in slow pieces.
          const chunks: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => chunks.push(chunk));
          answer.on("end", () => {
            const body = Buffer.concat(chunks);
            const headers = { ...endToEnd(answer.headers), "content-length": String(body.length) };
            delete headers["content-encoding"];
            res.writeHead(answer.statusCode ?? 502, headers);
            if (fault.kind === "truncate") {
              res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.destroy());
              return;
            }
            trickle(res, body, fault.totalMs, hanging);
          });
          return;
        }
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end("fault proxy: origin unreachable");
      else res.destroy();
    });
    req.pipe(upstream);
  }
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
      faults.unshift({ fault: { kind: "reset" }, count, match });
    },
    inject(fault, { count = Number.POSITIVE_INFINITY, match = () => true } = {}) {
      faults.unshift({ fault, count, match });
    },
    clearFaults() {
      faults = [];
      const released = holding;
      holding = [];
      for (const forwardNow of released) forwardNow();
    },
    held: () => holding.length,
    requests: () => log.map((request) => ({ ...request })),
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const end of hanging) end();
        for (const socket of sockets) socket.destroy();
        agent.destroy();
      });
    },
  };
}

/** Sends `body` in 16 pieces spread over `totalMs`; stops when the client goes away. */
function trickle(res: ServerResponse, body: Buffer, totalMs: number, open: Set<() => void>): void {
  const pieces = 16;
  const size = Math.max(1, Math.ceil(body.length / pieces));
  let sent = 0;
  const timer = setInterval(
    () => {
      if (res.destroyed) return stop();
      res.write(body.subarray(sent, sent + size));
      sent += size;
      if (sent >= body.length) {
        res.end();
        stop();
      }
    },
    Math.max(1, Math.floor(totalMs / pieces)),
  );
  const end = () => res.destroy();
  open.add(end);
  function stop() {
    clearInterval(timer);
    open.delete(end);
  }
}

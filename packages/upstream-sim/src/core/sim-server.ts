/**
 * The HTTP machinery both simulators share: routing, global latency, per-route faults, an optional rate limit and
 * a request log. Each simulator supplies its routes, its authentication rule and its own error bodies.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { compilePattern, type Fault, FaultController, type MalformedKind, type RoutePattern } from "./faults.js";

/** A clock: milliseconds since the epoch, or a Date. */
export type Clock = () => number | Date;

export interface SimServerOptions {
  /** Interface to bind. Default `127.0.0.1`. */
  host?: string;
  /** Port to bind. Default 0 (a free port). */
  port?: number;
  /** Delay added to every answer, in milliseconds (e.g. 150 to feel like a remote API). Default 0. */
  latencyMs?: number;
  /** The clock the fixtures are generated against. Default `Date.now`. */
  now?: Clock;
  /**
   * Answer 429 once more than `limit` requests arrived within `windowMs` (all routes together), with
   * `Retry-After`; with `perHeader`, each value of that request header (an API key) has a window of its own, as a
   * key's budget. Off by default.
   */
  rateLimit?: { limit: number; windowMs: number; perHeader?: string };
}

/** One request as the simulator saw it. */
export interface SimRequest {
  /** 1, 2, 3, ... in arrival order. */
  seq: number;
  method: string;
  /** Path without the query string, percent-decoding left as sent. */
  path: string;
  /** Query parameters; a repeated parameter gives an array. */
  query: Record<string, string | string[]>;
  /** Template of the route that served it (`/api/v2/drops/{slug}`), or null when no route matched. */
  route: string | null;
  /** Arrival time on the simulator's clock (`now()`), in milliseconds since the epoch. */
  time: number;
  /** Arrival time on the wall clock (`Date.now()`). */
  receivedAt: number;
  /** Request headers, lower-cased names. */
  headers: IncomingHttpHeaders;
  /** Status answered; absent while pending and for a request that was never answered (timeout fault). */
  status?: number;
  /** The fault applied, if any: `"status"`, `"timeout"`, `"malformed"`, `"latency"` or `"rate-limit"`. */
  fault?: "status" | "timeout" | "malformed" | "latency" | "rate-limit";
  /** Milliseconds the simulator waited before answering: the global latency plus any fault latency. */
  delayMs: number;
}

export interface RouteContext {
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The simulator's clock at arrival, in milliseconds. */
  now: number;
  path: string;
}

export interface RouteResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface Route {
  template: string;
  handler: (ctx: RouteContext) => RouteResult;
}

/** The service-specific parts of a simulator. */
export interface SimService {
  name: string;
  routes: Route[];
  /** Checked before routing (after faults): an answer here ends the request (e.g. 401 without an API key). */
  authorize?: (ctx: RouteContext) => RouteResult | undefined;
  /** Body of an injected or rate-limit error status. */
  errorBody: (status: number, retryAfterSeconds: number | undefined) => { contentType: string; text: string };
  /** Body for a path no route serves. */
  notFound: (path: string) => RouteResult;
}

/** What every simulator exposes to tests and to the embedded default. */
export interface SimServer {
  /** Base URL, e.g. `http://127.0.0.1:49152` (no trailing slash). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Per-route fault injection, changeable at run time. */
  readonly faults: FaultController;
  /** The request log, oldest first; with a pattern, only requests whose path matches it. */
  requests(pattern?: RoutePattern): SimRequest[];
  /** Empties the request log. */
  resetRequests(): void;
  /** Resolves with the next request to arrive whose path matches `pattern` (any path without one). */
  nextRequest(pattern?: RoutePattern): Promise<SimRequest>;
  /** Sets the global latency added to every answer. */
  setLatency(ms: number): void;
  readonly latencyMs: number;
  /** The simulator's clock, in milliseconds. */
  now(): number;
  /** Stops listening and drops open connections (including requests held by a timeout fault). */
  close(): Promise<void>;
}

interface CompiledRoute {
  template: string;
  re: RegExp;
  names: string[];
  handler: Route["handler"];
}

function compileRoute(route: Route): CompiledRoute {
  const names: string[] = [];
  const source = route.template
    .split("/")
    .map((segment) => {
      const m = /^\{(\w+)\}$/.exec(segment);
      if (m) {
        names.push(m[1]!);
        return "([^/]+)";
      }
      return segment.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return { template: route.template, re: new RegExp(`^${source}/?$`), names, handler: route.handler };
}

export function toMillis(value: number | Date): number {
  return value instanceof Date ? value.getTime() : value;
}

function queryRecord(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of params) {
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else out[key] = Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** Turns a valid JSON body into valid JSON of the wrong shape. */
function wrongShape(body: unknown): unknown {
  if (Array.isArray(body)) return { schemaVersion: "1.0.0", pairs: null, data: body.length };
  if (body && typeof body === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(body)) {
      if (Array.isArray(value)) out[key] = { count: value.length };
      else if (value && typeof value === "object") out[key] = [value];
      else if (typeof value === "number") out[key] = String(value);
      else out[key] = value;
    }
    return out;
  }
  return { value: body };
}

function malformedText(body: unknown, kind: MalformedKind): string {
  if (kind === "wrong-shape") return JSON.stringify(wrongShape(body));
  const text = JSON.stringify(body) ?? "null";
  // Cut mid-document (as a dropped connection behind a proxy would) and leave an unterminated string.
  return `${text.slice(0, Math.max(1, Math.floor(text.length / 2)))}"<!-- upstream`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startSimServer(service: SimService, options: SimServerOptions = {}): Promise<SimServer> {
  const host = options.host ?? "127.0.0.1";
  const clock: Clock = options.now ?? Date.now;
  const now = () => toMillis(clock());
  const routes = service.routes.map(compileRoute);
  const faults = new FaultController();
  const log: SimRequest[] = [];
  const sockets = new Set<Socket>();
  /** Arrival times within the rate limit's window, per key (one key without `perHeader`). */
  const arrivalsByKey = new Map<string, number[]>();
  const waiting = new Set<{ match: (path: string) => boolean; resolve: (request: SimRequest) => void }>();
  let latencyMs = options.latencyMs ?? 0;
  let seq = 0;
  let closed = false;

  const send = (res: ServerResponse, record: SimRequest, status: number, contentType: string, text: string) => {
    record.status = status;
    if (res.writableEnded || res.destroyed) return;
    res.statusCode = status;
    res.setHeader("content-type", contentType);
    res.setHeader("content-length", Buffer.byteLength(text));
    res.end(text);
  };
  const sendResult = (res: ServerResponse, record: SimRequest, result: RouteResult) => {
    for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
    send(res, record, result.status, "application/json; charset=utf-8", JSON.stringify(result.body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://sim.invalid");
    const path = url.pathname;
    const arrival = now();
    const matched = routes.find((r) => r.re.test(path));
    const record: SimRequest = {
      seq: ++seq,
      method: req.method ?? "GET",
      path,
      query: queryRecord(url.searchParams),
      route: matched?.template ?? null,
      time: arrival,
      receivedAt: Date.now(),
      headers: { ...req.headers },
      delayMs: 0,
    };
    log.push(record);
    for (const waiter of waiting) {
      if (!waiter.match(path)) continue;
      waiting.delete(waiter);
      waiter.resolve(record);
    }

    const fault: Fault | undefined = faults.take(path);
    const delay = latencyMs + (fault?.latencyMs ?? 0);
    record.delayMs = delay;
    if (fault?.latencyMs) record.fault = "latency";
    if (delay > 0) await sleep(delay);
    if (closed || req.destroyed) return;

    if (fault?.timeout) {
      record.fault = "timeout";
      return; // never answered; close() drops the connection
    }
    if (fault?.status !== undefined) {
      record.fault = "status";
      if (fault.retryAfterSeconds !== undefined) res.setHeader("retry-after", String(fault.retryAfterSeconds));
      const body = service.errorBody(fault.status, fault.retryAfterSeconds);
      send(res, record, fault.status, body.contentType, body.text);
      return;
    }
    if (options.rateLimit) {
      const { limit, windowMs, perHeader } = options.rateLimit;
      const key = perHeader ? String(req.headers[perHeader.toLowerCase()] ?? "") : "";
      let arrivals = arrivalsByKey.get(key);
      if (!arrivals) {
        arrivals = [];
        arrivalsByKey.set(key, arrivals);
      }
      const wall = Date.now();
      while (arrivals.length > 0 && arrivals[0]! <= wall - windowMs) arrivals.shift();
      if (arrivals.length >= limit) {
        const retryAfter = Math.max(1, Math.ceil((arrivals[0]! + windowMs - wall) / 1000));
        record.fault = "rate-limit";
        res.setHeader("retry-after", String(retryAfter));
        const body = service.errorBody(429, retryAfter);
        send(res, record, 429, body.contentType, body.text);
        return;
      }
      arrivals.push(wall);
    }

    const ctx: RouteContext = {
      params: {},
      query: url.searchParams,
      headers: req.headers,
      now: arrival,
      path,
    };
    let result: RouteResult | undefined = service.authorize?.(ctx);
    if (!result) {
      if (!matched) result = service.notFound(path);
      else if (req.method !== "GET" && req.method !== "HEAD") {
        result = { status: 405, body: { detail: `Method "${req.method}" not allowed.` }, headers: { allow: "GET" } };
      } else {
        const m = matched.re.exec(path)!;
        matched.names.forEach((name, i) => {
          ctx.params[name] = decodeURIComponent(m[i + 1]!);
        });
        try {
          result = matched.handler(ctx);
        } catch (error) {
          const body = service.errorBody(500, undefined);
          send(res, record, 500, body.contentType, body.text);
          console.error(`[${service.name}] ${path}: ${(error as Error).stack ?? error}`);
          return;
        }
      }
    }
    if (fault?.malformed !== undefined && result.status === 200) {
      record.fault = "malformed";
      const kind: MalformedKind = fault.malformed === true ? "invalid-json" : fault.malformed;
      send(res, record, 200, "application/json; charset=utf-8", malformedText(result.body, kind));
      return;
    }
    sendResult(res, record, result);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error(`[${service.name}] ${(error as Error).stack ?? error}`);
      if (!res.headersSent) res.destroy();
    });
  });
  // Idle keep-alive sockets stay open longer than any client keeps them (fetch keeps one a few seconds less than the
  // server announces). With Node's default of 5 s, a client stalled for a few seconds, as under CPU starvation,
  // could send its next request just as the server closes the socket, and see ECONNRESET.
  server.keepAliveTimeout = 65_000;
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}`,
    host,
    port,
    faults,
    requests(pattern?: RoutePattern) {
      if (pattern === undefined) return log.map((r) => ({ ...r }));
      const match = compilePattern(pattern);
      return log.filter((r) => match(r.path)).map((r) => ({ ...r }));
    },
    resetRequests() {
      log.length = 0;
    },
    nextRequest(pattern?: RoutePattern) {
      const match = pattern === undefined ? () => true : compilePattern(pattern);
      return new Promise<SimRequest>((resolve) => {
        waiting.add({ match, resolve });
      });
    },
    setLatency(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) throw new Error(`latency must be a non-negative number (got ${ms})`);
      latencyMs = ms;
    },
    get latencyMs() {
      return latencyMs;
    },
    now,
    close() {
      if (closed) return Promise.resolve();
      closed = true;
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
      });
    },
  };
}

import { createHash } from "node:crypto";
import type { z } from "zod";
import { ServiceError, uncharged } from "../errors/service-error.js";
import type { RequestBudget } from "../limits/request-budget.js";
import { countWork } from "../metering/work-meter.js";
import { type CircuitBreaker, createCircuitBreaker } from "./circuit-breaker.js";
import { createSemaphore, QueueFullError } from "./semaphore.js";
import { createTtlCache } from "./ttl-cache.js";

export interface UpstreamClientOptions {
  /** Shown in error messages: "the marketplace", "the market-data aggregator". */
  name: string;
  /** Told of each request's outcome, retries, cache hits and the circuit (metrics). */
  observer?: UpstreamObserver;
  baseUrl: string;
  headers?: Record<string, string>;
  /** For the whole call: every attempt and the waits between them (default 5 s). */
  timeoutMs?: number;
  /** Retries after the first attempt, on 429, 5xx and network errors. */
  retries?: number;
  /** First backoff; doubles each retry, unless the upstream's Retry-After says otherwise. */
  backoffMs?: number;
  /** Longest Retry-After the client waits for itself before giving up with 503. */
  maxRetryAfterMs?: number;
  maxConcurrency?: number;
  /** Requests that may wait for a free slot; past them a call is refused at once with 503 (default 256). */
  maxQueue?: number;
  /** Default time a successful answer is reused. */
  cacheTtlMs?: number;
  cacheEntries?: number;
  /** How long a 404 is remembered, so that asking again for what is not there costs no request (default 60 s). */
  notFoundTtlMs?: number;
  failureThreshold?: number;
  cooldownMs?: number;
  /** The requests a minute the upstream's key allows: a request past it is not sent (503 with Retry-After). */
  budget?: RequestBudget;
  fetch?: typeof globalThis.fetch;
  now?: () => number;
}

export interface GetOptions<S extends z.ZodType> {
  query?: Record<string, string | number | boolean | string[] | undefined>;
  /** The answer's expected shape: an answer that does not match is a bad answer (502). */
  schema: S;
  /** How long to reuse this answer (default: the client's cacheTtlMs). */
  ttlMs?: number;
  /** Answer `null` instead of failing when the upstream says 404. */
  notFoundAsNull?: boolean;
  /**
   * Headers for this request only (for example a wallet's `Authorization`), on top of the client's. Answers are
   * cached and coalesced per URL and header set, so one wallet's answer never serves another.
   */
  headers?: Record<string, string>;
}

/** A 4xx answer other than a 404 asked to be `null`: `upstream_error` (502), with the upstream's status. */
export class UpstreamStatusError extends ServiceError {
  constructor(
    readonly upstreamStatus: number,
    message: string,
    /** The answer's body (parsed JSON), for an upstream that says more than its status. Never shown to callers. */
    readonly upstreamBody?: unknown,
  ) {
    super("upstream_error", message);
    this.name = "UpstreamStatusError";
  }
}

export interface UpstreamClient {
  get<S extends z.ZodType>(path: string, options: GetOptions<S>): Promise<z.output<S> | null>;
  /** Requests made upstream so far (cache hits and coalesced calls excluded). */
  readonly requestCount: number;
}

/** A remembered 404 in the cache. */
const NOT_FOUND = Symbol("not found");

class RetryableError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number | undefined,
    readonly kind: "unavailable" | "error" | "timeout",
  ) {
    super(message);
  }
}

function parseRetryAfter(header: string | null, now: number): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A digest of a header set (names case-insensitive), so credentials key the cache without being kept in it. */
function headerSetHash(headers: Record<string, string>): string {
  const entries = Object.entries(headers)
    .map(([name, value]) => [name.toLowerCase(), value] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash("sha256").update(JSON.stringify(entries)).digest("hex");
}

function buildUrl(baseUrl: string, path: string, query: GetOptions<z.ZodType>["query"] = {}): string {
  const url = new URL(path, `${baseUrl.replace(/\/+$/, "")}/`);
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, String(v));
  }
  return url.toString();
}

/** What an upstream client reports of its work (metrics): requests by outcome, retries, cache hits, its circuit. */
export interface UpstreamObserver {
  request(outcome: "ok" | "error" | "timeout" | "unavailable" | "over_budget"): void;
  retry(): void;
  cacheHit(): void;
  circuit(open: boolean): void;
}

/**
 * An HTTP JSON client for one upstream service with what a paid tool needs from it: a timeout per attempt,
 * retries with exponential backoff on 429/5xx honouring Retry-After, a circuit breaker, a TTL cache, request
 * coalescing (concurrent identical GETs share one request) and bounded concurrency. Failures become the
 * service's upstream errors: 502 upstream_error, 503 upstream_unavailable (with Retry-After), 504 upstream_timeout.
 */
export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const now = options.now ?? Date.now;
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 5000;
  const retries = options.retries ?? 2;
  const backoffMs = options.backoffMs ?? 200;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 2000;
  const limit = createSemaphore(options.maxConcurrency ?? 8, options.maxQueue ?? 256);
  const notFoundTtlMs = options.notFoundTtlMs ?? 60_000;
  const cache = createTtlCache<unknown>(options.cacheEntries ?? 2000, now);
  const inFlight = new Map<string, Promise<unknown>>();
  const breaker: CircuitBreaker = createCircuitBreaker({
    failureThreshold: options.failureThreshold ?? 5,
    cooldownMs: options.cooldownMs ?? 30_000,
    now,
  });
  let requestCount = 0;
  const observer = options.observer;

  /**
   * One request, its body read in full under the same timeout. A connection that fails before the answer is
   * complete (refused, reset, a kept-alive socket closed under the request, a body cut short) is retried, as is a
   * timeout: every call here is a GET, safe to repeat.
   */
  async function attempt(
    url: string,
    headers: Record<string, string>,
    budgetMs: number,
  ): Promise<{ status: number; body: unknown }> {
    requestCount++;
    let res: Response | undefined;
    let text: string;
    const timedOut = (error: unknown) =>
      (error as Error).name === "TimeoutError" || (error as Error).name === "AbortError";
    try {
      res = await fetchImpl(url, {
        headers: { accept: "application/json", ...options.headers, ...headers },
        signal: AbortSignal.timeout(budgetMs),
      });
      if (res.status === 429 || res.status >= 500) {
        await res.body?.cancel();
        throw new RetryableError(
          `${options.name} answered ${res.status}`,
          parseRetryAfter(res.headers.get("retry-after"), now()),
          res.status === 429 || res.status === 503 ? "unavailable" : "error",
        );
      }
      text = await res.text();
    } catch (error) {
      if (error instanceof RetryableError) throw error;
      if (timedOut(error)) {
        throw new RetryableError(`${options.name} did not answer within ${timeoutMs} ms`, undefined, "timeout");
      }
      // No answer at all: unreachable (503). An answer cut off after its headers: a bad answer (502).
      throw res === undefined
        ? new RetryableError(`${options.name} could not be reached`, undefined, "unavailable")
        : new RetryableError(`${options.name} cut its answer short`, undefined, "error");
    }
    try {
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    } catch {
      throw new ServiceError("upstream_error", `${options.name} gave an answer that is not JSON.`);
    }
  }

  function toHttpError(error: RetryableError): ServiceError {
    if (error.kind === "timeout") return new ServiceError("upstream_timeout", uncharged(`${error.message}.`));
    if (error.kind === "unavailable") {
      const seconds = Math.max(1, Math.ceil((error.retryAfterMs ?? breaker.retryInMs()) / 1000) || 5);
      return new ServiceError("upstream_unavailable", uncharged(`${error.message}.`, `retry in ${seconds} s`), [], {
        "Retry-After": String(seconds),
      });
    }
    return new ServiceError("upstream_error", uncharged(`${error.message}.`));
  }

  /** 503 while the circuit is open: the upstream is not asked. */
  function refuseWhileOpen(): void {
    const closedIn = breaker.retryInMs();
    if (closedIn > 0) {
      throw new ServiceError(
        "upstream_unavailable",
        uncharged(`${options.name} is failing; calls are paused for ${Math.ceil(closedIn / 1000)} s.`),
        [],
        { "Retry-After": String(Math.ceil(closedIn / 1000)) },
      );
    }
  }

  /** One request of the key's budget, or 503 at once: the upstream is not asked past its plan. */
  async function takeFromBudget(): Promise<void> {
    const wait = await options.budget?.take();
    if (wait === undefined) return;
    observer?.request("over_budget");
    throw new ServiceError(
      "upstream_unavailable",
      uncharged(`${options.name}'s request budget for this minute is spent.`, `retry in ${wait} s`),
      [],
      { "Retry-After": String(wait) },
    );
  }

  async function fetchWithRetries(
    url: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: unknown }> {
    let last: RetryableError | undefined;
    // One deadline for the call, its retries included: a hung upstream is answered within the timeout, not once per
    // attempt. It starts when the first attempt gets its slot: waiting behind the call's siblings (a radar's fan-out)
    // is not the upstream being slow.
    let deadline: number | undefined;
    for (let i = 0; i <= retries; i++) {
      if (deadline !== undefined && deadline - performance.now() <= 0) {
        last = new RetryableError(`${options.name} did not answer within ${timeoutMs} ms`, undefined, "timeout");
        break;
      }
      refuseWhileOpen();
      try {
        return await limit(async () => {
          // Checked again with the slot: the circuit may have opened while this call waited for it.
          refuseWhileOpen();
          await takeFromBudget();
          deadline ??= performance.now() + timeoutMs;
          // The outcome is counted before the slot is given to the next call, so that call sees an opened circuit.
          try {
            const answer = await attempt(url, headers, Math.max(1, Math.ceil(deadline - performance.now())));
            breaker.success();
            observer?.request("ok");
            observer?.circuit(false);
            return answer;
          } catch (error) {
            if (error instanceof RetryableError) {
              breaker.failure();
              observer?.request(error.kind);
              observer?.circuit(breaker.retryInMs() > 0);
            } else observer?.request("error");
            throw error;
          }
        });
      } catch (error) {
        if (error instanceof QueueFullError) {
          throw new ServiceError(
            "upstream_unavailable",
            uncharged(`${options.name} is busy with other requests; retry in 1 s.`),
            [],
            { "Retry-After": "1" },
          );
        }
        if (!(error instanceof RetryableError)) throw error;
        last = error;
        if (i === retries) break;
        const wait = error.retryAfterMs ?? backoffMs * 2 ** i;
        // No retry that could not finish in time: the caller gets the failure now, with its real cause.
        if (wait > maxRetryAfterMs || performance.now() + wait >= deadline!) break;
        observer?.retry();
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
    throw toHttpError(last!);
  }

  return {
    get requestCount() {
      return requestCount;
    },
    async get(path, getOptions) {
      // A read the answer needed, whether the cache serves it or not: the call's price does not hang on another's.
      countWork("upstreamReads");
      const url = buildUrl(options.baseUrl, path, getOptions.query);
      const headers = getOptions.headers ?? {};
      const key = Object.keys(headers).length === 0 ? url : `${url}\n${headerSetHash(headers)}`;
      const notFound = () => {
        if (getOptions.notFoundAsNull) return null;
        throw new UpstreamStatusError(404, uncharged(`${options.name} answered 404.`));
      };
      const cached = cache.get(key);
      if (cached !== undefined) observer?.cacheHit();
      if (cached === NOT_FOUND) return notFound() as never;
      if (cached !== undefined) return cached as never;
      let pending = inFlight.get(key);
      if (!pending) {
        pending = (async () => {
          const { status, body } = await fetchWithRetries(url, headers);
          if (status === 404) {
            // Remembered for a while: asking again for what is not there must not cost the upstream a request.
            cache.set(key, NOT_FOUND, notFoundTtlMs);
            if (getOptions.notFoundAsNull) return null;
          }
          if (status >= 400)
            throw new UpstreamStatusError(status, uncharged(`${options.name} answered ${status}.`), body);
          const parsed = getOptions.schema.safeParse(body);
          if (!parsed.success) {
            throw new ServiceError(
              "upstream_error",
              uncharged(`${options.name} gave an answer of an unexpected shape.`),
            );
          }
          cache.set(key, parsed.data, getOptions.ttlMs ?? options.cacheTtlMs ?? 30_000);
          return parsed.data;
        })().finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending as never;
    },
  };
}

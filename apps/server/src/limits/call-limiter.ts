/**
 * Limits on the calls one party makes: how many it has in flight at once, and how many it starts per second. The
 * paid routes take a slot per client address (transports/http/middleware/ip-limits.ts) and per payer
 * (`takePayerSlot`, paid-call/call-bookkeeping.ts) before any tool runs; a refusal is a 429 with `Retry-After`, and
 * costs nothing. The rate is counted where the store is: on Postgres, one count for every instance on the database;
 * in flight is counted per instance (docs/decisions.md, "Limits").
 */
import type pg from "pg";
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from "rate-limiter-flexible";

export interface LimitSettings {
  /** Calls started per second, sustained (a second's worth may come at once). */
  ratePerSecond: number;
  /** Calls in flight at once. */
  concurrency: number;
}

/** A slot taken: give it back exactly once, when the call is over. */
export interface Slot {
  release(): void;
}

export type SlotRefusal = { ok: false; why: "rate" | "concurrency"; retryAfterSeconds: number };

export interface CallLimiter {
  /** Takes a slot for one call of `key`, or says how long to wait. */
  take(key: string): Promise<({ ok: true } & Slot) | SlotRefusal>;
  /** Calls of `key` in flight now. */
  inFlight(key: string): number;
}

/**
 * Builds the counter of one limit: `points` per window of `windowSeconds` (default 1). `name` keeps the limits'
 * keys apart in a shared store.
 */
export type RateCounter = (name: string, points: number, windowSeconds?: number) => RateLimiterAbstract;

/** Counts in this process. */
export const memoryRateCounter: RateCounter = (name, points, windowSeconds = 1) =>
  new RateLimiterMemory({ keyPrefix: name, points, duration: windowSeconds });

/**
 * Counts in Postgres (the `rate_limits` table of migration 4), one count for every instance on the database. When
 * the database does not answer, each instance goes on counting on its own rather than refusing every call.
 * `windowSeconds` sets the window of the limits that do not say theirs: a test that must not depend on how fast the
 * machine sends its calls counts them over a longer one.
 */
export function postgresRateCounter(pool: pg.Pool, options: { windowSeconds?: number } = {}): RateCounter {
  return (name, points, windowSeconds = options.windowSeconds ?? 1) =>
    new RateLimiterPostgres({
      storeClient: pool,
      storeType: "pool",
      tableName: "rate_limits",
      tableCreated: true,
      keyPrefix: name,
      points,
      duration: windowSeconds,
      insuranceLimiter: memoryRateCounter(name, points, windowSeconds),
    });
}

export function createCallLimiter(
  settings: LimitSettings,
  options: { name?: string; rates?: RateCounter } = {},
): CallLimiter {
  const rate = (options.rates ?? memoryRateCounter)(options.name ?? "calls", settings.ratePerSecond);
  const inFlight = new Map<string, number>();

  return {
    async take(key) {
      if ((inFlight.get(key) ?? 0) >= settings.concurrency)
        return { ok: false, why: "concurrency", retryAfterSeconds: 1 };
      try {
        await rate.consume(key);
      } catch (error) {
        if (!(error instanceof RateLimiterRes)) throw error;
        return { ok: false, why: "rate", retryAfterSeconds: Math.max(1, Math.ceil(error.msBeforeNext / 1000)) };
      }
      // Counted after the await: a concurrent take may have filled the last slot meanwhile.
      const now = inFlight.get(key) ?? 0;
      if (now >= settings.concurrency) return { ok: false, why: "concurrency", retryAfterSeconds: 1 };
      inFlight.set(key, now + 1);
      let released = false;
      return {
        ok: true,
        release() {
          if (released) return;
          released = true;
          const left = (inFlight.get(key) ?? 1) - 1;
          if (left <= 0) inFlight.delete(key);
          else inFlight.set(key, left);
        },
      };
    },
    inFlight: (key) => inFlight.get(key) ?? 0,
  };
}

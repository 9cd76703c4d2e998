/**
 * A budget of requests per minute for an upstream's API key, as its plan allows (OpenSea's free key: 60 reads a
 * minute): every request sent to the upstream takes one, cached answers take none. Counted where the request rates
 * are, so instances on one Postgres database share their key's budget (docs/decisions.md, "Limits").
 */
import { createHash } from "node:crypto";
import { RateLimiterRes } from "rate-limiter-flexible";
import { memoryRateCounter, type RateCounter } from "./call-limiter.js";

export interface RequestBudget {
  /** Takes one request; undefined when taken, else the seconds until the budget has room again. */
  take(): Promise<number | undefined>;
}

/**
 * `perMinute` requests a minute for `key` (an API key: only a digest of it is stored). `perMinute` 0 is no budget.
 */
export function createRequestBudget(
  perMinute: number,
  options: { name: string; key: string; rates?: RateCounter },
): RequestBudget | undefined {
  if (perMinute <= 0) return undefined;
  const counter = (options.rates ?? memoryRateCounter)(`budget_${options.name}`, perMinute, 60);
  const keyDigest = createHash("sha256").update(options.key).digest("hex").slice(0, 16);
  return {
    async take() {
      try {
        await counter.consume(keyDigest);
        return undefined;
      } catch (error) {
        if (!(error instanceof RateLimiterRes)) throw error;
        return Math.max(1, Math.ceil(error.msBeforeNext / 1000));
      }
    },
  };
}

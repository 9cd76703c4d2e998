/**
 * A budget of failures per party and window: so many failures are forgiven, then the party is refused until the
 * window ends. The paid path gives each payer a budget of failed settlements, so that a payer whose payments keep
 * failing after they were verified (cancelled, spent elsewhere, front-run) stops costing the facilitator gas
 * (docs/threat-model.md, "The facilitator's gas"). Counted where the request rates are: on Postgres, for every
 * instance at once.
 */
import { memoryRateCounter, type RateCounter } from "./call-limiter.js";

export interface FailureBudgetSettings {
  /** Failures forgiven per window. */
  failures: number;
  windowSeconds: number;
}

export interface FailureBudget {
  /** Seconds until `key` may be served again once it has spent its budget; undefined while it has some left. */
  exhausted(key: string): Promise<number | undefined>;
  /** Counts one failure of `key`. */
  spend(key: string): Promise<void>;
}

export function createFailureBudget(
  settings: FailureBudgetSettings,
  options: { name: string; rates?: RateCounter },
): FailureBudget {
  const counter = (options.rates ?? memoryRateCounter)(options.name, settings.failures, settings.windowSeconds);
  return {
    async exhausted(key) {
      const spent = await counter.get(key);
      if (!spent || spent.consumedPoints < settings.failures) return undefined;
      return Math.max(1, Math.ceil(spent.msBeforeNext / 1000));
    },
    async spend(key) {
      await counter.penalty(key, 1);
    },
  };
}

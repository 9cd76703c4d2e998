import type { UpstreamObserver } from "./upstream-client.js";

/** An upstream as the operator console shows it: whether its circuit is open, and its key's budget. */
export interface UpstreamHealth {
  name: string;
  circuitOpen: boolean;
  budgetPerMinute: number | null;
}

/**
 * What the upstream clients' circuits are doing, for the operator console: each client's observer goes through it
 * (and on to the metrics' observer when metrics are on), so the console sees the circuits with metrics off too.
 */
export interface UpstreamHealthBoard {
  /** The observer for the upstream `name`, passing each report on to `next`. */
  observer(name: string, budgetPerMinute: number | undefined, next?: UpstreamObserver): UpstreamObserver;
  snapshot(): UpstreamHealth[];
}

export function createUpstreamHealthBoard(): UpstreamHealthBoard {
  const upstreams = new Map<string, UpstreamHealth>();
  return {
    observer(name, budgetPerMinute, next) {
      const health: UpstreamHealth = { name, circuitOpen: false, budgetPerMinute: budgetPerMinute || null };
      upstreams.set(name, health);
      return {
        request: (outcome) => next?.request(outcome),
        retry: () => next?.retry(),
        cacheHit: () => next?.cacheHit(),
        circuit: (open) => {
          health.circuitOpen = open;
          next?.circuit(open);
        },
      };
    },
    snapshot: () => [...upstreams.values()].map((health) => ({ ...health })),
  };
}

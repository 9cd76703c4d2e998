import type { PaymentRefusalReason } from "@agent-tools/schema";

/**
 * Paid calls refused (402) by reason since this instance started, counted whether or not metrics are exposed
 * (METRICS_PORT): the operator console shows them. The reasons are the schema's closed set, so a map holds them all.
 */
export interface RefusalCounts {
  add(reason: PaymentRefusalReason): void;
  /** The counts so far; a reason not seen yet is left out. */
  byReason(): Record<string, number>;
}

export function createRefusalCounts(): RefusalCounts {
  const counts = new Map<PaymentRefusalReason, number>();
  return {
    add(reason) {
      counts.set(reason, (counts.get(reason) ?? 0) + 1);
    },
    byReason: () => Object.fromEntries(counts),
  };
}

/**
 * Single-use keys of payments, in this instance: a fast first check before the ledger's claim, which is the one
 * shared by every instance (sign-in nonces are kept in the store: store/sign-in-nonces.ts).
 */
export interface ReplayGuard {
  /** Takes `key` for one call in flight; false when it is in flight elsewhere or already used. */
  claim(key: string): boolean;
  /** Gives back a claim whose call was not charged (so the same authorization may be retried). */
  release(key: string): void;
  /** Marks `key` used for good (the payment settled, or the sign-in was spent). */
  consume(key: string): void;
  /** True when `key` was consumed. */
  isUsed(key: string): boolean;
}

/**
 * In-memory guard. Used keys are kept for `retentionMs` (long enough to outlive the signed message's own
 * validity window, after which a replay is rejected by its timestamps anyway).
 */
export function createMemoryReplayGuard(retentionMs: number, now: () => number = Date.now): ReplayGuard {
  const inFlight = new Set<string>();
  const used = new Map<string, number>();
  let lastSweep = now();

  function sweep(): void {
    const t = now();
    if (t - lastSweep < 60_000) return;
    lastSweep = t;
    for (const [key, expiresAt] of used) if (expiresAt <= t) used.delete(key);
  }

  return {
    claim(key) {
      sweep();
      if (inFlight.has(key) || used.has(key)) return false;
      inFlight.add(key);
      return true;
    },
    release(key) {
      inFlight.delete(key);
    },
    consume(key) {
      inFlight.delete(key);
      used.set(key, now() + retentionMs);
    },
    isUsed(key) {
      return used.has(key);
    },
  };
}

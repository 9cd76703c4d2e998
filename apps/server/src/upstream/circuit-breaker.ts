/**
 * Opens after `failureThreshold` failures in a row and refuses calls for `cooldownMs`; then lets calls through
 * again (half-open) and closes on the first success.
 */
export interface CircuitBreaker {
  /** Milliseconds until calls are allowed again; 0 when closed or half-open. */
  retryInMs(): number;
  success(): void;
  failure(): void;
}

export function createCircuitBreaker(options: {
  failureThreshold: number;
  cooldownMs: number;
  now: () => number;
}): CircuitBreaker {
  let failures = 0;
  let openUntil = 0;
  return {
    retryInMs: () => Math.max(0, openUntil - options.now()),
    success() {
      failures = 0;
      openUntil = 0;
    },
    failure() {
      failures++;
      if (failures >= options.failureThreshold) openUntil = options.now() + options.cooldownMs;
    },
  };
}

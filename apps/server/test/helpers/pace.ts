/**
 * A pace for a load generator: the calls it lets through start at most `perSecond` a second, however fast the
 * machine answers. A load that must stay within a limit the server enforces (a payer's rate) is paced below it, so
 * that a fast machine does not cross the limit and a slow one simply runs below the pace (docs/architecture.md,
 * "How the tests wait").
 */
export type Pace = () => Promise<void>;

export function createPace(perSecond: number): Pace {
  if (!(perSecond > 0)) throw new Error(`a pace needs a positive rate, not ${perSecond}`);
  const spacingMs = 1000 / perSecond;
  let next = performance.now();
  return async () => {
    const slot = Math.max(next, performance.now());
    next = slot + spacingMs;
    const wait = slot - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };
}

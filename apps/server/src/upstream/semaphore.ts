/** Thrown when a task would wait behind more than the queue holds: the upstream is busy, try again shortly. */
export class QueueFullError extends Error {
  constructor(readonly waiting: number) {
    super(`${waiting} requests are already waiting`);
    this.name = "QueueFullError";
  }
}

/**
 * At most `limit` tasks at once; at most `maxWaiting` others wait, in order. A task beyond that is refused at once
 * with {@link QueueFullError} instead of piling up behind a slow upstream without bound.
 */
export function createSemaphore(
  limit: number,
  maxWaiting = Number.POSITIVE_INFINITY,
): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    // A task that waits is handed the slot of the one that finishes: `running` never goes above `limit`, even for
    // a moment in which a newcomer could otherwise take the slot first.
    if (running >= limit) {
      if (waiting.length >= maxWaiting) throw new QueueFullError(waiting.length);
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else running++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

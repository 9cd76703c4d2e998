/** At most `limit` tasks at once; the others wait in order. */
export function createSemaphore(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    // A task that waits is handed the slot of the one that finishes: `running` never goes above `limit`, even for
    // a moment in which a newcomer could otherwise take the slot first.
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

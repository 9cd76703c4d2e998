/**
 * Loaded into the server process by the reliability suite (`node --expose-gc --import`): on SIGUSR2 it runs a full
 * garbage collection and prints one line of memory figures, so the soak can tell a leak (live memory growing) from a
 * heap that V8 keeps reserved after a burst (resident memory that stays).
 */
process.on("SIGUSR2", () => {
  globalThis.gc?.();
  const { rss, heapTotal, heapUsed, external } = process.memoryUsage();
  const uptime = process.uptime();
  process.stderr.write(`memory-probe ${JSON.stringify({ rss, heapTotal, heapUsed, external, uptime })}\n`);
});

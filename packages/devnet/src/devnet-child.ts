/** The child side of `spawnDevnetProcess()` (devnet-process.ts): one devnet, reported and closed over IPC. */

import { type RunningDevnet, startDevnet } from "./devnet.js";
import type { FromDevnetChild, ToDevnetChild } from "./devnet-process.js";

const send = (message: FromDevnetChild) => process.send?.(message);
let devnet: RunningDevnet | undefined;

process.on("message", async (message: ToDevnetChild) => {
  if (message.type === "start") {
    try {
      const { log, ...options } = message.options;
      devnet = await startDevnet({
        ...options,
        ...(log ? { log: (line: string) => send({ type: "log", line }) } : {}),
      });
      send({ type: "ready", deployment: devnet.deployment, seedDurationMs: devnet.seedDurationMs });
    } catch (error) {
      send({ type: "failed", message: error instanceof Error ? error.message : String(error) });
      process.exit(1);
    }
    return;
  }
  await devnet?.close();
  process.exit(0);
});

// The parent went away (it exited or was killed): nothing is left to serve.
process.on("disconnect", () => {
  void (devnet?.close() ?? Promise.resolve()).finally(() => process.exit(0));
});
// Ctrl-C in a terminal reaches the whole process group; the parent decides when the chains stop.
process.on("SIGINT", () => {});

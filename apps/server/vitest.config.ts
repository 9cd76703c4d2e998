import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The files share one module graph (docs/architecture.md, "What a test run costs"): the chains' runtime, viem
    // and the modules under test load once, not once per file.
    isolate: false,
    // Two files at a time even on two cores: many of them wait on processes they started (servers, chains, a
    // browser), and one at a time left a core idle for the last third of the run (docs/architecture.md).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The files share one module graph (docs/architecture.md, "What a test run costs"): the chains' runtime, viem
    // and the modules under test load once, not once per file.
    isolate: false,
    // Two files at a time even on two cores (vitest's default there is one): a file spends much of its time waiting
    // on its chains and its server, and the other core would sit idle once the other packages' tests are done
    // (docs/architecture.md, "What a test run costs").
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

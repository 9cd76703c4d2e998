import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The files share one module graph (docs/architecture.md, "What a test run costs"): the chains' runtime, viem
    // and the modules under test load once, not once per file.
    isolate: false,
    testTimeout: 60_000,
    // A start of the embedded default: about 15 s on an idle 2-core machine, past two minutes on one loaded
    // beside the other packages' tests. The deadline is for a start that hangs, not for a slow one.
    hookTimeout: 300_000,
  },
});

import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The files share one module graph (docs/architecture.md, "What a test run costs"): the chains' runtime, viem
    // and the modules under test load once, not once per file.
    isolate: false,
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

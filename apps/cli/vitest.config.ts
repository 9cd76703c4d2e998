import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The files share one module graph (docs/architecture.md, "What a test run costs"): the chains' runtime, viem
    // and the modules under test load once, not once per file.
    isolate: false,
    // One embedded default for all files (test/global-setup.ts), and a test compares the ledger's total before and
    // after a call: the files run one after another, so another file's payments never land in between.
    globalSetup: ["test/global-setup.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    // A hook that packs or installs packages can take minutes on a loaded machine: the deadline is for one that
    // hangs, not for a slow one.
    hookTimeout: 300_000,
  },
});

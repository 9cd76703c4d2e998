import { defineConfig } from "vitest/config";

/**
 * `pnpm test:reliability`: the reliability suite against real processes (reliability/). Its two files run side by
 * side, each with an environment of its own (chains, upstreams, the built server): most of their time is their
 * scenarios' own pace, so together they take the time of the longer (docs/architecture.md, "What a test run costs").
 */
export default defineConfig({
  test: {
    include: ["reliability/**/*.test.ts"],
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 300_000,
    hookTimeout: 180_000,
  },
});

import { defineConfig } from "vitest/config";

/**
 * `pnpm test:reliability`: the reliability suite against real processes (reliability/), its two files one after the
 * other, each with an environment of its own (chains, upstreams, the built server). Side by side they would take
 * the time of the longer, but the soak's load then weighs on the payment scenarios timed by blocks every second
 * (docs/architecture.md, "What a test run costs").
 */
export default defineConfig({
  test: {
    include: ["reliability/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 180_000,
  },
});

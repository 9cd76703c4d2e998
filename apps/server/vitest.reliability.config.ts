import { defineConfig } from "vitest/config";

/** `pnpm test:reliability`: the reliability suite against real processes (reliability/), one file, in order. */
export default defineConfig({
  test: {
    include: ["reliability/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 180_000,
  },
});

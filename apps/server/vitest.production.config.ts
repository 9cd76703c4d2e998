import { defineConfig } from "vitest/config";

/** `pnpm test:production`: the production rehearsal (production/), one file, in order. */
export default defineConfig({
  test: {
    include: ["production/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});

import { defineConfig } from "vitest/config";

/** `pnpm test:scale`: three instances behind nginx on one Postgres database (scale/), one file, in order. */
export default defineConfig({
  test: {
    include: ["scale/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});

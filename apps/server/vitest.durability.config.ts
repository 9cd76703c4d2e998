import { defineConfig } from "vitest/config";

/**
 * `pnpm test:durability`: the durable records under real processes killed and restarted (durability/), run after
 * turbo beside the reliability suite (scripts/test.sh; docs/architecture.md, "What a test run costs").
 */
export default defineConfig({
  test: {
    include: ["durability/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});

import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The artifacts test recompiles every contract with solc-js (~15 s on a 2-core machine).
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});

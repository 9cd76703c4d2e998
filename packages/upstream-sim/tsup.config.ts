import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/cli.ts"],
  format: ["esm"],
  dts: { entry: "src/index.ts" },
  sourcemap: true,
  clean: true,
  target: "node20",
  // The devnet package loads Hardhat (EDR's native binding) at import time: never bundle it.
  external: ["@agent-tools/devnet", "viem", /^viem\//],
});

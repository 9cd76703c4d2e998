import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/cli.ts", "src/devnet-child.ts"],
  format: ["esm"],
  dts: { entry: "src/index.ts" },
  sourcemap: true,
  clean: true,
  target: "node20",
  // Hardhat loads EDR's native binding and its own plugins at run time: never bundle them.
  external: ["hardhat", /^hardhat\//, /^@nomicfoundation\//],
});

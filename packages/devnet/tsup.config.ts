import { defineConfig } from "tsup";

export default defineConfig({
  // devnet-process and facts are entries of their own: a parent that only forks the chains' process, or a simulator
  // that only needs the devnet's accounts and schedule, loads nothing of Hardhat.
  entry: ["src/index.ts", "src/cli.ts", "src/devnet-child.ts", "src/devnet-process.ts", "src/facts.ts"],
  format: ["esm"],
  dts: { entry: ["src/index.ts", "src/devnet-process.ts", "src/facts.ts"] },
  sourcemap: true,
  clean: true,
  target: "node20",
  // Hardhat loads EDR's native binding and its own plugins at run time: never bundle them.
  external: ["hardhat", /^hardhat\//, /^@nomicfoundation\//],
});

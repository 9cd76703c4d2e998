import { defineConfig } from "tsup";

// The wire contracts (@agent-tools/schema) are compiled into the SDK, code and types alike, so the published
// tarball needs nothing else from this repository; its own dependencies are declared in package.json.
export default defineConfig({
  entry: ["src/index.ts", "src/mcp.ts", "src/contracts.ts"],
  format: ["esm", "cjs"],
  dts: { resolve: ["@agent-tools/schema"] },
  noExternal: ["@agent-tools/schema"],
  sourcemap: true,
  clean: true,
  target: "node20",
});

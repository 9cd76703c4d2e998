import { fileURLToPath } from "node:url";
import { defineConfig } from "tsup";

// The wire contracts (@agent-tools/schema) are compiled into the SDK, code and types alike, so the published
// tarball needs nothing else from this repository; its own dependencies are declared in package.json.
export default defineConfig({
  entry: ["src/index.ts", "src/mcp.ts", "src/a2a.ts", "src/contracts.ts"],
  format: ["esm", "cjs"],
  dts: { resolve: ["@agent-tools/schema"] },
  noExternal: ["@agent-tools/schema"],
  // From its sources, module by module: the package has no side effects, so what the SDK does not use (the OpenAPI
  // builder and its generator library) is left out of the bundle, its imports included.
  esbuildOptions(options) {
    options.alias = { "@agent-tools/schema": fileURLToPath(new URL("../schema/src/index.ts", import.meta.url)) };
  },
  sourcemap: true,
  clean: true,
  target: "node20",
});

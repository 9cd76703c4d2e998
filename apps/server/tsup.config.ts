import { defineConfig } from "tsup";

export default defineConfig({
  // The embedded-process entry is what test runs of other packages import in a vitest global setup, where the
  // server's own modules (which resolve assets with import.meta.resolve) cannot load.
  entry: ["src/index.ts", "src/main.ts", "src/embedded.ts", "src/embedded-process.ts", "src/prepare-store.ts"],
  format: ["esm"],
  dts: { entry: ["src/index.ts", "src/embedded-process.ts"] },
  sourcemap: true,
  clean: true,
  target: "node20",
});

import { defineConfig } from "tsup";

export default defineConfig({
  // The embedded-process entry is what test runs of other packages import in a vitest global setup, where the
  // server's own modules (which resolve assets with import.meta.resolve) cannot load.
  entry: {
    index: "src/index.ts",
    main: "src/startup/main.ts",
    embedded: "src/startup/embedded.ts",
    "embedded-process": "src/startup/embedded-process.ts",
    "prepare-store": "src/startup/prepare-store.ts",
  },
  format: ["esm"],
  dts: { entry: { index: "src/index.ts", "embedded-process": "src/startup/embedded-process.ts" } },
  sourcemap: true,
  clean: true,
  target: "node20",
});

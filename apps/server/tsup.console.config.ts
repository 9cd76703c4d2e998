import { defineConfig } from "tsup";

// The operator console's script, for the browser: one file with everything it imports, served by the server itself
// (transports/http/routes/operator-console.ts), so the page loads nothing from elsewhere. Built after the server (its `clean`).
export default defineConfig({
  entry: { console: "src/transports/http/console/console-app.ts" },
  outDir: "dist/console",
  format: ["esm"],
  platform: "browser",
  target: "es2022",
  noExternal: [/.*/],
  minify: true,
  // One file: the server serves console.js alone.
  splitting: false,
  clean: false,
});

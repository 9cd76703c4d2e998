import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/bin.ts"],
  format: ["esm"],
  clean: true,
  sourcemap: true,
  target: "node20",
  // One self-contained program: the SDK, its schema and every library in the package, so the tarball installs with
  // nothing else. What only some commands need (the client, MCP) lands in chunks loaded when they run.
  noExternal: [/.*/],
  splitting: true,
  platform: "node",
  banner: {
    js: '#!/usr/bin/env node\nimport { createRequire as __createRequire } from "node:module";\nconst require = __createRequire(import.meta.url);',
  },
});

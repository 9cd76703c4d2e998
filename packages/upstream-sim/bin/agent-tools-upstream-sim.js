#!/usr/bin/env node
// The command as pnpm links it at install time, before the package is built: a bin must name a file the checkout
// has, or pnpm warns and links nothing. The command itself is the build's dist/cli.js.
import("../dist/cli.js").catch((error) => {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist/cli.js")) throw error;
  console.error(
    "agent-tools-upstream-sim: the package is not built yet; run `pnpm build` at the repository's root first.",
  );
  process.exitCode = 1;
});

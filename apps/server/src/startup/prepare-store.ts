import { preparePgliteTemplate } from "../store/pglite.js";

/**
 * `node dist/prepare-store.js` (run by `npm run setup`): runs Postgres' initdb for the embedded database once, ahead
 * of the first `pnpm start`, which then copies the cluster kept instead of spending some seconds of CPU on it.
 */
const outcome = await preparePgliteTemplate();
process.stdout.write(
  outcome === "made"
    ? "setup: prepared the embedded database (Postgres' initdb in WebAssembly, once per machine)\n"
    : outcome === "kept"
      ? "setup: the embedded database was prepared before\n"
      : "setup: the embedded database cannot be prepared ahead here (no writable node_modules/.cache); the first start prepares it\n",
);

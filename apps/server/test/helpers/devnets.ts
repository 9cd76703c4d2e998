import { createInProcessDevnetPool } from "@agent-tools/devnet";

/**
 * The seeded chains of this worker's test files: they run one after another in one process (vitest `isolate: false`),
 * so an L1 seeded for one is reverted and lent to the next instead of seeded again (docs/architecture.md, "What a
 * test run costs"). A devnet's `close()` gives it back.
 */
export const devnets = createInProcessDevnetPool();

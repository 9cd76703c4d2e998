import type pg from "pg";
import type { Address } from "viem";

/** Thrown when another instance on the same database settles with one of this instance's facilitator keys. */
export class FacilitatorKeyInUseError extends Error {
  constructor(readonly addresses: Address[]) {
    super(
      `The facilitator key of ${addresses.join(", ")} is in use by another instance on this database. Each instance ` +
        "numbers its own settlement transactions, so two instances on one key would collide: give each instance its " +
        'own FACILITATOR_PRIVATE_KEY or FACILITATOR_PRIVATE_KEYS (docs/testing.md, "Running several instances").',
    );
    this.name = "FacilitatorKeyInUseError";
  }
}

/** Held for the life of the process; `release` gives the keys back (the database does so itself if we die). */
export interface FacilitatorKeyLocks {
  release(): Promise<void>;
}

/**
 * Takes a session advisory lock per facilitator address on a connection kept open, so that two instances on one
 * database never settle with the same key (its nonces are assigned by the instance: see settlement/settlement-sender.ts).
 * A process that dies loses its connection and its locks with it; a restart right after a kill may find the old
 * session not yet gone, so a lock held elsewhere is asked for again until `waitMs` has passed.
 */
export async function lockFacilitatorKeys(
  pool: pg.Pool,
  addresses: Address[],
  options: { waitMs?: number; retryMs?: number } = {},
): Promise<FacilitatorKeyLocks> {
  const connection = await pool.connect();
  const deadline = Date.now() + (options.waitMs ?? 10_000);
  const held = new Set<string>();
  try {
    for (;;) {
      for (const address of addresses) {
        if (held.has(address)) continue;
        const [row] = (
          await connection.query<{ locked: boolean }>("SELECT pg_try_advisory_lock(72610003, hashtext($1)) AS locked", [
            address.toLowerCase(),
          ])
        ).rows;
        if (row?.locked) held.add(address);
      }
      const missing = addresses.filter((address) => !held.has(address));
      if (missing.length === 0) break;
      if (Date.now() >= deadline) throw new FacilitatorKeyInUseError(missing);
      await new Promise((resolve) => setTimeout(resolve, options.retryMs ?? 250));
    }
  } catch (error) {
    // Closing the session gives back whatever was taken.
    connection.release(true);
    throw error;
  }
  return {
    async release() {
      await connection.query("SELECT pg_advisory_unlock_all()").catch(() => undefined);
      connection.release();
    },
  };
}

import type { Database } from "./database.js";

/** What became of a sign-in nonce asked for one call. */
export type SignInNonceClaim = "claimed" | "spent" | "in_use";

/**
 * Sign-in nonces of `SIGN-IN-WITH-X` headers, kept in the shared store: a header serves one call, on any instance
 * and across restarts. A nonce is claimed for the call it came with, then spent when that call is served, or
 * given back when the call failed. Rows outlive the message's own validity window, then go.
 */
export interface SignInNonceStore {
  /** Takes `nonce` of `address` for one call; `expiresAt` is when the message can no longer be used anyway. */
  claim(address: string, nonce: string, expiresAt: Date): Promise<SignInNonceClaim>;
  /** Whether `nonce` of `address` already served a call (a read, for refusing a stale sign-in early). */
  isSpent(address: string, nonce: string): Promise<boolean>;
  /** Marks a claimed nonce spent: it served its call. */
  spend(address: string, nonce: string): Promise<void>;
  /** Gives a claimed (unspent) nonce back: its call failed and cost nothing. */
  release(address: string, nonce: string): Promise<void>;
  /** Deletes nonces past their expiry; returns how many. */
  sweep(now: Date): Promise<number>;
}

/** Nonces are chosen by the signer: two addresses may pick the same one, so the key is both. */
const keyOf = (address: string, nonce: string) => `${address.toLowerCase()}:${nonce}`;

export function createSignInNonceStore(db: Database): SignInNonceStore {
  return {
    async claim(address, nonce, expiresAt) {
      const key = keyOf(address, nonce);
      const inserted = await db.query(
        `INSERT INTO sign_in_nonces (key, status, expires_at) VALUES ($1, 'in_use', $2)
         ON CONFLICT (key) DO NOTHING RETURNING key`,
        [key, expiresAt],
      );
      if (inserted.length === 1) return "claimed";
      const [existing] = await db.query<{ status: string }>("SELECT status FROM sign_in_nonces WHERE key = $1", [key]);
      return existing?.status === "spent" ? "spent" : "in_use";
    },
    async isSpent(address, nonce) {
      const rows = await db.query("SELECT 1 FROM sign_in_nonces WHERE key = $1 AND status = 'spent'", [
        keyOf(address, nonce),
      ]);
      return rows.length > 0;
    },
    async spend(address, nonce) {
      await db.query("UPDATE sign_in_nonces SET status = 'spent' WHERE key = $1", [keyOf(address, nonce)]);
    },
    async release(address, nonce) {
      await db.query("DELETE FROM sign_in_nonces WHERE key = $1 AND status = 'in_use'", [keyOf(address, nonce)]);
    },
    async sweep(now) {
      const rows = await db.query("DELETE FROM sign_in_nonces WHERE expires_at < $1 RETURNING key", [now]);
      return rows.length;
    },
  };
}

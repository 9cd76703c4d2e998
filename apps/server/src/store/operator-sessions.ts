import { createHash, randomBytes } from "node:crypto";
import type { Database } from "./database.js";

/**
 * The operator console's sessions: one Sign-In-With-X opens a session for an hour, kept in the shared store so any
 * instance serves it. The browser holds the token in an HttpOnly cookie; the store keeps only its SHA-256, so a
 * leaked table opens nothing.
 */
export interface OperatorSessionStore {
  /** Opens a session for `address` until `expiresAt`; the token the browser keeps. */
  open(address: string, expiresAt: Date): Promise<string>;
  /** The session `token` names (its address and end), if it is open at `now`. */
  find(token: string, now: Date): Promise<{ address: string; expiresAt: Date } | undefined>;
  /** Ends the session `token` names. */
  close(token: string): Promise<void>;
  /** Deletes sessions past their end; returns how many. */
  sweep(now: Date): Promise<number>;
}

const digest = (token: string) => createHash("sha256").update(token).digest("hex");

export function createOperatorSessionStore(db: Database): OperatorSessionStore {
  return {
    async open(address, expiresAt) {
      const token = randomBytes(32).toString("base64url");
      await db.query("INSERT INTO operator_sessions (token_hash, address, expires_at) VALUES ($1, $2, $3)", [
        digest(token),
        address,
        expiresAt,
      ]);
      return token;
    },
    async find(token, now) {
      const [row] = await db.query<{ address: string; expires_at: Date | string }>(
        "SELECT address, expires_at FROM operator_sessions WHERE token_hash = $1 AND expires_at > $2",
        [digest(token), now],
      );
      return row ? { address: row.address, expiresAt: new Date(row.expires_at) } : undefined;
    },
    async close(token) {
      await db.query("DELETE FROM operator_sessions WHERE token_hash = $1", [digest(token)]);
    },
    async sweep(now) {
      const rows = await db.query("DELETE FROM operator_sessions WHERE expires_at <= $1 RETURNING token_hash", [now]);
      return rows.length;
    },
  };
}

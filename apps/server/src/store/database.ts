import type { Readable } from "node:stream";
import type pg from "pg";

/**
 * The durable store (settlement ledger, mission queue): Postgres, or PGlite (Postgres compiled to WebAssembly,
 * a data directory on disk) when no server is configured. Both speak the same SQL, so one set of migrations
 * and queries serves both.
 */
export interface Queryable {
  /** Runs one statement with `$1`-style parameters and returns its rows. */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /**
   * Runs one statement and returns its rows as arrays of their columns, in the select list's order: for reads of many
   * rows (a page of the book, an export), where a keyed object per row costs more than the row.
   */
  queryArrays<Row extends unknown[]>(sql: string, params?: unknown[]): Promise<Row[]>;
}

export interface Database extends Queryable {
  /** `pglite` (embedded) or `postgres` (a server). */
  readonly kind: "pglite" | "postgres";
  /**
   * Where the data lives, for logs and start-up output: a directory, or the server's host, port and database (never
   * its user, password or parameters).
   */
  readonly location: string;
  /** The server's connection pool (Postgres only), for what takes one: the shared rate limits, the key locks. */
  readonly pool?: pg.Pool;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Postgres only: the bytes of a `COPY (…) TO STDOUT` statement as the server sends them, run in a read-only
   * transaction after `settings` (`SET LOCAL …`) on a connection of its own. Destroying the stream before its end
   * closes that connection, which stops the statement.
   */
  copyOut?(statement: string, settings?: readonly string[]): Promise<Readable>;
  close(): Promise<void>;
}

/** Which store holds the ledger, in words for the start-up output: "Postgres at host:5432/db" or "PGlite in /dir". */
export function storeDescription(db: Pick<Database, "kind" | "location">): string {
  return db.kind === "postgres" ? `Postgres at ${db.location}` : `PGlite in ${db.location}`;
}

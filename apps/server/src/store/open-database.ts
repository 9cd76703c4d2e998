import type { Database } from "./database.js";
import { migrate } from "./migrations.js";
import { openPglite } from "./pglite.js";
import { openPostgres } from "./postgres.js";

/** Where the durable records live: a Postgres server, or PGlite in a data directory. */
export type StoreConfig = { kind: "postgres"; url: string } | { kind: "pglite"; dataDir: string };

/** Opens the configured database and applies pending migrations. */
export async function openDatabase(config: StoreConfig): Promise<Database> {
  const db = config.kind === "postgres" ? await openPostgres(config.url) : await openPglite(config.dataDir);
  try {
    await migrate(db);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
  return db;
}

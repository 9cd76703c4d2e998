import { readFile } from "node:fs/promises";
import { inject } from "vitest";
import type { Database } from "../../src/store/database.js";
import { migrate, migrations } from "../../src/store/migrations.js";
import { openMemoryPglite } from "../../src/store/pglite.js";

/** A fresh, migrated PGlite database in memory, copied from the run's template (see global-setup.ts). */
export async function openTestDatabase(): Promise<Database> {
  const db = await openMemoryPglite(new Blob([await readFile(inject("pgliteTemplate"))]));
  await migrate(db);
  return db;
}

/**
 * Brings `db` to schema version `version` only, as an earlier build left it, recording each step as `migrate` does:
 * the steps after it are then the ones a later `migrate` applies.
 */
export async function migrateUpTo(db: Database, version: number): Promise<void> {
  await db.query(
    "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
  );
  for (const migration of migrations.filter((m) => m.version <= version)) {
    for (const statement of migration.statements) await db.query(statement);
    await db.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
      migration.version,
      migration.name,
    ]);
  }
}

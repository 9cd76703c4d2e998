import { readFile } from "node:fs/promises";
import { inject } from "vitest";
import type { Database } from "../../src/store/database.js";
import { migrate } from "../../src/store/migrations.js";
import { openMemoryPglite } from "../../src/store/pglite.js";

/** A fresh, migrated PGlite database in memory, copied from the run's template (see global-setup.ts). */
export async function openTestDatabase(): Promise<Database> {
  const db = await openMemoryPglite(new Blob([await readFile(inject("pgliteTemplate"))]));
  await migrate(db);
  return db;
}

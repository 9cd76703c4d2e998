import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { Database, Queryable } from "./database.js";

/** Thrown when another live process has the data directory open; PGlite serves one process only. */
export class DataDirectoryInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The data directory ${dataDir} is in use by process ${pid}. Stop that process, or point DATA_DIR elsewhere ` +
        "(several instances share one database through DATABASE_URL, a Postgres server).",
    );
    this.name = "DataDirectoryInUseError";
  }
}

const LOCK_FILE = "agent-tools.pid";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Takes the directory for this process, or throws when a live process holds it (a stale lock is taken over). */
function lockDirectory(dataDir: string): () => void {
  const lockPath = join(dataDir, LOCK_FILE);
  try {
    const holder = Number(readFileSync(lockPath, "utf8").trim());
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
      throw new DataDirectoryInUseError(dataDir, holder);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  writeFileSync(lockPath, String(process.pid));
  return () => rmSync(lockPath, { force: true });
}

/** The store's view of a PGlite instance (`release` runs after it is closed). */
export function fromPglite(db: PGlite, location = "memory", release: () => void = () => undefined): Database {
  const query: Queryable["query"] = async (sql, params) => (await db.query(sql, params)).rows as never;
  return {
    kind: "pglite",
    location,
    query,
    transaction: (work) =>
      db.transaction((tx) => work({ query: async (sql, params) => (await tx.query(sql, params)).rows as never })),
    async close() {
      await db.close();
      release();
    },
  };
}

/**
 * PGlite on a data directory (created when missing). It survives restarts and crashes: Postgres' own write-ahead
 * log is on disk. One process at a time: a second one is refused with `DataDirectoryInUseError`.
 */
export async function openPglite(dataDir: string): Promise<Database> {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const release = lockDirectory(dir);
  try {
    const db = await PGlite.create(join(dir, "pgdata"));
    return fromPglite(db, dir, release);
  } catch (error) {
    release();
    throw error;
  }
}

/** PGlite in memory, optionally started from a dump of a data directory (tests: a migrated template). */
export async function openMemoryPglite(template?: Blob): Promise<Database> {
  const db = await PGlite.create(template ? { loadDataDir: template } : {});
  return fromPglite(db);
}

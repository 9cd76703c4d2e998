import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { StartupError } from "../errors/startup-error.js";
import type { Database, Queryable } from "./database.js";

/**
 * Thrown when another live process has the data directory open; PGlite serves one process only. A start-up refusal
 * naming DATA_DIR, reported whole.
 */
export class DataDirectoryInUseError extends StartupError {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      "DATA_DIR",
      `the data directory ${dataDir} is in use by process ${pid}; stop that process, or point DATA_DIR elsewhere ` +
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

/**
 * Takes a data directory for this process before anything else starts (the embedded default checks it before
 * seeding its chains); `openPglite` in the same process then opens it. Throws `DataDirectoryInUseError`.
 */
export function claimDataDirectory(dataDir: string): void {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  lockDirectory(dir);
}

/** The store's view of a PGlite instance (`release` runs after it is closed). */
export function fromPglite(db: PGlite, location = "memory", release: () => void = () => undefined): Database {
  const on = (target: Pick<PGlite, "query">): Queryable => ({
    query: async (sql, params) => (await target.query(sql, params)).rows as never,
    queryArrays: async (sql, params) => (await target.query(sql, params, { rowMode: "array" })).rows as never,
  });
  return {
    kind: "pglite",
    location,
    ...on(db),
    transaction: (work) => db.transaction((tx) => work(on(tx))),
    async close() {
      await db.close();
      release();
    },
  };
}

/**
 * Postgres settings sized for an embedded store of a few tables: Postgres' defaults (128 MB of shared buffers among
 * them) are for a database server, and PGlite holds them in this process's memory.
 */
const PGLITE_SETTINGS = ["shared_buffers = 16MB", "work_mem = 2MB", "maintenance_work_mem = 16MB", "wal_buffers = 1MB"];

/**
 * Creates a new data directory in a child process. Postgres' initdb runs in a WebAssembly instance of its own whose
 * memory peaks at over a gigabyte and is never given back to the system: run in the server, it would stay in the
 * server's resident memory for good (docs/decisions.md, "Memory").
 */
async function initializeInChild(pgdata: string): Promise<void> {
  const script = `const { PGlite } = await import(process.argv[1]);
const db = await PGlite.create(process.argv[2], { postgresqlconf: JSON.parse(process.argv[3]) });
await db.close();`;
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      script,
      import.meta.resolve("@electric-sql/pglite"),
      pgdata,
      JSON.stringify(PGLITE_SETTINGS),
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk;
  });
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0) throw new Error(`could not create the PGlite data directory ${pgdata}: ${stderr.trim()}`);
}

/**
 * Where a freshly initialized cluster is kept, once per PGlite version and settings: the `node_modules/.cache` of the
 * server's package, as build tools keep theirs. Undefined when it cannot be told.
 */
function templateLocation(): string | undefined {
  try {
    const pglite = dirname(fileURLToPath(import.meta.resolve("@electric-sql/pglite")));
    const { version } = JSON.parse(readFileSync(join(pglite, "..", "package.json"), "utf8")) as { version: string };
    const key = createHash("sha256")
      .update(`${version}\n${PGLITE_SETTINGS.join("\n")}`)
      .digest("hex")
      .slice(0, 16);
    let dir = dirname(fileURLToPath(import.meta.url));
    while (!existsSync(join(dir, "package.json"))) {
      if (dirname(dir) === dir) return undefined;
      dir = dirname(dir);
    }
    return join(dir, "node_modules", ".cache", "agent-tools", `pglite-${version}-${key}`);
  } catch {
    return undefined;
  }
}

/**
 * Keeps a freshly initialized cluster as the template (shut down cleanly, before anything is written to it), unless
 * one is kept already. The template is only ever replaced whole (a rename), so a copy is never taken of half of one.
 */
function keepTemplate(pgdata: string, template: string): void {
  const staging = `${template}.${process.pid}-${Date.now()}`;
  try {
    mkdirSync(dirname(template), { recursive: true });
    cpSync(pgdata, staging, { recursive: true });
    renameSync(staging, template);
  } catch {
    // Another process kept one first, or the cache is not writable.
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Creates a new cluster in `pgdata`. initdb costs some ten seconds of CPU; the first cluster made on a machine is kept
 * and later ones are copies of it (docs/decisions.md, "Memory"). A template that cannot be kept (a read-only
 * installation) changes nothing but the time.
 */
async function createCluster(pgdata: string): Promise<void> {
  const template = templateLocation();
  if (template && existsSync(join(template, "PG_VERSION"))) {
    // Copied beside and renamed: a copy cut short is never taken for a cluster.
    const copy = `${pgdata}.${process.pid}-${Date.now()}`;
    cpSync(template, copy, { recursive: true });
    renameSync(copy, pgdata);
    return;
  }
  await initializeInChild(pgdata);
  if (template) keepTemplate(pgdata, template);
}

/**
 * Makes the template a first start would make (`npm run setup` runs it, so that the first `pnpm start` copies a
 * cluster instead of running initdb): "kept" when one was kept already, "made" when made now, "unavailable" when
 * none can be kept here.
 */
export async function preparePgliteTemplate(): Promise<"kept" | "made" | "unavailable"> {
  const template = templateLocation();
  if (!template) return "unavailable";
  if (existsSync(join(template, "PG_VERSION"))) return "kept";
  const scratch = mkdtempSync(join(tmpdir(), "agent-tools-pglite-"));
  try {
    const pgdata = join(scratch, "pgdata");
    await initializeInChild(pgdata);
    keepTemplate(pgdata, template);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return existsSync(join(template, "PG_VERSION")) ? "made" : "unavailable";
}

/**
 * What opening `dataDir` will do: open the database in it, copy the kept template into it (a first start on a
 * machine that started before), or create it with initdb (the first start on this machine: some seconds of CPU).
 */
export function pgliteOpening(dataDir: string): "open" | "copy" | "create" {
  if (existsSync(join(resolve(dataDir), "pgdata", "PG_VERSION"))) return "open";
  const template = templateLocation();
  return template && existsSync(join(template, "PG_VERSION")) ? "copy" : "create";
}

/** Where `setAsideDatabase` keeps the database it moved, inside the data directory. */
export const EARLIER_DATABASE = "earlier-start";

/**
 * Moves the database of a data directory aside, into `<dataDir>/earlier-start/pgdata` (replacing one moved there
 * before), and returns where; undefined when the directory holds none. The embedded default does this at each start:
 * its chains are new, and a book of the chains before would describe channels and payments they do not have
 * (docs/decisions.md, "The embedded default's book"). A rename: nothing is copied.
 */
export function setAsideDatabase(dataDir: string): string | undefined {
  const dir = resolve(dataDir);
  const pgdata = join(dir, "pgdata");
  if (!existsSync(pgdata)) return undefined;
  const earlier = join(dir, EARLIER_DATABASE);
  rmSync(earlier, { recursive: true, force: true });
  mkdirSync(earlier, { recursive: true });
  renameSync(pgdata, join(earlier, "pgdata"));
  return earlier;
}

/**
 * PGlite on a data directory (created when missing, from the kept template or in a child process). It survives
 * restarts and crashes: Postgres' own write-ahead log is on disk. One process at a time: a second one is refused with
 * `DataDirectoryInUseError`.
 */
export async function openPglite(dataDir: string): Promise<Database> {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const release = lockDirectory(dir);
  try {
    const pgdata = join(dir, "pgdata");
    if (!existsSync(join(pgdata, "PG_VERSION"))) await createCluster(pgdata);
    const db = await PGlite.create(pgdata, { postgresqlconf: PGLITE_SETTINGS });
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

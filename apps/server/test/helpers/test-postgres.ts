import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../../src/embedded-process.js";

/** Whether a Postgres server is installed here (Debian's layout). */
export function hasPostgres(): boolean {
  return postgresBin() !== undefined;
}

/** Where Debian (and most Linux packages) put the server binaries. */
function postgresBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : undefined;
}

export interface TestPostgres {
  /** A URL to a new, empty database on the cluster. */
  createDatabase(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * A throwaway Postgres cluster on 127.0.0.1 (a free port, a temp directory), or undefined when no Postgres
 * server is installed. As root it runs as the `postgres` user, since Postgres refuses to run as root.
 */
export async function startTestPostgres(): Promise<TestPostgres | undefined> {
  const bin = postgresBin();
  if (!bin) return undefined;
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "agent-tools-pg-"));
  chmodSync(dir, 0o777);
  const dataDir = join(dir, "data");
  const runAs = (command: string, args: string[]) =>
    asRoot ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
  const [initCmd, initArgs] = runAs(join(bin, "initdb"), [
    "-D",
    dataDir,
    "-U",
    "agent",
    "--auth=trust",
    "-E",
    "UTF8",
    "--no-sync",
  ]) as [string, string[]];
  execFileSync(initCmd, initArgs, { stdio: "pipe" });
  const port = await freePort();
  const [serverCmd, serverArgs] = runAs(join(bin, "postgres"), [
    "-D",
    dataDir,
    "-p",
    String(port),
    "-k",
    dir,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "fsync=off",
    "-c",
    "max_connections=200",
  ]) as [string, string[]];
  const server: ChildProcess = spawn(serverCmd, serverArgs, { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  server.stderr?.on("data", (chunk) => {
    log += chunk;
  });
  const admin = `postgresql://agent@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const client = new pg.Client({ connectionString: admin });
    try {
      await client.connect();
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (server.exitCode !== null || Date.now() > deadline) {
        server.kill("SIGKILL");
        throw new Error(`the test Postgres did not start: ${(error as Error).message}\n${log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  let count = 0;
  return {
    async createDatabase() {
      const name = `t_${process.pid}_${++count}_${Math.floor(Math.random() * 1e6)}`;
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      await client.query(`CREATE DATABASE ${name}`);
      await client.end();
      return `postgresql://agent@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      if (server.exitCode === null) {
        const exited = once(server, "exit");
        // SIGINT to the postmaster itself (runuser does not pass signals on): Postgres' fast shutdown.
        const postmaster = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
        process.kill(postmaster, "SIGINT");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Whether to skip the Postgres half of a test: only where no server is installed, and never in CI, which
 * installs one (`npm run setup -- --with-postgres`).
 */
export function skipPostgres(): boolean {
  if (hasPostgres()) return false;
  if (process.env.CI === "true") {
    throw new Error("CI runs the Postgres tests: install Postgres (npm run setup -- --with-postgres)");
  }
  return true;
}

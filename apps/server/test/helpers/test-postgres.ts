import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../../src/startup/embedded-process.js";

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

/** Waits for Postgres to log that it accepts connections, or to exit; with what it logged. */
function readyOrExited(server: ChildProcess): Promise<{ ready: boolean; log: string }> {
  return new Promise((resolve) => {
    let log = "";
    const onData = (chunk: Buffer) => {
      log += chunk;
      if (!log.includes("database system is ready to accept connections")) return;
      server.off("exit", onExit);
      resolve({ ready: true, log });
    };
    const onExit = () => {
      server.stderr?.off("data", onData);
      resolve({ ready: false, log });
    };
    server.stderr?.on("data", onData);
    server.once("exit", onExit);
  });
}

/**
 * A throwaway Postgres cluster on 127.0.0.1 (a free port, a temp directory), ready when it resolves, or undefined when no Postgres
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
  // A port found free may be taken by another process before Postgres binds it: then start again on another.
  let started: { server: ChildProcess; port: number } | undefined;
  while (!started) {
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
    const outcome = await readyOrExited(server);
    if (outcome.ready) started = { server, port };
    else if (!/could not (bind|create listen socket)|Address already in use/.test(outcome.log)) {
      throw new Error(`the test Postgres did not start:\n${outcome.log}`);
    }
  }
  const { server, port } = started;
  const admin = `postgresql://agent@127.0.0.1:${port}/postgres`;
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

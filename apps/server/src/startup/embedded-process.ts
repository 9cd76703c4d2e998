import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, watch } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The lowest port of the kernel's ephemeral range: the ports it hands out itself, to a bind on port 0 and to every
 * outgoing connection (Linux: /proc/sys/net/ipv4/ip_local_port_range; 32768 elsewhere).
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32768;
  } catch {
    return 32768;
  }
}

/** Binds `port` on 127.0.0.1 and lets go: true when nothing held it. */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

/** The OS's own pick of a free port (port 0), released. */
function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * A free TCP port on 127.0.0.1 for a process that must be told its port before it starts (and restarted on it).
 * Picked below the kernel's ephemeral range, where neither a bind on port 0 nor an outgoing connection of a busy
 * test beside it can take it between this check and the bind; only another explicit pick could. Prefer binding
 * port 0 and reading the address back where the port need not be known in advance.
 */
export async function freePort(): Promise<number> {
  const floor = 10_000;
  const ceiling = ephemeralLow();
  if (ceiling - floor >= 1000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = floor + Math.floor(Math.random() * (ceiling - floor));
      if (await canBind(port)) return port;
    }
  }
  return anyFreePort();
}

/** A child process and everything it printed so far (stdout and stderr). */
export interface ScriptProcess {
  child: ChildProcess;
  output: () => string;
}

/** Runs a program with only `PATH` and `env` in its environment, collecting its output. */
export function spawnCollected(file: string, args: string[], env: Record<string, string>, cwd?: string): ScriptProcess {
  const child = spawn(file, args, {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(cwd ? { cwd } : {}),
  });
  let text = "";
  const collect = (chunk: Buffer) => {
    text += chunk;
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  // A child never outlives the process that started it, even when a test times out before it could stop it.
  const killChild = () => child.kill("SIGKILL");
  process.once("exit", killChild);
  child.once("exit", () => process.off("exit", killChild));
  return { child, output: () => text };
}

/** Runs a Node script in a child process with only `PATH` and `env` in its environment, collecting its output. */
export function runNodeScript(script: string, env: Record<string, string>): ScriptProcess {
  return spawnCollected(process.execPath, [script], env);
}

/** A pattern as a regular expression: a string matches itself literally. */
function toRegExp(pattern: string | RegExp): RegExp {
  return typeof pattern === "string" ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")) : pattern;
}

/**
 * Resolves with the first match of `pattern` in what the process printed, as soon as it prints it (each chunk of
 * output is checked as it arrives). Kills the process and throws with its output when it exits first, or when
 * `timeoutMs` passes (a cap for a process that hangs, not a wait).
 */
export function waitForOutput(
  { child, output }: ScriptProcess,
  pattern: string | RegExp,
  timeoutMs: number,
  what: string,
): Promise<RegExpExecArray> {
  const regex = toRegExp(pattern);
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const match = regex.exec(output());
      if (match) {
        done();
        resolve(match);
      }
      return match !== null;
    };
    const fail = (why: string) => {
      done();
      child.kill("SIGKILL");
      reject(new Error(`${what} ${why}:\n${output()}`));
    };
    // Output still buffered in the pipes is read before "close": checked once more then.
    const closed = () => {
      if (!check()) fail(`exited (code ${child.exitCode}, signal ${child.signalCode}) before printing ${regex}`);
    };
    const onData = () => void check();
    const timer = setTimeout(() => fail(`did not print ${regex} within ${timeoutMs} ms`), timeoutMs);
    const done = () => {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.stderr?.off("data", onData);
      child.off("close", closed);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("close", closed);
    const gone = (child.exitCode !== null || child.signalCode !== null) && child.stdout?.closed && child.stderr?.closed;
    if (!check() && gone) closed();
  });
}

export interface EmbeddedProcess {
  /** Origin of the service, `http://127.0.0.1:<port>` (also its PUBLIC_URL). */
  url: string;
  /** The PGlite data directory the service keeps its ledger and missions in. */
  dataDir: string;
  /** Everything the process printed so far. */
  output(): string;
  /**
   * Resolves with the first match of `pattern` in what the process printed, as soon as it prints it (see
   * {@link waitForOutput}; the process is killed if it exits first or `timeoutMs` passes, default 120 s).
   */
  printed(pattern: string | RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  child: ChildProcess;
  /** SIGTERM, then wait for the exit; removes the data directory unless the caller gave it. */
  close(): Promise<void>;
}

/**
 * Starts the embedded default (local chains, seeded, and the server) as a child process on loopback ports the
 * OS picks (port 0, read back from what it prints), for tests of the SDK and the CLI; resolves once it serves.
 */
export async function spawnEmbeddedService(
  options: {
    timeoutMs?: number;
    dataDir?: string;
    env?: Record<string, string>;
    /** A file everything the process prints is copied to, as it prints it (see attachEmbeddedService). */
    outputFile?: string;
  } = {},
): Promise<EmbeddedProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "agent-tools-data-"));
  const script = fileURLToPath(new URL("./embedded.js", import.meta.url));
  const started = runNodeScript(script, {
    PORT: "0",
    L1_PORT: "0",
    L2_PORT: "0",
    LOG_LEVEL: "warn",
    DATA_DIR: dataDir,
    ...options.env,
  });
  const { child, output } = started;
  if (options.outputFile) {
    const sink = createWriteStream(options.outputFile);
    child.stdout?.on("data", (chunk: Buffer) => sink.write(chunk));
    child.stderr?.on("data", (chunk: Buffer) => sink.write(chunk));
    child.once("close", () => sink.end());
  }
  // The banner's last line: by then the address, the demo accounts and the tokens of each clearance are printed.
  // The default deadline is for a start that hangs: a loaded machine can take minutes (see the test configs).
  await waitForOutput(started, /^Try: curl /m, options.timeoutMs ?? 240_000, "the embedded service");
  const url = /^ {2}API +(http:\/\/\S+)/m.exec(output())?.[1];
  if (!url) {
    child.kill("SIGKILL");
    throw new Error(`the embedded service printed no API address:\n${output()}`);
  }
  return {
    url,
    dataDir,
    output,
    printed: (pattern, timeoutMs = 120_000) => waitForOutput(started, pattern, timeoutMs, "the embedded service"),
    child,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, "exit");
        child.kill("SIGTERM");
        await exited;
      }
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Where an embedded service started by another process of a test run (a vitest global setup) is found: its address
 * and the file its output is copied to. Test files that run one after another share one start of the embedded
 * default this way instead of starting one each (docs/architecture.md, "What a test run costs").
 */
export interface SharedEmbeddedService {
  url: string;
  outputFile: string;
}

/** Starts the embedded default for a test run's files to share; `close()` stops it and removes its files. */
export async function startSharedEmbeddedService(
  options: { env?: Record<string, string> } = {},
): Promise<{ shared: SharedEmbeddedService; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "agent-tools-shared-"));
  const outputFile = join(dir, "output.log");
  try {
    const service = await spawnEmbeddedService({ ...options, dataDir: join(dir, "data"), outputFile });
    return {
      shared: { url: service.url, outputFile },
      async close() {
        await service.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** What a test file sees of a service another process started: its address and what it printed. */
export type AttachedEmbeddedService = Pick<EmbeddedProcess, "url" | "output" | "printed">;

/**
 * The reads of {@link EmbeddedProcess} on a service another process started: what it printed so far, and a wait for
 * a line it prints (checked each time its output file changes).
 */
export function attachEmbeddedService(shared: SharedEmbeddedService): AttachedEmbeddedService {
  const output = () => readFileSync(shared.outputFile, "utf8");
  return {
    url: shared.url,
    output,
    printed: (pattern, timeoutMs = 120_000) =>
      new Promise((resolve, reject) => {
        const regex = toRegExp(pattern);
        const watcher = watch(shared.outputFile);
        const done = () => {
          clearTimeout(timer);
          watcher.close();
        };
        const check = () => {
          const match = regex.exec(output());
          if (match) {
            done();
            resolve(match);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`the embedded service did not print ${regex} within ${timeoutMs} ms:\n${output()}`));
        }, timeoutMs);
        watcher.on("change", check);
        check();
      }),
  };
}

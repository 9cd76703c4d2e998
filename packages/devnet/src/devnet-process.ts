/**
 * The devnet in a process of its own: `spawnDevnetProcess()` forks `devnet-child.js`, which serves and seeds the
 * chains as `startDevnet()` does and reports the deployment over IPC. The chains' EVM then runs on another core
 * than the caller's event loop, so mining never stalls the caller's requests. The child stops when asked, and on
 * its own when its parent goes away (the IPC channel closes).
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { RunningDevnet, StartDevnetOptions } from "./devnet.js";

/** What the child reports: its devnet once seeded, a line of progress, or why it could not start. */
export type FromDevnetChild =
  | { type: "ready"; deployment: RunningDevnet["deployment"]; seedDurationMs: RunningDevnet["seedDurationMs"] }
  | { type: "log"; line: string }
  | { type: "failed"; message: string };

/** What the parent asks of the child. */
export type ToDevnetChild =
  | { type: "start"; options: Omit<StartDevnetOptions, "log"> & { log: boolean } }
  | { type: "close" };

export interface DevnetProcess extends RunningDevnet {
  child: ChildProcess;
}

/**
 * Starts the devnet in a child process and resolves once it is seeded (rejects with the child's reason when it
 * cannot start, a port taken for instance). `close()` stops the chains and waits for the child to exit.
 */
export function spawnDevnetProcess(options: StartDevnetOptions = {}): Promise<DevnetProcess> {
  // Built, the child is dist/devnet-child.js; run from the sources (tests), it is the .ts file through tsx.
  const fromSource = import.meta.url.endsWith(".ts");
  const script = fileURLToPath(new URL(fromSource ? "./devnet-child.ts" : "./devnet-child.js", import.meta.url));
  const child = fork(script, [], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    // Structured clone: the deployment carries bigints.
    serialization: "advanced",
    execArgv: fromSource ? ["--import", "tsx"] : [],
  });
  const { log, ...rest } = options;
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      reject(new Error(`the devnet process exited before it was ready (${signal ?? `code ${code}`})`));
    child.once("exit", onExit);
    child.on("message", (message: FromDevnetChild) => {
      if (message.type === "log") return log?.(message.line);
      child.off("exit", onExit);
      if (message.type === "failed") {
        child.kill();
        return reject(new Error(message.message));
      }
      const exited = new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) done();
        else child.once("exit", () => done());
      });
      resolve({
        child,
        deployment: message.deployment,
        seedDurationMs: message.seedDurationMs,
        async close() {
          // A child that a signal to the whole process group stopped already cannot be asked: then it is killed
          // (a no-op on an exited child) rather than the failed send becoming an unhandled error.
          if (child.connected) child.send({ type: "close" } satisfies ToDevnetChild, (error) => error && child.kill());
          else child.kill();
          await exited;
        },
      });
    });
    child.send({ type: "start", options: { ...rest, log: log !== undefined } } satisfies ToDevnetChild);
  });
}

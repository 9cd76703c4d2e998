import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** A free TCP port on 127.0.0.1 (asked of the OS, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** A child process and everything it printed so far (stdout and stderr). */
export interface ScriptProcess {
  child: ChildProcess;
  output: () => string;
}

/** Runs a Node script in a child process with only `PATH` and `env` in its environment, collecting its output. */
export function runNodeScript(script: string, env: Record<string, string>): ScriptProcess {
  const child = spawn(process.execPath, [script], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  const collect = (chunk: Buffer) => {
    text += chunk;
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  return { child, output: () => text };
}

/** Waits until the process prints `line`; kills it and throws with its output when it exits first or times out. */
export async function waitForOutput(
  { child, output }: ScriptProcess,
  line: string,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!output().includes(line)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${what} did not start:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface EmbeddedProcess {
  /** Origin of the service, `http://127.0.0.1:<port>` (also its PUBLIC_URL). */
  url: string;
  /** The PGlite data directory the service keeps its ledger and missions in. */
  dataDir: string;
  /** Everything the process printed so far. */
  output(): string;
  child: ChildProcess;
  /** SIGTERM, then wait for the exit; removes the data directory unless the caller gave it. */
  close(): Promise<void>;
}

/**
 * Starts the embedded default (local chains, seeded, and the server) as a child process on free loopback
 * ports, for tests of the SDK and the CLI; resolves once it serves.
 */
export async function spawnEmbeddedService(
  options: { timeoutMs?: number; dataDir?: string; env?: Record<string, string> } = {},
): Promise<EmbeddedProcess> {
  const [port, l1Port, l2Port] = [await freePort(), await freePort(), await freePort()];
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "agent-tools-data-"));
  const url = `http://127.0.0.1:${port}`;
  const script = fileURLToPath(new URL("./embedded.js", import.meta.url));
  const { child, output } = runNodeScript(script, {
    PORT: String(port),
    L1_PORT: String(l1Port),
    L2_PORT: String(l2Port),
    PUBLIC_URL: url,
    LOG_LEVEL: "warn",
    DATA_DIR: dataDir,
    ...options.env,
  });
  await waitForOutput({ child, output }, "Agent Tools is up", options.timeoutMs ?? 60_000, "the embedded service");
  return {
    url,
    dataDir,
    output,
    child,
    async close() {
      if (child.exitCode === null) {
        const exited = once(child, "exit");
        child.kill("SIGTERM");
        await exited;
      }
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

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
  const child = spawn(process.execPath, [script], {
    env: {
      PATH: process.env.PATH ?? "",
      PORT: String(port),
      L1_PORT: String(l1Port),
      L2_PORT: String(l2Port),
      PUBLIC_URL: url,
      LOG_LEVEL: "warn",
      DATA_DIR: dataDir,
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout?.on("data", (chunk) => {
    text += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    text += chunk;
  });
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (!text.includes("Agent Tools is up")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the embedded service did not start:\n${text}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    dataDir,
    output: () => text,
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

import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type RunningDevnet, startDevnet } from "@agent-tools/devnet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, runNodeScript } from "../src/embedded-process.js";

const mainScript = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), "agent-tools-process-"));

const run = (env: Record<string, string>) =>
  runNodeScript(mainScript, { LOG_LEVEL: "warn", DATA_DIR: dataDir, ...env });

async function waitFor(predicate: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

let devnet: RunningDevnet;
beforeAll(async () => {
  devnet = await startDevnet({ l1Port: 0, l2Port: 0 });
}, 120_000);
afterAll(async () => {
  await devnet?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the server process", () => {
  it("starts on the configured port, serves /healthz and exits 0 on SIGTERM", async () => {
    const port = await freePort();
    const { child, output } = run({
      PORT: String(port),
      HOST: "127.0.0.1",
      L1_RPC_URL: devnet.deployment.l1.rpcUrl!,
      L2_RPC_URL: devnet.deployment.l2.rpcUrl!,
      // Devnet account 0: the operator's public test key.
      FACILITATOR_PRIVATE_KEY: devnet.deployment.accounts[0]!.privateKey,
    });
    await waitFor(() => output().includes("Agent Tools API on"));
    expect(output()).toContain(`http://127.0.0.1:${port}`);
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(await res.json()).toEqual({ ok: true, service: "agent-tools" });
    const agent = await fetch(`http://127.0.0.1:${port}/agents/info/1`);
    expect(agent.status).toBe(200);
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const [code] = await exited;
    expect(code).toBe(0);
  });

  it("says why it cannot start when the collection chain is unreachable", async () => {
    const { child, output } = run({ PORT: "0", L1_RPC_URL: "http://127.0.0.1:9", RPC_TIMEOUT_MS: "500" });
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(output()).toMatch(/agent-tools failed to start: .*127\.0\.0\.1:9/s);
  });

  it("refuses to start without a way to settle payments, and says which variables to set", async () => {
    const { child, output } = run({ PORT: "0", L1_RPC_URL: devnet.deployment.l1.rpcUrl! });
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(output()).toMatch(/FACILITATOR_URL or FACILITATOR_PRIVATE_KEY must be set/);
  });

  it("refuses to start on a bad variable and names it", async () => {
    const { child, output } = run({ PORT: "not-a-port" });
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(output()).toMatch(/Invalid configuration: PORT must be a port number/);
  });
});

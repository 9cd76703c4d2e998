import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type RunningDevnet, startDevnet } from "@agent-tools/devnet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, runNodeScript, waitForOutput } from "../src/embedded-process.js";

const mainScript = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), "agent-tools-process-"));

const run = (env: Record<string, string>) =>
  runNodeScript(mainScript, { LOG_LEVEL: "warn", DATA_DIR: dataDir, ...env });

/** Who is paid and who settles: devnet account 0, whose public test key is accepted on the local payment chain. */
const devnetPayments = () => ({
  PAY_TO: devnet.deployment.accounts[0]!.address,
  FACILITATOR_PRIVATE_KEY: devnet.deployment.accounts[0]!.privateKey,
});

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
    const env = {
      HOST: "127.0.0.1",
      L1_RPC_URL: devnet.deployment.l1.rpcUrl!,
      L2_RPC_URL: devnet.deployment.l2.rpcUrl!,
      ...devnetPayments(),
    };
    // A port found free may be taken by another process before the server binds it: then ask for another.
    let started: { port: number; child: ChildProcess; output: () => string } | undefined;
    while (!started) {
      const port = await freePort();
      const proc = run({ ...env, PORT: String(port) });
      try {
        await waitForOutput(proc, "Agent Tools API on", 120_000, "the server");
        started = { port, ...proc };
      } catch (error) {
        if (!proc.output().includes("EADDRINUSE")) throw error;
      }
    }
    const { port, child, output } = started;
    expect(output()).toContain(`Agent Tools API on http://127.0.0.1:${port}`);
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(await res.json()).toEqual({ ok: true, service: "agent-tools" });
    const agent = await fetch(`http://127.0.0.1:${port}/agents/info/1`);
    expect(agent.status).toBe(200);
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const [code] = await exited;
    expect(code).toBe(0);
  });

  it("on PORT=0 listens on a port the OS picks and makes that address its public origin", async () => {
    const proc = run({
      PORT: "0",
      L1_RPC_URL: devnet.deployment.l1.rpcUrl!,
      L2_RPC_URL: devnet.deployment.l2.rpcUrl!,
      ...devnetPayments(),
    });
    const [, url] = await waitForOutput(
      proc,
      /Agent Tools API on (http:\/\/127\.0\.0\.1:(\d+))/,
      120_000,
      "the server",
    );
    try {
      expect(url).not.toMatch(/:0$/);
      const openapi = (await (await fetch(`${url}/openapi.json`)).json()) as { servers: { url: string }[] };
      expect(openapi.servers[0]!.url).toBe(url);
    } finally {
      const exited = once(proc.child, "exit");
      proc.child.kill("SIGTERM");
      await exited;
    }
  });

  it("says why it cannot start when the collection chain is unreachable, without the API key of its URL", async () => {
    const { child, output } = run({
      PORT: "0",
      L1_RPC_URL: "http://127.0.0.1:9/v2/SECRET-API-KEY?token=SECRET-TOKEN",
      RPC_TIMEOUT_MS: "500",
      ...devnetPayments(),
    });
    const [code] = await once(child, "close");
    expect(code).toBe(1);
    expect(output()).toMatch(/agent-tools failed to start: .*127\.0\.0\.1:9/s);
    expect(output()).not.toMatch(/SECRET-API-KEY|SECRET-TOKEN/);
  });

  it("refuses to start without a payment recipient and a way to settle, and says which variables to set", async () => {
    const { child, output } = run({ PORT: "0", L1_RPC_URL: devnet.deployment.l1.rpcUrl! });
    const [code] = await once(child, "close");
    expect(code).toBe(1);
    expect(output()).toMatch(/PAY_TO must be set/);
    expect(output()).toMatch(/FACILITATOR_URL or FACILITATOR_PRIVATE_KEY \(or FACILITATOR_PRIVATE_KEYS\) must be set/);
  });

  it("refuses the public test accounts when payments are on a real network", async () => {
    const { child, output } = run({
      PORT: "0",
      L1_RPC_URL: devnet.deployment.l1.rpcUrl!,
      PAYMENT_NETWORK: "eip155:8453",
      ...devnetPayments(),
    });
    const [code] = await once(child, "close");
    expect(code).toBe(1);
    expect(output()).toMatch(
      /PAY_TO 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266 is an account of the public test mnemonic/,
    );
    expect(output()).toMatch(/FACILITATOR_PRIVATE_KEY holds the key of 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266/);
  });

  it("refuses to start on a bad variable and names it", async () => {
    const { child, output } = run({ PORT: "not-a-port" });
    const [code] = await once(child, "close");
    expect(code).toBe(1);
    expect(output()).toMatch(/Invalid configuration: PORT must be a port number/);
  });
});

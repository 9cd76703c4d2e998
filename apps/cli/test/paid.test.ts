import { execFile } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { paidRoutes, toolRoutes } from "@agent-tools/sdk";
import { type EmbeddedProcess, spawnEmbeddedService } from "@agent-tools/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
let service: EmbeddedProcess;

beforeAll(async () => {
  service = await spawnEmbeddedService();
});
afterAll(async () => {
  await service?.close();
});

/**
 * The machine's own Node (what a user runs the CLI with: Node 20 on a fresh machine), not the Node 24 the
 * workspace's scripts put first on PATH.
 */
const machineNode =
  (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => !dir.includes("node_modules"))
    .map((dir) => join(dir, "node"))
    .find((candidate) => existsSync(candidate)) ?? "node";

/** Runs the built CLI with the machine's Node, key from the environment. */
function cli(args: string[], keyIndex?: number) {
  return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? "", NO_COLOR: "1" };
    if (keyIndex !== undefined) env.AGENT_TOOLS_PRIVATE_KEY = DEVNET_ACCOUNTS[keyIndex]!.privateKey;
    execFile(
      machineNode,
      [bin, "--base-url", service.url, ...args],
      { env, encoding: "utf8" },
      (error, stdout, stderr) => {
        resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe("agent-tools against the embedded default", () => {
  it("a demo holder pays the discounted price for intel, and the key is never printed", async () => {
    const result = await cli(["intel", "--token-id", "1"], 1);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("Agent #1");
    expect(result.stderr).toMatch(/paid 0\.01 USD from 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 · tx 0x[0-9a-f]{64}/);
    expect(result.stdout + result.stderr).not.toContain(DEVNET_ACCOUNTS[1]!.privateKey.slice(2));
  });

  it("a demo holder pays the discounted price for a drop-radar scan and sees a table of drops", async () => {
    const result = await cli(["drop-radar", "--token-id", "1", "--type", "upcoming", "--limit", "5"], 1);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/drops \(\d+\)/);
    expect(result.stdout).toMatch(/slug\s+name\s+chain/);
    expect(result.stderr).toMatch(/paid 0\.01 USD from 0x70997970C51812dc3A010C7d01b50e0d17dc79C8/);
  });

  it("an anonymous run pays the standard price", async () => {
    const result = await cli(["intel", "--token-id", "7", "--anonymous"], 3);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/paid 1\.00 USD/);
  });

  it("--max-price below the quote exits 3 without paying", async () => {
    const result = await cli(["intel", "--token-id", "7", "--anonymous", "--max-price", "0.50"], 3);
    expect(result.status).toBe(3);
    expect(result.stderr).toMatch(/1\.00 USD, above --max-price 0\.50 USD; nothing was paid/);
    expect(result.stderr).not.toMatch(/paid \d/);
  });

  it("a Holder-clearance token on offer-radar exits 4 and names the clearance", async () => {
    const result = await cli(["offer-radar", "--token-id", "1", "--slug", "night-owls"], 1);
    expect(result.status).toBe(4);
    expect(result.stderr).toMatch(/needs Elite clearance/);
  });

  it("--json prints exactly the response, and it matches the schema", async () => {
    const result = await cli(["intel", "--token-id", "10", "--json"], 1);
    expect(result.status).toBe(0);
    const parsed = toolRoutes.intel.response.parse(JSON.parse(result.stdout));
    expect(parsed.tokenId).toBe(10);
    expect(result.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("bad flags exit 2 before anything is sent", async () => {
    const result = await cli(["drop-radar", "--token-id", "0", "--limit", "500"], 1);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/tokenId/);
    expect(result.stderr).toMatch(/limit/);
  });

  it("reads the key from --key-file", async () => {
    const file = join(tmpdir(), `agent-tools-key-${process.pid}`);
    writeFileSync(file, `${DEVNET_ACCOUNTS[2]!.privateKey}\n`, { mode: 0o600 });
    const result = await cli(["intel", "--token-id", "2", "--key-file", file]);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/paid 0\.01 USD from 0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC/);
  });

  it("shows public records without a key", async () => {
    const agent = await cli(["agent", "1"]);
    expect(agent.status).toBe(0);
    expect(agent.stdout).toMatch(/Agent #1 · \w+ \(rank \d+ of 6000/);
    const catalog = await cli(["catalog", "--json"]);
    expect(JSON.parse(catalog.stdout).items).toHaveLength(Object.keys(paidRoutes).length);
  });
});

describe("the runtime", () => {
  it("runs on the machine's Node", async () => {
    const version = await new Promise<string>((resolve) =>
      execFile(machineNode, ["--version"], (_e, stdout) => resolve(String(stdout).trim())),
    );
    expect(Number(version.slice(1).split(".")[0])).toBeGreaterThanOrEqual(20);
    const result = await cli(["--version"]);
    expect(result.stdout.trim()).toBe("1.0.0");
  });
});

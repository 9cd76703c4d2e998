/**
 * The spending limits of the command line and its MCP bridge, one table against the embedded default
 * (test/global-setup.ts): over each limit a call is refused before anything is signed, exit 3 (or an `isError`
 * result from the bridge) with the limit's flag and by how much; and the log a day is counted in, across runs.
 *
 * Refusals use a new key that holds nothing, calling anonymously (quoted 1.00 USD): a payment it signed would be
 * refused by the service for its balance, a different sentence from each one asserted here.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, inject, it } from "vitest";
import { machineNode } from "./helpers/machine-node.js";
import { bin, runCli } from "./helpers/run-cli.js";
import { stateHome } from "./helpers/state-home.js";

const service = attachEmbeddedService(inject("embeddedService"));

/** A spend log holding 0.75 USD charged an hour ago, and 5.00 USD a day and an hour ago, which no longer counts. */
function spendLogWithin24h(): string {
  const file = join(mkdtempSync(join(tmpdir(), "agent-tools-spend-")), "spend.jsonl");
  const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
  writeFileSync(
    file,
    `${JSON.stringify({ at: hoursAgo(25), units: "5000000" })}\n${JSON.stringify({ at: hoursAgo(1), units: "750000" })}\n`,
  );
  return file;
}

/** The environment of a run paying with a new key, its charges logged in `spendLog`. */
function envOf(spendLog: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    AGENT_TOOLS_BASE_URL: service.url,
    AGENT_TOOLS_PRIVATE_KEY: `0x${randomBytes(32).toString("hex")}`,
    AGENT_TOOLS_SPEND_LOG: spendLog,
    AGENT_TOOLS_CHANNEL_DIR: mkdtempSync(join(tmpdir(), "agent-tools-channels-")),
    ...extra,
  };
}

/** One intel call through `agent-tools mcp`, driven by the official MCP client as a desktop agent drives it. */
async function throughBridge(env: Record<string, string>, globals: string[], mcpFlags: string[]): Promise<string> {
  const client = new Client({ name: "desktop-agent", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: machineNode,
      args: [bin, ...globals, "mcp", ...mcpFlags],
      env: { PATH: process.env.PATH ?? "", XDG_STATE_HOME: stateHome, ...env },
      stderr: "ignore",
    }),
  );
  try {
    const result = (await client.callTool({ name: "intel", arguments: { tokenId: 1 } })) as CallToolResult;
    expect(result.isError).toBe(true);
    return (result.content[0] as { text: string }).text;
  } finally {
    await client.close();
  }
}

interface Row {
  limit: string;
  /** Global flags, and the environment beside the new key. */
  flags: string[];
  env?: Record<string, string>;
  /** The `mcp` command's own flags (--budget). */
  mcpFlags?: string[];
  /** What the command says on stderr, flag named; undefined where the command has no such limit. */
  cli?: RegExp;
  /** What the bridge's result says, reason first, the limit in words; undefined where it has no such limit. */
  bridge?: RegExp;
}

const rows: Row[] = [
  {
    limit: "--max-price",
    flags: ["--anonymous", "--max-price", "0.50"],
    cli: /intel costs 1\.00 USD, above --max-price 0\.50 USD \(0\.50 USD over\); nothing was paid\.\nRaise --max-price/,
    bridge: /^over_max_payment: intel costs 1\.00 USD, above the 0\.50 USD per call allowed \(0\.50 USD over\)/,
  },
  {
    limit: "--max-per-day",
    flags: ["--anonymous", "--max-per-day", "1.50"],
    cli: /intel costs 1\.00 USD and 0\.75 USD was spent in the last 24 hours, against --max-per-day 1\.50 USD \(0\.25 USD over\); nothing was paid\.\nWait until/,
    bridge: /^over_daily_limit: .* against the 1\.50 USD per rolling day allowed \(0\.25 USD over\)/,
  },
  {
    limit: "AGENT_TOOLS_MAX_PER_DAY",
    flags: ["--anonymous"],
    env: { AGENT_TOOLS_MAX_PER_DAY: "1.25" },
    cli: /against --max-per-day 1\.25 USD \(0\.50 USD over\); nothing was paid\./,
    bridge: /^over_daily_limit: .* against the 1\.25 USD per rolling day allowed \(0\.50 USD over\)/,
  },
  {
    limit: "--max-deposit",
    flags: ["--anonymous", "--channel", "--channel-deposit", "2.00", "--max-deposit", "1.50"],
    cli: /intel would deposit 2\.00 USD into a payment channel, above --max-deposit 1\.50 USD \(0\.50 USD over\); nothing was signed\.\nLower --channel-deposit/,
  },
  {
    limit: "mcp --budget",
    flags: ["--anonymous"],
    mcpFlags: ["--budget", "0.60"],
    bridge: /^over_budget: intel costs 1\.00 USD and 0\.00 USD of the 0\.60 USD budget is spent \(0\.40 USD over\)/,
  },
];

describe("spending limits of the command line and the MCP bridge", () => {
  const cliRows = rows.filter((row) => row.cli);
  it.each(cliRows)("agent-tools intel refuses over $limit before signing, exit 3", async (row) => {
    const env = envOf(spendLogWithin24h(), row.env);
    const result = await runCli(["intel", "--token-id", "1", ...row.flags], env);
    expect(result.stderr).toMatch(row.cli!);
    expect(result.status).toBe(3);
    // No channel was opened, and the log holds only what it held.
    expect(readdirSync(env.AGENT_TOOLS_CHANNEL_DIR!)).toEqual([]);
    expect(readFileSync(env.AGENT_TOOLS_SPEND_LOG!, "utf8").trim().split("\n")).toHaveLength(2);
  });

  const bridgeRows = rows.filter((row) => row.bridge);
  it.each(bridgeRows)("agent-tools mcp refuses over $limit before signing, as an isError result", async (row) => {
    const env = envOf(spendLogWithin24h(), row.env);
    expect(await throughBridge(env, row.flags, row.mcpFlags ?? [])).toMatch(row.bridge!);
    expect(readFileSync(env.AGENT_TOOLS_SPEND_LOG!, "utf8").trim().split("\n")).toHaveLength(2);
  });

  it("a limit set by a variable that is not an amount exits 2, naming the variable", async () => {
    const result = await runCli(
      ["intel", "--token-id", "1"],
      envOf(spendLogWithin24h(), { AGENT_TOOLS_MAX_PER_DAY: "five" }),
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/AGENT_TOOLS_MAX_PER_DAY is not a USD amount \(five\)/);
  });

  it("counts a day across runs: each charge is logged, and the next run over the limit is refused", async () => {
    // Account 6 pays here, and in no other test file of the command line; a run keeps its own log by default.
    const state = mkdtempSync(join(tmpdir(), "agent-tools-state-"));
    const env = {
      AGENT_TOOLS_BASE_URL: service.url,
      AGENT_TOOLS_PRIVATE_KEY: DEVNET_ACCOUNTS[6]!.privateKey,
      XDG_STATE_HOME: state,
    };
    const paid = await runCli(["intel", "--token-id", "6", "--max-per-day", "0.015"], env);
    expect(paid.stderr).toMatch(/charged 0\.01 USD over channel/);
    expect(paid.status).toBe(0);
    const log = join(state, "agent-tools", "spend", `${DEVNET_ACCOUNTS[6]!.address.toLowerCase()}.jsonl`);
    const [charge] = readFileSync(log, "utf8").trim().split("\n");
    expect(JSON.parse(charge!)).toMatchObject({ units: "10000" });

    const refused = await runCli(["intel", "--token-id", "6", "--max-per-day", "0.015"], env);
    expect(refused.stderr).toMatch(
      /intel costs 0\.01 USD and 0\.01 USD was spent in the last 24 hours, against --max-per-day 0\.015 USD \(0\.005 USD over\)/,
    );
    expect(refused.status).toBe(3);
  });
});

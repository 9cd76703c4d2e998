import { fileURLToPath } from "node:url";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, inject, it } from "vitest";
import { machineNode } from "./helpers/machine-node.js";
import { printedRpcUrl } from "./helpers/printed-rpc.js";
import { stateHome } from "./helpers/state-home.js";

const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
/** The embedded default the package's test files share (test/global-setup.ts). */
const service = attachEmbeddedService(inject("embeddedService"));

/** `agent-tools mcp` started as Claude Desktop or Cursor start it, driven by the official MCP client over stdio. */
async function bridge(keyIndex: number, options: string[], mcpOptions: string[] = []): Promise<Client> {
  const client = new Client({ name: "desktop-agent", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: machineNode,
      args: [bin, "--base-url", service.url, ...options, "mcp", ...mcpOptions],
      env: {
        PATH: process.env.PATH ?? "",
        XDG_STATE_HOME: stateHome,
        AGENT_TOOLS_RPC_URL: printedRpcUrl(),
        AGENT_TOOLS_PRIVATE_KEY: DEVNET_ACCOUNTS[keyIndex]!.privateKey,
      },
      stderr: "ignore",
    }),
  );
  return client;
}

/** The payer's USD balance on the embedded default's payment chain: `balanceOf` read over JSON-RPC. */
async function usdBalance(address: string): Promise<bigint> {
  const rpc = /L2 \(payments\)\s+(\S+)/.exec(service.output())?.[1];
  const usd = /USD token\s+(0x[0-9a-fA-F]{40})/.exec(service.output())?.[1];
  if (!rpc || !usd) throw new Error(`no payment chain named:\n${service.output()}`);
  const data = `0x70a08231${address.slice(2).toLowerCase().padStart(64, "0")}`;
  const res = await fetch(rpc, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_call", params: [{ to: usd, data }, "latest"] }),
  });
  return BigInt(((await res.json()) as { result: string }).result);
}

const text = (result: CallToolResult) => (result.content[0] as { text: string }).text;

describe("agent-tools mcp", () => {
  it("offers the tools, pays a holder's call at the holder price, and honours --budget before signing", async () => {
    const payer = DEVNET_ACCOUNTS[1]!.address;
    // With `exact` (--no-channel), the wallet pays each call itself (channels.test.ts has the bridge on a channel).
    const client = await bridge(1, ["--no-channel"], ["--budget", "0.015"]);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain("drop_radar");
      const before = await usdBalance(payer);
      const paid = (await client.callTool({ name: "intel", arguments: { tokenId: 1 } })) as CallToolResult;
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent).toMatchObject({ tokenId: 1, caller: payer });
      expect(before - (await usdBalance(payer))).toBe(10_000n);
      // 0.01 of 0.015 spent: a second 0.01 call would pass the budget.
      const refused = (await client.callTool({ name: "intel", arguments: { tokenId: 1 } })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/^over_budget: intel costs 0\.01 USD/);
      expect(before - (await usdBalance(payer))).toBe(10_000n);
    } finally {
      await client.close();
    }
  });

  it("refuses a quote above --max-price without signing", async () => {
    const payer = DEVNET_ACCOUNTS[2]!.address;
    const client = await bridge(2, ["--anonymous", "--max-price", "0.50"]);
    try {
      const before = await usdBalance(payer);
      const refused = (await client.callTool({ name: "intel", arguments: { tokenId: 2 } })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/^over_max_payment: intel costs 1\.00 USD, above the 0\.50 USD per call allowed/);
      expect(await usdBalance(payer)).toBe(before);
    } finally {
      await client.close();
    }
  });
});

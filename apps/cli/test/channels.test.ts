/**
 * Paying over a channel, as the command does by default, and `agent-tools channels` against the embedded default
 * (test/global-setup.ts): two runs of the built command open one channel and go on with it, the state kept in a directory only its user reads, and the unspent
 * balance comes back on chain.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, inject, it } from "vitest";
import { machineNode } from "./helpers/machine-node.js";
import { printedRpcUrl } from "./helpers/printed-rpc.js";
import { balanceOn, l2UrlOf } from "./helpers/refund-transfer.js";
import { bin, runCli } from "./helpers/run-cli.js";
import { stateHome } from "./helpers/state-home.js";

const service = attachEmbeddedService(inject("embeddedService"));
/** Account 9 pays over a channel here, and in no other test file of the package; it holds token 9. */
const PAYER = 9;
const channelDir = join(mkdtempSync(join(tmpdir(), "agent-tools-channels-")), "channels");
afterAll(() => rmSync(join(channelDir, ".."), { recursive: true, force: true }));

const cli = (args: string[]) =>
  runCli(["--base-url", service.url, ...args], {
    AGENT_TOOLS_PRIVATE_KEY: DEVNET_ACCOUNTS[PAYER]!.privateKey,
    AGENT_TOOLS_CHANNEL_DIR: channelDir,
  });

/** The payment chain, its USD token, the payer, and the channel the runs before kept. */
async function keptChannel() {
  const catalog = (await (await fetch(`${service.url}/.well-known/x402`)).json()) as {
    items: { accepts: { asset: string }[] }[];
  };
  const [id] = (JSON.parse((await cli(["channels", "--json"])).stdout) as { channelId: string }[]).map(
    (channel) => channel.channelId,
  );
  return {
    l2: l2UrlOf(service.output()),
    asset: catalog.items[0]!.accepts[0]!.asset,
    payer: DEVNET_ACCOUNTS[PAYER]!.address,
    id,
  };
}

describe("agent-tools over a payment channel", () => {
  it("two runs open one channel and reuse it; channels lists it; refund returns the rest on chain", async () => {
    const l2 = l2UrlOf(service.output());
    // The USD token a channel holds is the one every price is quoted in.
    const catalog = JSON.parse((await cli(["catalog", "--json"])).stdout) as {
      items: { accepts: { asset: string }[] }[];
    };
    const asset = catalog.items[0]!.accepts[0]!.asset;
    const payer = DEVNET_ACCOUNTS[PAYER]!.address;
    const before = await balanceOn(l2, asset, payer);

    const first = await cli(["intel", "--token-id", "9", "--channel-deposit", "0.05"]);
    expect(first.status).toBe(0);
    expect(first.stdout).toContain("Agent #9");
    const opened =
      /charged 0\.01 USD over channel (0x[0-9a-f]{64}) from 0x[0-9a-fA-F]{40} · 0\.04 USD left in it · deposited 0\.05 USD, tx 0x[0-9a-f]{64}/.exec(
        first.stderr,
      );
    expect(opened, first.stderr).not.toBeNull();
    const id = opened![1]!;

    const second = await cli(["intel", "--token-id", "9", "--channel-deposit", "0.05"]);
    expect(second.status).toBe(0);
    expect(second.stderr).toContain(`charged 0.01 USD over channel ${id} from ${payer} · 0.03 USD left in it`);
    expect(second.stderr).not.toContain("deposited");
    // One deposit left the wallet; the second call moved nothing on chain.
    expect(await balanceOn(l2, asset, payer)).toBe(before - 50_000n);
    // The state is the user's alone.
    expect(statSync(channelDir).mode & 0o777).toBe(0o700);
    for (const file of readdirSync(channelDir)) expect(statSync(join(channelDir, file)).mode & 0o777).toBe(0o600);

    const listed = await cli(["channels", "--json"]);
    expect(listed.status).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ channelId: id, balance: "50000", charged: "20000", refundable: "30000" }),
    ]);
    const table = await cli(["channels"]);
    expect(table.stdout).toMatch(new RegExp(`^0\\.05\\s+0\\.02\\s+[\\d.]+\\s+0\\.03\\s+${id}$`, "m"));

    const part = await cli(["channels", "refund", "--amount", "0.01"]);
    expect(part.status).toBe(0);
    expect(part.stdout).toMatch(new RegExp(`^Refunded 0\\.01 USD from channel ${id} · tx 0x[0-9a-f]{64}$`, "m"));
    const refund = await cli(["channels", "refund", "--token-id", "9", "--json"]);
    expect(refund.status).toBe(0);
    expect(JSON.parse(refund.stdout)).toMatchObject({ channelId: id, refunded: "20000" });
    expect(await balanceOn(l2, asset, payer)).toBe(before - 20_000n);
    // Nothing is left: a second refund is refused, and says why.
    const again = await cli(["channels", "refund", "--token-id", "9"]);
    expect(again.status).toBe(3);
    expect(again.stderr).toMatch(/refund was refused/);
  });

  it("agent-tools mcp pays a desktop agent's calls over the channel the runs before it kept", async () => {
    const { l2, asset, payer, id } = await keptChannel();
    const before = await balanceOn(l2, asset, payer);
    const client = new Client({ name: "desktop-agent", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: machineNode,
        args: [bin, "--base-url", service.url, "--channel-deposit", "0.05", "mcp"],
        env: {
          PATH: process.env.PATH ?? "",
          XDG_STATE_HOME: stateHome,
          AGENT_TOOLS_RPC_URL: printedRpcUrl(),
          AGENT_TOOLS_PRIVATE_KEY: DEVNET_ACCOUNTS[PAYER]!.privateKey,
          AGENT_TOOLS_CHANNEL_DIR: channelDir,
        },
        stderr: "ignore",
      }),
    );
    try {
      for (let call = 0; call < 2; call++) {
        const result = (await client.callTool({ name: "intel", arguments: { tokenId: 9 } })) as CallToolResult;
        expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
        expect(result.structuredContent).toMatchObject({ tokenId: 9 });
      }
    } finally {
      await client.close();
    }
    // The channel the runs above refunded in full is topped up once (0.05), and both calls are charged on it.
    expect(await balanceOn(l2, asset, payer)).toBe(before - 50_000n);
    expect(JSON.parse((await cli(["channels", "--json"])).stdout)).toEqual([
      expect.objectContaining({ channelId: id, balance: "70000", charged: "40000", refundable: "30000" }),
    ]);
  });

  it("a record behind the service's is refused without an RPC, saying what to set, and paid on with one", async () => {
    const { l2, asset, payer, id } = await keptChannel();
    // Another machine of the same key: a channel directory that holds no record of the channel the runs above used.
    const elsewhere = join(channelDir, "..", "elsewhere");
    const run = (rpcUrl: string) =>
      runCli(["--base-url", service.url, "intel", "--token-id", "9"], {
        AGENT_TOOLS_PRIVATE_KEY: DEVNET_ACCOUNTS[PAYER]!.privateKey,
        AGENT_TOOLS_CHANNEL_DIR: elsewhere,
        AGENT_TOOLS_RPC_URL: rpcUrl,
      });
    const before = await balanceOn(l2, asset, payer);
    const refused = await run("");
    expect(refused.status).toBe(3);
    expect(refused.stderr).toMatch(/this machine's record of the payment channel is behind the service's/);
    expect(refused.stderr).toMatch(/^Set AGENT_TOOLS_RPC_URL \(or --rpc-url\) to a JSON-RPC URL of the payment chain/m);
    expect(await balanceOn(l2, asset, payer)).toBe(before);

    const paid = await run(printedRpcUrl());
    expect(paid.status, paid.stderr).toBe(0);
    expect(paid.stderr).toContain(`charged 0.01 USD over channel ${id} from ${payer}`);
    // It went on from the chain's balance: no deposit.
    expect(paid.stderr).not.toContain("deposited");
    expect(await balanceOn(l2, asset, payer)).toBe(before);
  });
  it("a key without the deposit is refused before anything moves, and told what to do", async () => {
    // A key of its own, which holds no USD on the payment chain; anonymous, so no token is needed.
    const key = `0x${randomBytes(32).toString("hex")}`;
    const result = await runCli(["--base-url", service.url, "intel", "--token-id", "9", "--anonymous"], {
      AGENT_TOOLS_PRIVATE_KEY: key,
      AGENT_TOOLS_CHANNEL_DIR: join(channelDir, "..", "unfunded"),
    });
    expect(result.status).toBe(3);
    expect(result.stderr).toMatch(/the payer's balance does not cover the deposit/);
    expect(result.stderr).toMatch(/^Add funds to the paying key, lower --channel-deposit, or pay with --no-channel/m);
  });
});

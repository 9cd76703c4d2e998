/**
 * `agent-tools channels withdraw`: the payer's timed withdrawal on the channel contract, without the service. An
 * embedded default of this file's own, with the shortest delay the contract allows (900 s), whose chain's clock this
 * test moves past the delay: the shared one's clock must stay with the wall's, by which payments are signed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { type EmbeddedProcess, spawnEmbeddedService } from "@agent-tools/server/embedded-process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceOn, l2UrlOf, rpc } from "./helpers/refund-transfer.js";
import { runCli } from "./helpers/run-cli.js";

/** x402's channel contract, at its canonical address. */
const CHANNEL_CONTRACT = "0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003";
const DELAY_SECONDS = 900;
const PAYER = 4;

let service: EmbeddedProcess;
const dir = mkdtempSync(join(tmpdir(), "agent-tools-withdraw-"));
beforeAll(async () => {
  service = await spawnEmbeddedService({
    env: { CHANNEL_WITHDRAW_DELAY: String(DELAY_SECONDS), CHANNEL_CLAIM_INTERVAL_MS: "1000" },
  });
}, 300_000);
afterAll(async () => {
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A JSON-RPC call to this file's payment chain. */
const chainRpc = (method: string, params: unknown[]) => rpc(l2UrlOf(service.output()), method, params);

/** What the contract has claimed of a channel: `channels(id)`'s second word. */
async function claimedOf(channelId: string): Promise<bigint> {
  const data = `0x${"7a7ebd7b"}${channelId.slice(2)}`;
  const words = ((await chainRpc("eth_call", [{ to: CHANNEL_CONTRACT, data }, "latest"])) as string).slice(2);
  return BigInt(`0x${words.slice(64, 128)}`);
}

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(["--base-url", service.url, ...args], {
    AGENT_TOOLS_PRIVATE_KEY: DEVNET_ACCOUNTS[PAYER]!.privateKey,
    AGENT_TOOLS_CHANNEL_DIR: join(dir, "channels"),
    AGENT_TOOLS_RPC_URL: l2UrlOf(service.output()),
    ...env,
  });

describe("agent-tools channels withdraw", () => {
  it("starts a timed withdrawal, says when it can be finished, pays without the channel meanwhile, and finishes it after the delay", async () => {
    const asset = (
      (await (await fetch(`${service.url}/.well-known/x402`)).json()) as { items: { accepts: { asset: string }[] }[] }
    ).items[0]!.accepts[0]!.asset;
    const payer = DEVNET_ACCOUNTS[PAYER]!.address;
    const paid = await cli(["intel", "--token-id", String(PAYER), "--channel-deposit", "0.05"]);
    expect(paid.status, paid.stderr).toBe(0);
    const id = /charged 0\.01 USD over channel (0x[0-9a-f]{64})/.exec(paid.stderr)![1]!;
    // The service claims what it charged on its next pass.
    while ((await claimedOf(id)) < 10_000n) await new Promise((next) => setTimeout(next, 100));

    const withoutRpc = await cli(["channels", "withdraw"], { AGENT_TOOLS_RPC_URL: "" });
    expect(withoutRpc.status).toBe(2);
    expect(withoutRpc.stderr).toMatch(
      /channels withdraw sends a transaction on the payment chain: set AGENT_TOOLS_RPC_URL/,
    );

    const before = await balanceOn(l2UrlOf(service.output()), asset, payer);
    const started = await cli(["channels", "withdraw"]);
    expect(started.status, started.stderr).toBe(0);
    expect(started.stdout).toMatch(
      new RegExp(`^Started the withdrawal of 0\\.04 USD from channel ${id} · tx 0x[0-9a-f]{64}$`, "m"),
    );
    const finishable = /^Finish it from (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) UTC/m.exec(started.stdout);
    expect(finishable, started.stdout).not.toBeNull();

    const early = await cli(["channels", "withdraw", "--json"]);
    expect(early.status, early.stderr).toBe(0);
    expect(JSON.parse(early.stdout)).toMatchObject({ status: "waiting", channelId: id, amount: "40000" });
    expect(await balanceOn(l2UrlOf(service.output()), asset, payer)).toBe(before);

    // Once the service has seen the withdrawal, the channel takes no more calls, and the command says what to do.
    await service.printed(/a payer started a timed withdrawal/);
    const busy = await cli(["intel", "--token-id", String(PAYER)]);
    expect(busy.status, busy.stderr).toBe(3);
    expect(busy.stderr).toMatch(/timed withdrawal of this channel/);
    expect(busy.stderr).toMatch(/pay with --no-channel until the withdrawal is finished/);
    const direct = await cli(["intel", "--token-id", String(PAYER), "--no-channel"]);
    expect(direct.status, direct.stderr).toBe(0);
    expect(direct.stderr).toMatch(/paid 0\.01 USD from 0x[0-9a-fA-F]{40} · tx 0x[0-9a-f]{64}/);
    const beforeFinish = await balanceOn(l2UrlOf(service.output()), asset, payer);
    expect(beforeFinish).toBe(before - 10_000n);

    // The chain's clock past the channel's delay.
    await chainRpc("evm_increaseTime", [DELAY_SECONDS]);
    await chainRpc("evm_mine", []);
    const finished = await cli(["channels", "withdraw"]);
    expect(finished.status, finished.stderr).toBe(0);
    expect(finished.stdout).toMatch(new RegExp(`^Withdrew 0\\.04 USD from channel ${id} · tx 0x[0-9a-f]{64}$`, "m"));
    expect(await balanceOn(l2UrlOf(service.output()), asset, payer)).toBe(beforeFinish + 40_000n);
    // What the record says now: the claimed 0.01 is all that is left in the channel, nothing to refund.
    expect(JSON.parse((await cli(["channels", "--json"])).stdout)).toEqual([
      expect.objectContaining({ channelId: id, balance: "10000", charged: "10000", refundable: "0" }),
    ]);
    // Nothing is left to withdraw, and the command says so.
    const again = await cli(["channels", "withdraw"]);
    expect(again.status).toBe(3);
    expect(again.stderr).toMatch(/Nothing in channel 0x[0-9a-f]{64} is left to withdraw/);
  }, 120_000);
});

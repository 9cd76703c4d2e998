/**
 * Paying over x402 `batch-settlement` channels against the embedded default (test/global-setup.ts): one deposit on
 * chain, then vouchers; the channel kept across a restart of the client; the unspent balance back on chain.
 */
import { type AddressInfo, createServer } from "node:net";
import { TaskState } from "@a2a-js/sdk";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme, computeChannelId } from "@x402/evm/batch-settlement/client";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, inject, it } from "vitest";
import { connectA2aClient } from "../src/a2a.js";
import {
  ChannelError,
  createAgentToolsClient,
  memoryChannelStorage,
  NetworkError,
  type PaymentRequired,
  PaymentRequiredError,
} from "../src/index.js";
import { connectMcpClient } from "../src/mcp.js";
import { balanceOf, paymentChainRpc } from "./helpers/payment-chain.js";

const service = attachEmbeddedService(inject("embeddedService"));
/** Account 5 pays over channels here, and in no other test file. */
const payer = privateKeyToAccount(DEVNET_ACCOUNTS[5]!.privateKey);

describe("paying over channels", () => {
  it("deposits once, pays later calls with vouchers, keeps the channel across a restart, and refunds the rest", async () => {
    const storage = memoryChannelStorage();
    const options = { baseUrl: service.url, account: payer, channels: { deposit: "0.05", storage } };
    const client = createAgentToolsClient(options);
    const before = await balanceOf(service, payer.address);

    const first = await client.intel({ tokenId: 5 });
    expect(first.payment).toMatchObject({
      amount: "10000",
      amountUsd: "0.01",
      payer: payer.address,
      channel: { charged: "10000", balance: "50000", deposited: "50000" },
    });
    // The first call's transaction is its deposit's.
    expect(first.payment!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(first.payment!.receipt).not.toBeNull();
    const id = first.payment!.channel!.id;
    expect(id).toMatch(/^0x[0-9a-f]{64}$/);

    const second = await client.intel({ tokenId: 5 });
    expect(second.payment).toMatchObject({
      amount: "10000",
      transaction: "",
      channel: { id, charged: "20000", balance: "50000", deposited: "0" },
    });
    expect(second.payment!.receipt).not.toBeNull();
    expect(client.spentUsd()).toBe("0.02");
    // One deposit left the wallet; the calls moved nothing on chain.
    expect(await balanceOf(service, payer.address)).toBe(before - 50_000n);
    expect(await client.channels()).toEqual([
      expect.objectContaining({ channelId: id, balance: 50_000n, charged: 20_000n, refundable: 30_000n }),
    ]);

    // Another process with the same storage pays the next voucher of the same channel.
    const restarted = createAgentToolsClient(options);
    const third = await restarted.intel({ tokenId: 5 });
    expect(third.payment!.channel).toMatchObject({ id, charged: "30000", deposited: "0" });

    const refund = await restarted.refundChannel({ tokenId: 5 });
    expect(refund).toMatchObject({ channelId: id, refunded: 20_000n });
    expect(refund.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    // What came back is the deposit less the three calls.
    expect(await balanceOf(service, payer.address)).toBe(before - 30_000n);
    // Refunded in full, the channel is kept as the refund left it, nothing refundable; the next call tops it up.
    expect(await restarted.channels()).toEqual([
      expect.objectContaining({ channelId: id, balance: 30_000n, charged: 30_000n, refundable: 0n }),
    ]);
    const nothingLeft = await restarted.refundChannel({ tokenId: 5 }).catch((error: unknown) => error);
    expect(nothingLeft).toBeInstanceOf(ChannelError);
    expect((nothingLeft as ChannelError).message).toMatch(/nothing is left to refund/);
    // A client that holds no channel with the service is told so.
    const stranger = createAgentToolsClient({ baseUrl: service.url, account: payer, channels: true });
    await expect(stranger.refundChannel({ tokenId: 5 })).rejects.toThrow(/holds no channel with this service/);
    const topUp = await restarted.intel({ tokenId: 5 });
    expect(topUp.payment!.channel).toMatchObject({ id, charged: "40000", balance: "80000", deposited: "50000" });
    expect(await balanceOf(service, payer.address)).toBe(before - 80_000n);
  });

  it("a client that lost its channel's state is set right by the service, with the chain to check it against", async () => {
    // A channel of its own (another salt), opened by one client.
    const salt = `0x${"03".padStart(64, "0")}` as const;
    const first = createAgentToolsClient({
      baseUrl: service.url,
      account: payer,
      channels: { deposit: "0.05", storage: memoryChannelStorage(), salt },
    });
    const opened = await first.intel({ tokenId: 5 });
    const id = opened.payment!.channel!.id;
    const before = await balanceOf(service, payer.address);

    // Without a chain to check the service's word against, a client with no state of the channel is refused and
    // pays nothing: its deposit for a total already charged gets the scheme's corrective 402.
    const blind = createAgentToolsClient({
      baseUrl: service.url,
      account: payer,
      channels: { deposit: "0.05", storage: memoryChannelStorage(), salt },
    });
    const refused = await blind.intel({ tokenId: 5 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PaymentRequiredError);
    expect((refused as PaymentRequiredError).reason).toBe("invalid_batch_settlement_evm_cumulative_amount_mismatch");
    expect(await balanceOf(service, payer.address)).toBe(before);

    // With one, it checks the charged total against its own last signature and the chain, and pays the next voucher,
    // with no second deposit.
    const forgetful = createAgentToolsClient({
      baseUrl: service.url,
      account: payer,
      channels: { deposit: "0.05", storage: memoryChannelStorage(), salt, rpcUrl: paymentChainRpc(service) },
    });
    const next = await forgetful.intel({ tokenId: 5 });
    expect(next.payment!.channel).toMatchObject({ id, charged: "20000", deposited: "0" });
    expect(await balanceOf(service, payer.address)).toBe(before);
  });

  it("a kept state of a channel the chain does not have (a chain started afresh) is forgotten, and the call deposits", async () => {
    const salt = `0x${"02".padStart(64, "0")}` as const;
    const quote = (await (await fetch(`${service.url}/intel?tokenId=5`)).json()) as PaymentRequired;
    const requirement = quote.accepts.find((accept) => accept.scheme === "batch-settlement")!;
    const id = computeChannelId(
      new BatchSettlementEvmScheme(toClientEvmSigner(payer), { salt }).buildChannelConfig(requirement as never),
      requirement.network,
    ).toLowerCase();
    const storage = memoryChannelStorage();
    await storage.set(id, { balance: "50000", chargedCumulativeAmount: "10000", totalClaimed: "0" });
    const client = createAgentToolsClient({
      baseUrl: service.url,
      account: payer,
      channels: { deposit: "0.05", storage, salt },
    });
    const before = await balanceOf(service, payer.address);
    const { payment } = await client.intel({ tokenId: 5 });
    expect(payment!.channel).toMatchObject({ id, charged: "10000", balance: "50000", deposited: "50000" });
    expect(await balanceOf(service, payer.address)).toBe(before - 50_000n);
  });

  it("the MCP client pays over the same channel as the HTTP client when they share its storage", async () => {
    const salt = `0x${"04".padStart(64, "0")}` as const;
    const storage = memoryChannelStorage();
    const channels = { deposit: "0.05", storage, salt };
    const before = await balanceOf(service, payer.address);
    const mcp = await connectMcpClient({ baseUrl: service.url, account: payer, channels });
    try {
      const first = await mcp.callTool("intel", { tokenId: 5 });
      expect(first.result.isError).toBeFalsy();
      expect(first.payment).toMatchObject({ amount: "10000", channel: { charged: "10000", deposited: "50000" } });
      const id = first.payment!.channel!.id;
      const second = await mcp.callTool("intel", { tokenId: 5 });
      expect(second.payment).toMatchObject({ amount: "10000", transaction: "", channel: { id, charged: "20000" } });
      expect(second.payment!.receipt).not.toBeNull();
      expect(await balanceOf(service, payer.address)).toBe(before - 50_000n);

      // The HTTP client with the same storage goes on from the MCP client's last voucher, and refunds the rest.
      const http = createAgentToolsClient({ baseUrl: service.url, account: payer, channels });
      const third = await http.intel({ tokenId: 5 });
      expect(third.payment!.channel).toMatchObject({ id, charged: "30000", deposited: "0" });
      expect(await http.refundChannel({ tokenId: 5 })).toMatchObject({ channelId: id, refunded: 20_000n });
      expect(await balanceOf(service, payer.address)).toBe(before - 30_000n);
    } finally {
      await mcp.close();
    }
  });

  it("the A2A client pays over a channel too, shares it with the HTTP client, and is set right when it lost its state", async () => {
    const salt = `0x${"06".padStart(64, "0")}` as const;
    const storage = memoryChannelStorage();
    const channels = { deposit: "0.05", storage, salt };
    const before = await balanceOf(service, payer.address);
    const agent = await connectA2aClient({ baseUrl: service.url, account: payer, channels });
    const first = await agent.callSkill("intel", { tokenId: 5 });
    expect(first.task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(first.payment).toMatchObject({ amount: "10000", channel: { charged: "10000", deposited: "50000" } });
    const id = first.payment!.channel!.id;
    const second = await agent.callSkill("intel", { tokenId: 5 });
    expect(second.payment).toMatchObject({ amount: "10000", transaction: "", channel: { id, charged: "20000" } });
    expect(second.payment!.receipt).not.toBeNull();
    expect(await balanceOf(service, payer.address)).toBe(before - 50_000n);

    // A client with no state of the channel gets the corrective answer on a failed task: without a chain to check it
    // against, it is refused and pays nothing; with one, it pays on a task of its own, with no second deposit.
    const blind = await connectA2aClient({
      baseUrl: service.url,
      account: payer,
      channels: { deposit: "0.05", storage: memoryChannelStorage(), salt },
    });
    const refused = await blind.callSkill("intel", { tokenId: 5 }).catch((error: unknown) => error);
    expect((refused as PaymentRequiredError).reason).toBe("invalid_batch_settlement_evm_cumulative_amount_mismatch");
    const forgetful = await connectA2aClient({
      baseUrl: service.url,
      account: payer,
      channels: { deposit: "0.05", storage: memoryChannelStorage(), salt, rpcUrl: paymentChainRpc(service) },
    });
    const third = await forgetful.callSkill("intel", { tokenId: 5 });
    expect(third.task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(third.payment!.channel).toMatchObject({ id, charged: "30000", deposited: "0" });

    // The HTTP client with the first storage goes on from the A2A client's last voucher it knows of: set right too,
    // then it refunds the rest.
    const http = createAgentToolsClient({
      baseUrl: service.url,
      account: payer,
      channels: { ...channels, rpcUrl: paymentChainRpc(service) },
    });
    const fourth = await http.intel({ tokenId: 5 });
    expect(fourth.payment!.channel).toMatchObject({ id, charged: "40000", deposited: "0" });
    expect(await http.refundChannel({ tokenId: 5 })).toMatchObject({ channelId: id, refunded: 10_000n });
    expect(await balanceOf(service, payer.address)).toBe(before - 40_000n);
  });

  it("a refund asked of a service that does not answer is a network error, said in words", async () => {
    // A port nothing listens on: one the system gave and took back.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const client = createAgentToolsClient({ baseUrl: `http://127.0.0.1:${port}`, account: payer, channels: true });
    const error = await client.refundChannel({ tokenId: 5 }).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).message).toBe(
      `Could not reach http://127.0.0.1:${port}/intel?tokenId=5: nothing accepts connections there (connection refused).`,
    );
  });

  it("counts what a channel call was charged by its work against the day, and says of which ceiling", async () => {
    // Anonymous: each voucher signs the 1.00 price as a ceiling; an /intel answer is charged 0.012 of it.
    const client = createAgentToolsClient({
      baseUrl: service.url,
      account: privateKeyToAccount(DEVNET_ACCOUNTS[6]!.privateKey),
      signIn: false,
      maxPerDay: "1.02",
      channels: { deposit: "3.00", storage: memoryChannelStorage() },
    });
    const first = await client.intel({ tokenId: 6 });
    expect(first.payment).toMatchObject({
      amount: "12000",
      amountUsd: "0.012",
      ceiling: "1000000",
      work: { upstreamReads: 0, itemsExamined: 1, blocksScanned: 0 },
    });
    // 0.012 spent, 1.008 left of the day: room for another 1.00 ceiling. Counted at its ceiling, the first would
    // have left 0.02, and this call would be refused.
    const second = await client.intel({ tokenId: 6 });
    expect(second.payment!.amount).toBe("12000");
    // Now 0.024 spent: a third 1.00 ceiling would pass 1.02, so it is refused before anything is signed.
    const third = await client.intel({ tokenId: 6 }).catch((error: unknown) => error);
    expect(third).toBeInstanceOf(PaymentRequiredError);
    expect((third as PaymentRequiredError).reason).toBe("over_daily_limit");
    expect((third as PaymentRequiredError).limit).toMatchObject({ limit: "maxPerDay" });
    await client.refundChannel({ tokenId: 6 });
  });

  it("without the option, the same service is paid with exact", async () => {
    const client = createAgentToolsClient({ baseUrl: service.url, account: payer });
    const { payment } = await client.intel({ tokenId: 5 });
    expect(payment!.channel).toBeUndefined();
    expect(payment!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await client.channels()).toEqual([]);
  });
});

/**
 * Paying with x402's `upto` (the option `upto`) against the embedded default (test/global-setup.ts): each call signs
 * a Permit2 permit of up to its price and is charged the work its answer took, over HTTP, MCP and A2A alike; the
 * payer loses on chain exactly what each answer says it was charged.
 */
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { createPublicClient, createWalletClient, erc20Abi, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, inject, it } from "vitest";
import { connectA2aClient } from "../src/a2a.js";
import { createAgentToolsClient, memoryChannelStorage, PaymentRequiredError } from "../src/index.js";
import { connectMcpClient } from "../src/mcp.js";
import { balanceOf, paymentChainRpc } from "./helpers/payment-chain.js";

const service = attachEmbeddedService(inject("embeddedService"));
/** Account 8 pays with upto here (the devnet's accounts 1-9 approved Permit2 for the USD token when seeded). */
const payer = privateKeyToAccount(DEVNET_ACCOUNTS[8]!.privateKey);
/** What an anonymous `intel` call's answer takes: one agent examined, nothing read upstream. */
const INTEL_WORK = { upstreamReads: 0, itemsExamined: 1, blocksScanned: 0 };

describe("paying with upto", () => {
  it("charges each call the work done, of its price as a ceiling, over HTTP, MCP and A2A; the chain agrees", async () => {
    const options = { baseUrl: service.url, account: payer, upto: true, signIn: false };
    const before = await balanceOf(service, payer.address);

    const http = createAgentToolsClient({ ...options, maxPerDay: "5.00" });
    const overHttp = await http.intel({ tokenId: 1 });
    expect(overHttp.payment).toMatchObject({
      amount: "12000",
      amountUsd: "0.012",
      ceiling: "1000000",
      work: INTEL_WORK,
    });
    expect(overHttp.payment!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(overHttp.payment!.receipt).not.toBeNull();
    expect(overHttp.payment!.channel).toBeUndefined();
    expect(await balanceOf(service, payer.address)).toBe(before - 12_000n);
    // The limits count the price the permit let the service take.
    expect(http.spentUsd()).toBe("1.00");

    const mcp = await connectMcpClient(options);
    try {
      const overMcp = await mcp.callTool("intel", { tokenId: 1 });
      expect(overMcp.payment).toMatchObject({ amount: "12000", ceiling: "1000000", work: INTEL_WORK });
    } finally {
      await mcp.close();
    }
    const agent = await connectA2aClient(options);
    const overA2a = await agent.callSkill("intel", { tokenId: 1 });
    expect(overA2a.payment).toMatchObject({ amount: "12000", ceiling: "1000000", work: INTEL_WORK });
    expect(await balanceOf(service, payer.address)).toBe(before - 36_000n);
  });

  it("is checked against the per-call cap at its ceiling, before anything is signed", async () => {
    const client = createAgentToolsClient({
      baseUrl: service.url,
      account: payer,
      upto: true,
      signIn: false,
      maxPaymentPerCall: "0.50",
    });
    const before = await balanceOf(service, payer.address);
    const refused = await client.intel({ tokenId: 1 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PaymentRequiredError);
    expect((refused as PaymentRequiredError).reason).toBe("over_max_payment");
    expect(await balanceOf(service, payer.address)).toBe(before);
  });

  it("leaves channels first when both are allowed, and a key without the Permit2 approval is told what to do", async () => {
    const both = createAgentToolsClient({
      baseUrl: service.url,
      account: payer,
      upto: true,
      signIn: false,
      channels: { deposit: "1.00", storage: memoryChannelStorage(), salt: `0x${"08".padStart(64, "0")}` },
    });
    const overChannel = await both.intel({ tokenId: 1 });
    expect(overChannel.payment!.channel).toMatchObject({ charged: "12000", deposited: "1000000" });
    await both.refundChannel({ tokenId: 1 });

    // A key holding the asset that never approved Permit2: the service refuses it before anything moves, and says why.
    const fresh = privateKeyToAccount(generatePrivateKey());
    const asset = (await createAgentToolsClient({ baseUrl: service.url }).catalog()).items[0]!.accepts[0]!.asset;
    const funder = createWalletClient({
      account: privateKeyToAccount(DEVNET_ACCOUNTS[9]!.privateKey),
      transport: http(paymentChainRpc(service)),
    });
    const chain = createPublicClient({ transport: http(paymentChainRpc(service)) });
    await chain.waitForTransactionReceipt({
      hash: await funder.writeContract({
        chain: null,
        address: asset as `0x${string}`,
        abi: erc20Abi,
        functionName: "transfer",
        args: [fresh.address, 1_000_000n],
      }),
    });
    const stranger = createAgentToolsClient({ baseUrl: service.url, account: fresh, upto: true, signIn: false });
    const refused = await stranger.intel({ tokenId: 1 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PaymentRequiredError);
    expect((refused as PaymentRequiredError).reason).toBe("invalid_payment");
    expect((refused as PaymentRequiredError).message).toMatch(/has not approved Permit2 .* one-time approval/);
    expect(await balanceOf(service, fresh.address)).toBe(1_000_000n);
  });
});

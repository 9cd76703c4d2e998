/**
 * Prices by the work done (docs/api.md): calls of different sizes paid over a channel by x402's own channel client,
 * unmodified, against the service composed as production composes it. Each is charged the published formula of the
 * work its answer reports, within 0.01 to its price point, and what the payer loses on chain, once the channel is
 * claimed and the rest refunded, is the sum of those charges. `exact` keeps paying the price point.
 */
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from "@agent-tools/contracts";
import { type CountedWork, LEDGER_ENTRIES_PATH, ledgerPageSchema } from "@agent-tools/schema";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { computeChannelId } from "@x402/evm/batch-settlement/client";
import { erc20Abi, type Hex, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALLS_OF_DIFFERENT_SIZES, describeCall, expectChargesFollowTheWork } from "./helpers/metered-calls.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";
import { x402ChannelPayer } from "./helpers/x402-payer.js";

let t: PaidTestServer;
beforeAll(async () => {
  t = await startPaidTestServer();
});
afterAll(async () => {
  await t?.close();
});

const chain = () => t.devnet.l2.publicClient as unknown as PublicClient;
const network = () => `eip155:${t.devnet.l2.chainId}` as const;
const tokenBalance = (address: `0x${string}`) =>
  chain().readContract({
    address: t.devnet.deployment.addresses.usdToken,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address],
  });

interface MeteredAnswer {
  body: Record<string, unknown>;
  charged: bigint;
  ceiling: bigint;
  work: CountedWork;
  channelId: Hex;
}

describe("a table of calls of different sizes over one channel", () => {
  const account = () => privateKeyToAccount(t.devnet.deployment.accounts[7]!.privateKey);
  it("charges each the formula of its work, within 0.01 to 1.00, and the payer loses on chain what was charged", async () => {
    const payer = x402ChannelPayer({
      account: account(),
      chain: chain(),
      network: network(),
      asset: t.devnet.deployment.addresses.usdToken,
      options: { salt: `0x${"4d".repeat(32)}` },
    });
    const before = await tokenBalance(account().address);
    const answers: MeteredAnswer[] = [];
    for (const [path, body] of CALLS_OF_DIFFERENT_SIZES) {
      const res = await payer.post(`${t.server.url}${path}`, body);
      expect(res.status, `${path} ${JSON.stringify(body)}: ${res.status === 200 ? "" : await res.text()}`).toBe(200);
      const settlement = decodePaymentResponseHeader(res.headers.get("payment-response")!);
      const extra = settlement.extra as {
        chargedAmount: string;
        ceiling: string;
        work: CountedWork;
        channelState: { channelId: Hex };
      };
      answers.push({
        body: (await res.json()) as Record<string, unknown>,
        charged: BigInt(extra.chargedAmount),
        ceiling: BigInt(extra.ceiling),
        work: extra.work,
        channelId: extra.channelState.channelId,
      });
    }
    const table = answers.map((a, i) => ({ call: describeCall(CALLS_OF_DIFFERENT_SIZES[i]!), ...a }));
    // Anonymous: the voucher signs 1.00; the charge is the formula of the work the answer reports, no more.
    expectChargesFollowTheWork(table);

    // The ledger lists each with its charge, ceiling and work.
    const asOperator = async () =>
      t.get(`${LEDGER_ENTRIES_PATH}?limit=1000`, { "SIGN-IN-WITH-X": await t.signIn(0, LEDGER_ENTRIES_PATH) });
    const page = ledgerPageSchema.parse(await (await asOperator()).json());
    const channelId = table[0]!.channelId.toLowerCase();
    const booked = page.entries.filter((entry) => entry.nonce.toLowerCase() === channelId);
    expect(booked.map((entry) => [entry.amount, entry.ceiling, entry.work])).toEqual(
      table.map((row) => [row.charged.toString(), "1000000", row.work]),
    );

    // Claimed, and the rest refunded: the payer lost on chain exactly the sum of the charges.
    await t.channels!.claimer.claimNow();
    const refunded = await payer.scheme.refund(`${t.server.url}/intel?tokenId=1`);
    expect(refunded.success).toBe(true);
    const charged = table.reduce((sum, row) => sum + row.charged, 0n);
    expect(before - (await tokenBalance(account().address))).toBe(charged);
    const [, totalClaimed] = await chain().readContract({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      functionName: "channels",
      args: [computeChannelId(payer.scheme.buildChannelConfig(channelAcceptOf(await quote())), network())],
    });
    expect(totalClaimed).toBe(charged);
  });

  it("exact still pays the price point, and counts no work", async () => {
    const res = await t.post("/intel", { tokenId: 1 }, { "PAYMENT-SIGNATURE": await t.pay(6, await quote()) });
    expect(res.status).toBe(200);
    const settlement = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    expect(settlement.extra?.work).toBeUndefined();
    const page = ledgerPageSchema.parse(
      await (
        await t.get(`${LEDGER_ENTRIES_PATH}?limit=1000`, {
          "SIGN-IN-WITH-X": await t.signIn(0, LEDGER_ENTRIES_PATH),
        })
      ).json(),
    );
    const entry = page.entries.find((e) => e.requestId === res.headers.get("x-request-id"));
    expect(entry).toMatchObject({ amount: "1000000", ceiling: "1000000", work: null });
  });
});

async function quote(): Promise<PaymentRequired> {
  const res = await t.post("/intel", { tokenId: 1 });
  expect(res.status).toBe(402);
  return (await res.json()) as PaymentRequired;
}

const channelAcceptOf = (required: PaymentRequired) => required.accepts.find((a) => a.scheme === "batch-settlement")!;

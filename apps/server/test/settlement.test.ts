import type { PaymentRequired } from "@x402/core/types";
import { type Address, getAddress, type Hash, recoverTypedDataAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isCountingSettlement } from "../src/schemes/exact/chain-settlements.js";
import { createExactEvmFacilitator, SETTLEMENT_REVERTED } from "../src/schemes/exact/exact-evm-facilitator.js";
import { settlementMarginSeconds } from "../src/schemes/exact/payment-payload.js";
import { createSettlementBatcher, MULTICALL3_ADDRESS } from "../src/settlement/settlement-batcher.js";
import { createSettlementSender } from "../src/settlement/settlement-sender.js";
import { authorizationOf, cancelAuthorization, signedPayment, submitAuthorization } from "./helpers/authorizations.js";
import { type PaidTestServer, startPaidTestServer, transactionOf } from "./helpers/paid-server.js";

/**
 * The built-in facilitator on the paid path: one signature recovery per call, settlements sent in batches with
 * nonces assigned here, several keys in turn, an authorization that fails in a batch failing alone, and a settlement
 * whose receipt does not come in time kept for the reconciler.
 */
const recoveries: string[] = [];
let t: PaidTestServer;

beforeAll(async () => {
  t = await startPaidTestServer({
    facilitatorKeys: [0, 9],
    // The receipt of the last case never comes (mining is off): its wait is this long. Every other receipt comes in
    // milliseconds, but sixteen at once on a loaded machine must not come near it.
    // Concurrent settlements gather for up to 250 ms into one transaction.
    env: { SETTLEMENT_RECEIPT_TIMEOUT_MS: "3000", SETTLEMENT_BATCH_WINDOW_MS: "250" },
    recoverSigner: async (parameters) => {
      const signer = await recoverTypedDataAddress(parameters);
      recoveries.push(signer);
      return signer;
    },
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const address = (index: number) => t.devnet.deployment.accounts[index]!.address;

/** An anonymous paid `POST /intel` for `tokenId`, paid by devnet account `payer`. */
async function paidIntel(tokenId: number, payer: number) {
  return t.paidCall({ path: "/intel", body: { tokenId } }, payer);
}

describe("the paid path", () => {
  it("recovers the payment's signer once per paid call", async () => {
    recoveries.length = 0;
    const { res } = await paidIntel(7, 7);
    expect(res.status).toBe(200);
    expect(recoveries).toEqual([address(7)]);

    // A signed-in holder: the sign-in is checked apart; the payment is still recovered once.
    recoveries.length = 0;
    const signIn = { "SIGN-IN-WITH-X": await t.signIn(2, "/intel") };
    const challenge = await t.post("/intel", { tokenId: 2 }, signIn);
    const payment = await t.pay(2, (await challenge.json()) as PaymentRequired);
    const paid = await t.post("/intel", { tokenId: 2 }, { ...signIn, "PAYMENT-SIGNATURE": payment });
    expect(paid.status).toBe(200);
    expect(recoveries).toEqual([address(2)]);
  });

  it("settles concurrent calls in batches, each answer naming the transaction its own transfer is in", async () => {
    // Sixteen agents' calls at once: paid first, then sent together.
    const payments = await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const tokenId = 1 + (i % 9);
        return { tokenId, payment: await t.pay(tokenId, await t.quote({ path: "/intel", body: { tokenId } })) };
      }),
    );
    const calls = await Promise.all(
      payments.map(async ({ tokenId, payment }) => ({
        payment,
        res: await t.post("/intel", { tokenId }, { "PAYMENT-SIGNATURE": payment }),
      })),
    );
    expect(calls.map(({ res }) => res.status)).toEqual(Array(16).fill(200));
    const hashes = calls.map(({ res }) => transactionOf(res) as Hash);
    const receipts = new Map(
      await Promise.all(
        [...new Set(hashes)].map(
          async (hash) => [hash, await t.devnet.l2.publicClient.getTransactionReceipt({ hash })] as const,
        ),
      ),
    );
    // Fewer transactions than calls: concurrent settlements went out together.
    expect(receipts.size).toBeLessThan(16);
    const quote = (await t.quote({ path: "/intel", body: { tokenId: 1 } })).accepts[0]!;
    calls.forEach(({ payment }, i) => {
      const { authorization } = authorizationOf(payment);
      const expected = {
        asset: quote.asset as Address,
        payer: authorization.from,
        payTo: quote.payTo as Address,
        amount: BigInt(quote.amount),
        nonce: authorization.nonce,
      };
      expect(isCountingSettlement(receipts.get(hashes[i]!)!, expected), `call ${i}`).toBe(true);
    });
    // The batches left from the keys in turn, each key's nonces following one another without a gap.
    const transactions = await Promise.all(
      [...receipts.keys()].map((hash) => t.devnet.l2.publicClient.getTransaction({ hash })),
    );
    const byKey = new Map<string, number[]>();
    for (const tx of transactions)
      byKey.set(getAddress(tx.from), [...(byKey.get(getAddress(tx.from)) ?? []), tx.nonce]);
    for (const nonces of byKey.values()) {
      const sorted = [...nonces].sort((a, b) => a - b);
      expect(sorted).toEqual(Array.from({ length: sorted.length }, (_, i) => sorted[0]! + i));
    }
  });

  it("fails an authorization spent or cancelled before its batch alone: the others settle in the same transaction", async () => {
    const requirements = (await t.quote({ path: "/intel", body: { tokenId: 1 } })).accepts[0]!;
    const chainId = t.devnet.deployment.l2.chainId;
    const client = t.devnet.l2.publicClient;
    const payers = [2, 3, 4, 5].map((index) => privateKeyToAccount(t.devnet.deployment.accounts[index]!.privateKey));
    const payments = await Promise.all(payers.map((payer) => signedPayment(payer, requirements, chainId)));
    // What a payer can do between its call's verification and its settlement: spend the authorization itself, or
    // cancel it.
    await submitAuthorization(t.devnet.l2.walletClient(6), client, requirements.asset as Address, payments[1]!);
    await cancelAuthorization(
      payers[2]!,
      t.devnet.l2.walletClient(7),
      client,
      requirements,
      chainId,
      authorizationOf(payments[2]!).authorization.nonce,
    );
    // The built-in facilitator on a key of its own, its batch full at four: the four settlements leave together.
    const facilitator = createExactEvmFacilitator({
      client,
      sender: createSettlementBatcher({
        sender: createSettlementSender({
          client,
          chainId,
          accounts: [privateKeyToAccount(t.devnet.deployment.accounts[8]!.privateKey)],
        }),
        maxSize: 4,
        windowMs: 60_000,
      }),
      network: `eip155:${chainId}`,
    });
    const payTo = requirements.payTo as Address;
    const before = await t.balance(payTo);
    const settled = await Promise.all(
      payments.map((payment) =>
        facilitator.settle(JSON.parse(Buffer.from(payment, "base64").toString("utf8")), requirements),
      ),
    );
    expect(settled.map((s) => s.success)).toEqual([true, false, false, true]);
    expect(settled.map((s) => s.errorReason)).toEqual([undefined, SETTLEMENT_REVERTED, SETTLEMENT_REVERTED, undefined]);
    expect(new Set(settled.map((s) => s.transaction)).size).toBe(1);
    const receipt = await client.getTransactionReceipt({ hash: settled[0]!.transaction as Hash });
    expect(receipt.status).toBe("success");
    expect(receipt.to).toBe(MULTICALL3_ADDRESS.toLowerCase());
    expect(await t.balance(payTo)).toBe(before + 2n * BigInt(requirements.amount));
  });

  it("asks a payment to outlast its batch's window as well as its settlement: one closing sooner is refused before the tool runs", async () => {
    const requirements = (await t.quote({ path: "/intel", body: { tokenId: 1 } })).accepts[0]!;
    const chainId = t.devnet.deployment.l2.chainId;
    const payer = privateKeyToAccount(t.devnet.deployment.accounts[4]!.privateKey);
    const before = await t.balance(payer.address);
    const claims = () => t.db.query("SELECT 1 FROM settlements WHERE payer = $1", [payer.address]);
    const claimedBefore = (await claims()).length;
    // This server's batches wait up to 250 ms: 6 s to settle plus one second for the window. Six seconds from the
    // second it was signed in would do for a settlement sent at once; here it could expire inside its batch.
    const closing = await signedPayment(payer, requirements, chainId, {
      validBefore: Math.floor(Date.now() / 1000) + 6,
    });
    const res = await t.post("/intel", { tokenId: 1 }, { "PAYMENT-SIGNATURE": closing });
    expect(res.status).toBe(402);
    expect(((await res.json()) as PaymentRequired).error).toMatch(/^invalid_payment:.*validBefore.*at least 7 s more/);
    expect(await t.balance(payer.address)).toBe(before);
    expect(await claims()).toHaveLength(claimedBefore);

    // The built-in facilitator asks the same of what it verifies.
    const facilitator = createExactEvmFacilitator({
      client: t.devnet.l2.publicClient,
      sender: { send: () => Promise.reject(new Error("nothing is sent")) },
      network: `eip155:${chainId}`,
      marginSeconds: settlementMarginSeconds(4_000),
    });
    const inNine = await signedPayment(payer, requirements, chainId, {
      validBefore: Math.floor(Date.now() / 1000) + 9,
    });
    await expect(
      facilitator.verify(JSON.parse(Buffer.from(inNine, "base64").toString("utf8")), requirements),
    ).resolves.toMatchObject({ isValid: false, invalidReason: "invalid_exact_evm_payload_authorization_valid_before" });
    const inAMinute = await signedPayment(payer, requirements, chainId);
    await expect(
      facilitator.verify(JSON.parse(Buffer.from(inAMinute, "base64").toString("utf8")), requirements),
    ).resolves.toMatchObject({ isValid: true });
  });

  it("uses the keys in turn for calls one after another", async () => {
    const senders: string[] = [];
    for (let i = 0; i < 4; i++) {
      const { res } = await paidIntel(3, 3);
      expect(res.status).toBe(200);
      senders.push(
        getAddress((await t.devnet.l2.publicClient.getTransaction({ hash: transactionOf(res) as Hash })).from),
      );
    }
    expect(senders[0]).not.toBe(senders[1]);
    expect(senders).toEqual([senders[0], senders[1], senders[0], senders[1]]);
  });
});

describe("a settlement whose receipt does not come in time", () => {
  it("keeps the claim pending, answers 502, and the reconciler records it once it is mined", async () => {
    const payer = address(6);
    const before = await t.balance(payer);
    await t.devnet.l2.provider.request({ method: "evm_setAutomine", params: [false] });
    let payment: string;
    try {
      const cut = await paidIntel(6, 6);
      payment = cut.payment;
      expect(cut.res.status).toBe(502);
      expect(((await cut.res.json()) as { error: { code: string } }).error.code).toBe("upstream_error");
      const [row] = await t.db.query<{ status: string; transaction: string | null }>(
        "SELECT status, transaction FROM settlements WHERE payer = $1 ORDER BY claimed_at DESC LIMIT 1",
        [payer],
      );
      expect(row).toEqual({ status: "pending", transaction: null });
      // Still pending: the same payment cannot buy another call meanwhile.
      const replay = await t.post("/intel", { tokenId: 6 }, { "PAYMENT-SIGNATURE": payment });
      expect(replay.status).toBe(402);
      expect(((await replay.json()) as PaymentRequired).error).toMatch(/^payment_in_use:/);
    } finally {
      await t.devnet.l2.provider.request({ method: "evm_setAutomine", params: [true] });
    }
    await t.devnet.l2.provider.request({ method: "evm_mine", params: [] });
    expect(await t.balance(payer)).toBe(before - 1_000_000n);

    const reconciled = await t.reconcile();
    expect(reconciled, JSON.stringify(reconciled)).toMatchObject({ settled: 1 });
    const rows = await t.db.query<{ status: string; transaction: string | null }>(
      "SELECT status, transaction FROM settlements WHERE payer = $1 AND route = '/intel' AND amount = 1000000 ORDER BY claimed_at DESC LIMIT 1",
      [payer],
    );
    expect(rows[0]!.status).toBe("settled");
    expect(rows[0]!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const replay = await t.post("/intel", { tokenId: 6 }, { "PAYMENT-SIGNATURE": payment! });
    expect(((await replay.json()) as PaymentRequired).error).toMatch(/^payment_already_used:/);
    expect(await t.balance(payer)).toBe(before - 1_000_000n);
  });
});

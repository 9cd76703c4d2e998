import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { getAddress, type Hash, recoverTypedDataAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";

/**
 * The built-in facilitator on the paid path: one signature recovery per call, settlements sent back to back with
 * nonces assigned here, several keys in turn, and a settlement whose receipt does not come in time kept for the
 * reconciler.
 */
const recoveries: string[] = [];
let t: PaidTestServer;

beforeAll(async () => {
  t = await startPaidTestServer({
    facilitatorKeys: [0, 9],
    // The receipt of the last case never comes (mining is off): its wait is this long. Every other receipt comes in
    // milliseconds, but sixteen at once on a loaded machine must not come near it.
    env: { SETTLEMENT_RECEIPT_TIMEOUT_MS: "3000" },
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

const transactionOf = (res: Response) => decodePaymentResponseHeader(res.headers.get("payment-response")!).transaction;

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

  it("sends concurrent settlements back to back from its keys in turn, each key's nonces consecutive", async () => {
    const calls = await Promise.all(Array.from({ length: 16 }, (_, i) => paidIntel(1 + (i % 9), 1 + (i % 9))));
    expect(calls.map(({ res }) => res.status)).toEqual(Array(16).fill(200));
    const transactions = await Promise.all(
      calls.map(({ res }) => t.devnet.l2.publicClient.getTransaction({ hash: transactionOf(res) as Hash })),
    );
    const byKey = new Map<string, number[]>();
    for (const tx of transactions)
      byKey.set(getAddress(tx.from), [...(byKey.get(getAddress(tx.from)) ?? []), tx.nonce]);
    // Both keys took an equal share, and each key's nonces follow one another without a gap.
    expect([...byKey.keys()].sort()).toEqual([address(0), address(9)].sort());
    for (const nonces of byKey.values()) {
      expect(nonces).toHaveLength(8);
      const sorted = [...nonces].sort((a, b) => a - b);
      expect(sorted).toEqual(Array.from({ length: 8 }, (_, i) => sorted[0]! + i));
    }
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

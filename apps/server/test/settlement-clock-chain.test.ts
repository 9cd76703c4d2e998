import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PaidTestServer, startPaidTestServer, transactionOf } from "./helpers/paid-server.js";

/**
 * The built-in facilitator on a chain that mines on a clock, as Base does: once it has seen when blocks come, a batch
 * waits for calls still to come instead of leaving alone (docs/decisions.md, "Settlements in batches"). A server of
 * its own: the clock is learned from this chain's receipts only, and receipts are waited for as long as the shipped
 * default (on a loaded machine a block of this in-process chain, and the poll that sees it, took more than 3 s).
 */
let t: PaidTestServer;

beforeAll(async () => {
  t = await startPaidTestServer({
    facilitatorKeys: [0, 9],
    // Concurrent settlements gather for up to 250 ms into one transaction. The case holds each call for a block or
    // more: on a loaded machine more than the default 16 of one payer's calls (128 of one address) can be in flight at
    // once, or 200 start in one second, limits this file does not measure (limits.test.ts does), so here they are out
    // of the way.
    env: {
      SETTLEMENT_BATCH_WINDOW_MS: "250",
      PAID_CONCURRENCY_PER_PAYER: "1000",
      PAID_CONCURRENCY_PER_IP: "1000",
      PAID_RATE_PER_IP: "100000",
    },
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe("on a chain that mines a block every half second", () => {
  it("gathers calls that come one by one into few transactions, once it has seen when blocks come", async () => {
    // Calls 25 ms apart for 5 s, from eight payers in turn, each paid beforehand: on a chain mining each
    // transaction as it comes, each would go alone (nobody is on its way when it settles).
    const count = 200;
    const quotes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => t.quote({ path: "/intel", body: { tokenId: 1 + i } })),
    );
    const payments = await Promise.all(Array.from({ length: count }, (_, i) => t.pay(1 + (i % 8), quotes[i % 8]!)));
    await t.devnet.l2.provider.request({ method: "evm_setAutomine", params: [false] });
    await t.devnet.l2.provider.request({ method: "evm_setIntervalMining", params: [500] });
    let calls: { i: number; res: Response }[];
    try {
      calls = await Promise.all(
        payments.map(async (payment, i) => {
          await new Promise((started) => setTimeout(started, 25 * i));
          return { i, res: await t.post("/intel", { tokenId: 1 + (i % 8) }, { "PAYMENT-SIGNATURE": payment }) };
        }),
      );
    } finally {
      await t.devnet.l2.provider.request({ method: "evm_setIntervalMining", params: [0] });
      await t.devnet.l2.provider.request({ method: "evm_setAutomine", params: [true] });
    }
    // A call not answered 200 shows its answer: the error code says which step failed.
    const refused = await Promise.all(
      calls.filter(({ res }) => res.status !== 200).map(async ({ i, res }) => `call ${i}: ${await res.text()}`),
    );
    expect(
      calls.map(({ res }) => res.status),
      refused.join("\n"),
    ).toEqual(Array(count).fill(200));
    // The second half, once a few blocks have been seen: the 250 ms window gathers about ten calls per transaction.
    const later = calls.slice(count / 2).map(({ res }) => transactionOf(res));
    // On failure, how many calls each transaction carried, in order: where the gathering stopped.
    const sizes = new Map<string, number>();
    for (const hash of later) sizes.set(hash, (sizes.get(hash) ?? 0) + 1);
    expect(new Set(later).size, `calls per transaction: ${[...sizes.values()].join(" ")}`).toBeLessThan(
      later.length / 3,
    );
  }, 60_000);
});

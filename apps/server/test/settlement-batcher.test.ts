import { type Address, decodeFunctionData, getAddress, type Hex, keccak256, multicall3Abi, toHex } from "viem";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createBlockClock } from "../src/settlement/block-clock.js";
import {
  createSettlementBatcher,
  createSettlementsAhead,
  MULTICALL3_ADDRESS,
} from "../src/settlement/settlement-batcher.js";
import type { OutgoingTransaction, SentTransaction, SettlementSender } from "../src/settlement/settlement-sender.js";

/**
 * When batches leave, on a sender that hands each transaction over when the test says so: the rules of
 * src/settlement/settlement-batcher.ts. What a batch does on chain is tested in settlement.test.ts.
 */
const token: Address = getAddress("0x00000000000000000000000000000000000000aa");
const call = (i: number) => ({ to: token, data: toHex(`settle ${i}`) as Hex });

function handOverSender() {
  const sent: { transaction: OutgoingTransaction; accept: () => void; refuse: (error: Error) => void }[] = [];
  let nonce = 0;
  const sender: SettlementSender = {
    addresses: [],
    send: (transaction) =>
      new Promise<SentTransaction>((resolve, reject) => {
        const tx = { hash: keccak256(transaction.data), from: token, nonce: nonce++ };
        sent.push({ transaction, accept: () => resolve(tx), refuse: reject });
      }),
  };
  return { sender, sent };
}

/** The calls a transaction carries: itself when sent alone, else the calls of its `aggregate3`. */
function callsOf(transaction: OutgoingTransaction) {
  if (transaction.to !== MULTICALL3_ADDRESS)
    return [{ target: transaction.to, allowFailure: false, callData: transaction.data }];
  const { functionName, args } = decodeFunctionData({ abi: multicall3Abi, data: transaction.data });
  expect(functionName).toBe("aggregate3");
  return [...(args![0] as readonly { target: Address; allowFailure: boolean; callData: Hex }[])];
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("settlement batches", () => {
  it("sends a call that comes alone at once, as a plain call to the token", async () => {
    const { sender, sent } = handOverSender();
    const batcher = createSettlementBatcher({ sender, maxSize: 50, windowMs: 0 });
    const settled = batcher.send(call(1));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((s) => s.transaction)).toEqual([call(1)]);
    sent[0]!.accept();
    expect(await settled).toMatchObject({ batchSize: 1, nonce: 0 });
  });

  it("gathers the calls that come while a batch is handed over into the next one, each allowed to fail", async () => {
    const { sender, sent } = handOverSender();
    const batcher = createSettlementBatcher({ sender, maxSize: 50, windowMs: 0 });
    const first = batcher.send(call(0));
    await vi.advanceTimersByTimeAsync(0);
    const next = [1, 2, 3].map((i) => batcher.send(call(i)));
    await vi.advanceTimersByTimeAsync(10);
    expect(sent).toHaveLength(1);
    sent[0]!.accept();
    await first;
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toHaveLength(2);
    expect(callsOf(sent[1]!.transaction)).toEqual(
      [1, 2, 3].map((i) => ({ target: token, allowFailure: true, callData: call(i).data })),
    );
    // Gas for each call of the batch, beyond the one of a single settlement.
    expect(sent[1]!.transaction.gas).toBeGreaterThan(3n * 100_000n);
    sent[1]!.accept();
    const results = await Promise.all(next);
    expect(new Set(results.map((r) => r.hash)).size).toBe(1);
    expect(results.map((r) => r.batchSize)).toEqual([3, 3, 3]);
  });

  it("sends a full batch at once, in flight or not; the rest waits for its window", async () => {
    const { sender, sent } = handOverSender();
    const batcher = createSettlementBatcher({ sender, maxSize: 3, windowMs: 10_000 });
    void batcher.send(call(0));
    await vi.advanceTimersByTimeAsync(0);
    for (const i of [1, 2, 3, 4, 5, 6, 7, 8]) void batcher.send(call(i));
    expect(sent.map((s) => callsOf(s.transaction).length)).toEqual([1, 3, 3]);
    for (const s of sent) s.accept();
    await vi.advanceTimersByTimeAsync(9_999);
    expect(sent).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.map((s) => callsOf(s.transaction).length)).toEqual([1, 3, 3, 2]);
  });

  it("sends at most one batch per window: a call waits for the rest of it, never longer", async () => {
    const { sender, sent } = handOverSender();
    const batcher = createSettlementBatcher({ sender, maxSize: 50, windowMs: 200 });
    void batcher.send(call(0));
    await vi.advanceTimersByTimeAsync(0);
    sent[0]!.accept();
    await vi.advanceTimersByTimeAsync(50);
    void batcher.send(call(1));
    await vi.advanceTimersByTimeAsync(100);
    void batcher.send(call(2));
    await vi.advanceTimersByTimeAsync(49);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.map((s) => callsOf(s.transaction).length)).toEqual([1, 2]);
    sent[1]!.accept();
    // Past the window since the last batch left: a call goes at once.
    await vi.advanceTimersByTimeAsync(500);
    void batcher.send(call(3));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((s) => callsOf(s.transaction).length)).toEqual([1, 2, 1]);
  });

  it("waits for the paid calls on their way, never for calls that have not come, and at most the window", async () => {
    const { sender, sent } = handOverSender();
    const ahead = createSettlementsAhead();
    const batcher = createSettlementBatcher({ sender, maxSize: 50, windowMs: 200, ahead: ahead.count });
    // One caller paying one call after another: nobody could join its batch, so nothing waits for the window.
    for (const i of [0, 1, 2]) {
      const asked = ahead.expect();
      asked();
      void batcher.send(call(i));
      await vi.advanceTimersByTimeAsync(0);
      expect(sent).toHaveLength(i + 1);
      sent[i]!.accept();
      await vi.advanceTimersByTimeAsync(10);
    }
    // Three calls came together: the first two to settle wait for the third, which takes them with it.
    const tickets = [ahead.expect(), ahead.expect(), ahead.expect()];
    expect(ahead.count()).toBe(3);
    for (const i of [3, 4, 5]) {
      tickets[i - 3]!();
      // Asked twice (a release after a settle, say), a settlement still counts once.
      tickets[i - 3]!();
      void batcher.send(call(i));
      if (i < 5) {
        await vi.advanceTimersByTimeAsync(20);
        expect(sent).toHaveLength(3);
      }
    }
    expect(ahead.count()).toBe(0);
    expect(sent.map((s) => callsOf(s.transaction).length)).toEqual([1, 1, 1, 3]);
    sent[3]!.accept();
    // One on its way that never settles (its tool failed, say): the others wait for it the window, no longer.
    const [waiting, failing] = [ahead.expect(), ahead.expect()];
    waiting();
    void batcher.send(call(6));
    await vi.advanceTimersByTimeAsync(150);
    failing();
    await vi.advanceTimersByTimeAsync(49);
    expect(sent).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.map((s) => callsOf(s.transaction).length)).toEqual([1, 1, 1, 3, 1]);
  });

  it("on a chain mining on a clock, waits out its window though nobody is on the way, and leaves before the block", async () => {
    const { sender, sent } = handOverSender();
    const clock = createBlockClock();
    // Blocks 100 to 107 came a second apart, the last 950 ms ago, two of our transactions in each: block 108 is due
    // in 50 ms, and a batch leaves 20 ms before it (the base lead; these sends take no time).
    const t0 = Date.now();
    for (let n = 0; n < 8; n++) {
      for (const i of [0, 1]) clock.mined(keccak256(toHex(`${n}/${i}`)), BigInt(100 + n), t0 - 7950 + n * 1000 + 10);
    }
    const ahead = createSettlementsAhead();
    const batcher = createSettlementBatcher({ sender, maxSize: 50, windowMs: 200, ahead: ahead.count, clock });
    // After a quiet spell, a call goes at once, as anywhere.
    void batcher.send(call(0));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toHaveLength(1);
    sent[0]!.accept();
    await vi.advanceTimersByTimeAsync(10);
    // Nobody is on the way, but block 108 is 50 ms away: these two wait for others until 20 ms before it.
    for (const i of [1, 2]) void batcher.send(call(i));
    await vi.advanceTimersByTimeAsync(29);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.map((s) => callsOf(s.transaction).length)).toEqual([1, 2]);
    sent[1]!.accept();
    await vi.advanceTimersByTimeAsync(5);
    // Block 108 is too near to make now: the next call aims at 109, a second away, so it waits out the window.
    void batcher.send(call(3));
    await vi.advanceTimersByTimeAsync(194);
    expect(sent).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toHaveLength(3);
    // The batch that aimed at block 108 but is read in 109 (just after it came) makes the next batches leave earlier.
    await vi.advanceTimersByTimeAsync(830);
    const before = clock.nextDeparture()!;
    clock.mined(keccak256(sent[1]!.transaction.data), 109n);
    const after = clock.nextDeparture()!;
    expect(after.block).toBe(before.block);
    expect(after.leaveBy).toBeLessThan(before.leaveBy);
  });

  it("with a window, sends a batch when its window has passed even while the one before is still handed over", async () => {
    const { sender, sent } = handOverSender();
    const batcher = createSettlementBatcher({ sender, maxSize: 50, windowMs: 100 });
    void batcher.send(call(0));
    await vi.advanceTimersByTimeAsync(0);
    // The node is slow to take the first one (it is never accepted here).
    for (const i of [1, 2]) void batcher.send(call(i));
    await vi.advanceTimersByTimeAsync(99);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.map((s) => callsOf(s.transaction).length)).toEqual([1, 2]);
  });

  it("sends each call alone, without waiting, with a batch size of 1", async () => {
    const { sender, sent } = handOverSender();
    const batcher = createSettlementBatcher({ sender, maxSize: 1, windowMs: 200 });
    for (const i of [0, 1, 2]) void batcher.send(call(i));
    expect(sent.map((s) => s.transaction)).toEqual([call(0), call(1), call(2)]);
  });

  it("gives every call of a batch the sender's refusal, and sends the next batch all the same", async () => {
    const { sender, sent } = handOverSender();
    const batcher = createSettlementBatcher({ sender, maxSize: 50, windowMs: 0 });
    void batcher.send(call(0)).catch(() => undefined);
    await vi.advanceTimersByTimeAsync(0);
    const refused = [1, 2].map((i) => batcher.send(call(i)));
    const outcomes = Promise.allSettled(refused);
    sent[0]!.refuse(new Error("node down"));
    await vi.advanceTimersByTimeAsync(0);
    sent[1]!.refuse(new Error("node down"));
    expect((await outcomes).map((o) => o.status)).toEqual(["rejected", "rejected"]);
    const later = batcher.send(call(3));
    await vi.advanceTimersByTimeAsync(0);
    sent[2]!.accept();
    expect(await later).toMatchObject({ batchSize: 1 });
  });
});

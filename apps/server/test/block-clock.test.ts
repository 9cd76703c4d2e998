import { type Hash, keccak256, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { createBlockClock } from "../src/settlement/block-clock.js";

/**
 * What the facilitator learns of the payment chain's blocks from its receipts (src/settlement/block-clock.ts): a chain
 * mining on a clock is predicted, one mining each transaction as it comes is not. The batches it shapes on a real
 * chain are tested in settlement.test.ts.
 */
const tx = (i: number): Hash => keccak256(toHex(`transaction ${i}`));

/** Receipts of a chain mining a block every `intervalMs` from `start`, each read `delays[i]` ms after its block. */
function feed(clock: ReturnType<typeof createBlockClock>, blocks: number, intervalMs: number, delays: number[]) {
  let i = 0;
  for (let n = 0; n < blocks; n++) {
    // Two of our transactions in each block, read at different times.
    for (const delay of [delays[n % delays.length]!, delays[(n + 1) % delays.length]! + 30]) {
      clock.mined(tx(i++), BigInt(100 + n), 10_000 + n * intervalMs + delay);
    }
  }
}

describe("the payment chain's block clock", () => {
  it("predicts the next block of a chain mining every second, from receipts read up to 100 ms late", () => {
    const clock = createBlockClock();
    feed(clock, 8, 1000, [40, 95, 12, 70, 55]);
    // Block 107 came at 17,000 (read at 17,012 at the earliest); block 108 is due at 18,000.
    const departure = clock.nextDeparture(17_500);
    expect(departure?.block).toBe(108n);
    // It leaves before the block, by no more than the base lead and what the receipts' lateness hides.
    expect(departure!.leaveBy).toBeLessThan(18_012);
    expect(departure!.leaveBy).toBeGreaterThan(17_900);
  });

  it("aims at the block after next when the next is too near to make", () => {
    const clock = createBlockClock();
    feed(clock, 8, 1000, [10]);
    expect(clock.nextDeparture(17_999)?.block).toBe(109n);
  });

  it("leaves earlier once sends are slow, and after blocks were missed", () => {
    const clock = createBlockClock();
    feed(clock, 8, 1000, [10]);
    const before = clock.nextDeparture(17_000)!.leaveBy;
    clock.handedOver(100);
    const slowSends = clock.nextDeparture(17_000)!.leaveBy;
    expect(before - slowSends).toBe(200);
    clock.aimed(tx(1000), 108n);
    clock.mined(tx(1000), 109n, 19_050);
    expect(slowSends - clock.nextDeparture(17_000)!.leaveBy).toBeGreaterThan(0);
  });

  it("tells its observer the interval it knows (0 before it knows one) and each block a batch missed", () => {
    const intervals: number[] = [];
    let missed = 0;
    const clock = createBlockClock({ observer: { interval: (ms) => intervals.push(ms), missed: () => missed++ } });
    clock.nextDeparture(9_000);
    feed(clock, 8, 1000, [10]);
    const departure = clock.nextDeparture(17_500)!;
    expect(intervals).toEqual([0, 1000]);
    clock.aimed(tx(1000), departure.block);
    clock.mined(tx(1000), departure.block, 18_030);
    clock.aimed(tx(1001), departure.block + 1n);
    clock.mined(tx(1001), departure.block + 2n, 20_030);
    expect(missed).toBe(1);
  });

  it("knows no clock on a chain that mines each transaction in a block of its own", () => {
    const clock = createBlockClock();
    // Automine: block after block, one of our transactions each, at whatever times they were sent.
    let at = 10_000;
    for (let n = 0; n < 16; n++) {
      at += 1000;
      clock.mined(tx(n), BigInt(100 + n), at);
    }
    expect(clock.nextDeparture(at + 10)).toBeUndefined();
  });

  it("learns the clock of a chain that went from mining each transaction to mining on a clock, in a few blocks", () => {
    const clock = createBlockClock();
    for (let n = 0; n < 12; n++) clock.mined(tx(n), BigInt(n), 1000 + n * 250 + (n % 3) * 90);
    expect(clock.nextDeparture(5_000)).toBeUndefined();
    // Blocks 12 to 15 every 500 ms, from 10,000: the ones before drop out.
    for (let n = 12; n < 16; n++) {
      clock.mined(tx(100 + n), BigInt(n), 10_000 + (n - 12) * 500 + 15);
      clock.mined(tx(200 + n), BigInt(n), 10_000 + (n - 12) * 500 + 60);
    }
    expect(clock.nextDeparture(11_600)?.block).toBe(16n);
  });

  it("knows no clock when the blocks seen come at irregular times", () => {
    const clock = createBlockClock();
    const times = [0, 900, 2600, 2700, 4900, 5000, 7400, 7500];
    times.forEach((t, n) => {
      clock.mined(tx(2 * n), BigInt(n), 10_000 + t);
      clock.mined(tx(2 * n + 1), BigInt(n), 10_000 + t + 5);
    });
    expect(clock.nextDeparture(18_000)).toBeUndefined();
  });

  it("knows no clock before it has seen a few blocks", () => {
    const clock = createBlockClock();
    feed(clock, 3, 1000, [10]);
    expect(clock.nextDeparture(13_500)).toBeUndefined();
  });
});

/**
 * A client's spending on its own: prices held while calls run, so that calls decided at once cannot together pass a
 * limit; a settled charge logged with its time, and counted over a rolling day only.
 */
import { describe, expect, it } from "vitest";
import { createSpending, DAY_MS, decideAndHold, memorySpendLog } from "../src/spending.js";

describe("spending", () => {
  it("holds a decided price until its call settles or lets go, and counts calls decided at once", async () => {
    const spending = createSpending(memorySpendLog());
    const seen: bigint[] = [];
    const decide = () =>
      decideAndHold(spending, (spent) => {
        seen.push(spent.spentUnits);
        return { decision: spent, holdUnits: 10_000n };
      });
    // Three calls decided together: each sees the prices the ones before it hold.
    const [a, b, c] = await Promise.all([decide(), decide(), decide()]);
    expect(seen).toEqual([0n, 10_000n, 20_000n]);
    await a!.hold.settle(10_000n);
    b!.hold.release();
    // Settled once: a second settle or a release after it changes nothing.
    await a!.hold.settle(10_000n);
    a!.hold.release();
    const { decision } = await decide();
    // a settled (10,000), c still held (10,000), b gone.
    expect(decision).toEqual({ spentUnits: 20_000n, spentTodayUnits: 20_000n });
    c!.hold.release();
    expect(spending.spentUnits).toBe(10_000n);
  });

  it("counts the log's charges of the last 24 hours only", async () => {
    let now = new Date("2026-11-29T12:00:00Z");
    const log = memorySpendLog();
    const spending = createSpending(log, () => now);
    const { hold } = await decideAndHold(spending, () => ({ decision: null, holdUnits: 30_000n }));
    await hold.settle(25_000n);
    expect(await log.since(new Date(0))).toEqual([{ at: "2026-11-29T12:00:00.000Z", units: "25000" }]);
    const today = async () =>
      (await decideAndHold(spending, (spent) => ({ decision: spent.spentTodayUnits, holdUnits: 0n }))).decision;
    expect(await today()).toBe(25_000n);
    now = new Date(now.getTime() + DAY_MS);
    expect(await today()).toBe(25_000n);
    now = new Date(now.getTime() + 1);
    expect(await today()).toBe(0n);
    // The budget's count is the client's own, and does not roll.
    expect(spending.spentUnits).toBe(25_000n);
  });
});

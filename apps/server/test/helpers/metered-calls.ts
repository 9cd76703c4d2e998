/**
 * Paid calls of different sizes, and what their charges must show whatever metered scheme paid them (docs/api.md,
 * "Prices by the work done"): the table the channel and `upto` tests both pay through.
 */
import { type CountedWork, meteredCharge } from "@agent-tools/schema";
import { expect } from "vitest";

/** Eight anonymous calls, from one agent read to a week of blocks scanned: `[path, body]`. */
export const CALLS_OF_DIFFERENT_SIZES: [path: string, body: Record<string, unknown>][] = [
  ["/intel", { tokenId: 1 }],
  ["/offer-radar", { tokenId: 7, slugs: ["lumen-apes"] }],
  ["/offer-radar", { tokenId: 7, slugs: ["lumen-apes", "static-kittens", "orbital-punks", "fern-gardeners"] }],
  ["/drop-radar", { tokenId: 1, type: "featured", limit: 1 }],
  ["/drop-radar", { tokenId: 1, type: "featured", limit: 50, enrich: true }],
  ["/b20-radar", { tokenId: 1, blocksBack: 1000, limit: 1 }],
  ["/b20-radar", { tokenId: 1, blocksBack: 86_400, limit: 25 }],
  ["/b20-radar", { tokenId: 1, blocksBack: 604_800, limit: 100 }],
];

/** One call of the table as its answer and `PAYMENT-RESPONSE` report it. */
export interface ChargedCall {
  /** The call, for assertion messages. */
  call: string;
  body: Record<string, unknown>;
  charged: bigint;
  ceiling: bigint;
  work: CountedWork;
}

export const describeCall = ([path, body]: (typeof CALLS_OF_DIFFERENT_SIZES)[number]) =>
  `${path} ${JSON.stringify(body)}`;

/**
 * Each charge is the formula of the work its answer reports, within 0.01 and the 1.00 ceiling an anonymous payment
 * signs; the counts follow the requests; the charges rise with the size and span the range.
 */
export function expectChargesFollowTheWork(rows: ChargedCall[]): void {
  expect(rows.map((row) => row.call)).toEqual(CALLS_OF_DIFFERENT_SIZES.map(describeCall));
  for (const row of rows) {
    expect(row.ceiling, row.call).toBe(1_000_000n);
    expect(row.charged, row.call).toBe(meteredCharge(row.work, row.ceiling));
    expect(row.charged >= 10_000n && row.charged <= 1_000_000n, row.call).toBe(true);
  }
  const [intel, oneSlug, fourSlugs, oneDrop, manyDrops, fewBlocks, dayOfBlocks, weekOfBlocks] = rows;
  expect(intel!.work).toEqual({ upstreamReads: 0, itemsExamined: 1, blocksScanned: 0 });
  expect(intel!.charged).toBe(12_000n);
  expect(oneSlug!.work.itemsExamined).toBe(1);
  expect(fourSlugs!.work.itemsExamined).toBe(4);
  expect(fourSlugs!.work.upstreamReads).toBeGreaterThan(oneSlug!.work.upstreamReads);
  expect(fourSlugs!.charged).toBeGreaterThan(oneSlug!.charged);
  expect(manyDrops!.work.itemsExamined).toBeGreaterThanOrEqual((manyDrops!.body.drops as unknown[]).length);
  expect(manyDrops!.charged).toBeGreaterThan(oneDrop!.charged);
  expect([fewBlocks, dayOfBlocks, weekOfBlocks].map((row) => row!.work.blocksScanned)).toEqual([1000, 86_400, 604_800]);
  expect(dayOfBlocks!.charged).toBeGreaterThan(fewBlocks!.charged);
  expect(weekOfBlocks!.charged).toBeGreaterThan(dayOfBlocks!.charged);
  // From the base to well above half the ceiling.
  expect(rows.some((row) => row.charged <= 20_000n)).toBe(true);
  expect(rows.some((row) => row.charged >= 500_000n)).toBe(true);
}

/**
 * When the payment chain's next block comes, learned from the receipts of the facilitator's own transactions, so a
 * batch can wait for more calls without missing the block its first call would have made. A chain that mines each
 * transaction as it comes has no clock (how a clock is recognised, and how long before its block a batch leaves:
 * docs/decisions.md, "Settlements in batches").
 */
import type { Hash } from "viem";

/** Blocks remembered; the interval is read across them. */
const BLOCKS_KEPT = 16;
/** Fewest blocks seen before a clock is trusted. */
const MIN_BLOCKS = 4;
/** Shortest and longest interval taken for a clock; beyond them, waiting for a block is not worth it. */
const MIN_INTERVAL_MS = 100;
const MAX_INTERVAL_MS = 60_000;
/** Least time a batch leaves before the predicted block, beside twice the slowest recent send. */
const BASE_LEAD_MS = 20;
/** What each missed block adds to the lead, and each block made takes back. */
const MISS_PENALTY_MS = 25;
const HIT_RELIEF_MS = 5;
/** Sends remembered, to size the lead from the slowest. */
const SENDS_KEPT = 16;
/** Batches remembered with the block they aimed at, until their receipt comes. */
const AIMS_KEPT = 1024;

export interface Departure {
  /** When the batch must leave to make `block`. */
  leaveBy: number;
  /** The block it aims at. */
  block: bigint;
}

export interface BlockClock {
  /** A transaction's receipt came at `at`: it was mined in `block`, before then. */
  mined(hash: Hash, block: bigint, at?: number): void;
  /** A transaction was handed to the node in `ms`. */
  handedOver(ms: number): void;
  /** A batch left for `block`: its receipt tells whether it made it. */
  aimed(hash: Hash, block: bigint): void;
  /**
   * When a batch forming at `at` must leave to make the next block it still can; undefined when the chain is not
   * seen mining on a clock.
   */
  nextDeparture(at?: number): Departure | undefined;
}

export interface BlockClockOptions {
  /** The clock, in milliseconds. */
  now?: () => number;
  /** Told the interval each time a batch asks when to leave (0: no clock), and each block a batch missed (metrics). */
  observer?: { interval(ms: number): void; missed(): void };
}

interface Sighting {
  block: bigint;
  /** The earliest a receipt of this block was read. */
  at: number;
  /** Our transactions seen in it. */
  transactions: number;
}

export function createBlockClock(options: BlockClockOptions = {}): BlockClock {
  const now = options.now ?? Date.now;
  /** The blocks seen, oldest first. */
  const blocks: Sighting[] = [];
  const sends: number[] = [];
  const aims = new Map<Hash, bigint>();
  let penaltyMs = 0;

  /**
   * The interval and the earliest implied time of a block, read over the longest run of the latest blocks seen
   * that keeps a clock: blocks from before the chain changed how it mines drop out as soon as a few new ones agree.
   */
  function clock(): { intervalMs: number; origin: Sighting; originAt: number } | undefined {
    for (let first = 0; first <= blocks.length - MIN_BLOCKS; first++) {
      const known = clockOver(blocks.slice(first));
      if (known) return known;
    }
    return undefined;
  }

  function clockOver(run: Sighting[]): { intervalMs: number; origin: Sighting; originAt: number } | undefined {
    if (!run.some((b) => b.transactions > 1)) return undefined;
    const origin = run[0]!;
    const last = run[run.length - 1]!;
    const intervalMs = (last.at - origin.at) / Number(last.block - origin.block);
    if (!(intervalMs >= MIN_INTERVAL_MS && intervalMs <= MAX_INTERVAL_MS)) return undefined;
    // Each sighting comes after its block by the receipt's polling and round trip: on a clock they stay within
    // a fraction of the interval of the line through the first and last.
    let earliest = Number.POSITIVE_INFINITY;
    let latest = Number.NEGATIVE_INFINITY;
    for (const b of run) {
      const off = b.at - origin.at - Number(b.block - origin.block) * intervalMs;
      earliest = Math.min(earliest, off);
      latest = Math.max(latest, off);
    }
    if (latest - earliest > intervalMs / 2) return undefined;
    return { intervalMs, origin, originAt: origin.at + earliest };
  }

  function leadMs(intervalMs: number): number {
    const slowest = sends.length > 0 ? Math.max(...sends) : 0;
    return Math.min(intervalMs / 2, BASE_LEAD_MS + 2 * slowest + penaltyMs);
  }

  return {
    mined(hash, block, at = now()) {
      const aimedAt = aims.get(hash);
      if (aimedAt !== undefined) {
        aims.delete(hash);
        if (block > aimedAt) {
          penaltyMs += MISS_PENALTY_MS;
          options.observer?.missed();
        } else penaltyMs = Math.max(0, penaltyMs - HIT_RELIEF_MS);
      }
      let i = blocks.length;
      while (i > 0 && blocks[i - 1]!.block > block) i--;
      const same = blocks[i - 1];
      if (same?.block === block) {
        same.at = Math.min(same.at, at);
        same.transactions++;
        return;
      }
      if (i === 0 && blocks.length >= BLOCKS_KEPT) return;
      blocks.splice(i, 0, { block, at, transactions: 1 });
      if (blocks.length > BLOCKS_KEPT) blocks.shift();
    },
    handedOver(ms) {
      sends.push(ms);
      if (sends.length > SENDS_KEPT) sends.shift();
    },
    aimed(hash, block) {
      aims.set(hash, block);
      if (aims.size > AIMS_KEPT) aims.delete(aims.keys().next().value!);
    },
    nextDeparture(at = now()) {
      const known = clock();
      options.observer?.interval(known?.intervalMs ?? 0);
      if (!known) return undefined;
      const { intervalMs, origin, originAt } = known;
      const lead = leadMs(intervalMs);
      const ahead = Math.floor((at + lead - originAt) / intervalMs) + 1;
      return { leaveBy: originAt + ahead * intervalMs - lead, block: origin.block + BigInt(ahead) };
    },
  };
}

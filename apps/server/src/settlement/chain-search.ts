/**
 * Reading the payment chain for settlements of pending claims (the reconciler's finders, one per scheme:
 * ../schemes/exact/reconcile-settlements.ts, ../schemes/upto/upto-settlements.ts): block times read once each, the
 * log ranges a settlement of a set of claims can lie in, and reads in flight a few at a time.
 */
import type { Hash, PublicClient } from "viem";

/** How long before its claim a payment's settlement may have been mined (clock skew between us and the chain). */
export const CLAIM_SKEW_SECONDS = 120n;

/** Runs `work` over `items`, `limit` at a time. */
export async function eachLimit<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i]!);
      }
    }),
  );
  return results;
}

/** Block times of the payment chain, read once each: a block's timestamp, and the last block at or before a time. */
export function createBlockTimes(client: Pick<PublicClient, "getBlock">): {
  timestampOf(block: bigint): Promise<bigint>;
  blockAtOrBefore(seconds: bigint, head: bigint): Promise<bigint>;
} {
  const timestamps = new Map<bigint, bigint>();

  async function timestampOf(block: bigint): Promise<bigint> {
    let known = timestamps.get(block);
    if (known === undefined) {
      known = (await client.getBlock({ blockNumber: block })).timestamp;
      if (timestamps.size > 4096) timestamps.clear();
      timestamps.set(block, known);
    }
    return known;
  }

  /** The last block at or before `seconds` (0 when none is): steps back from the head, then halves the gap. */
  async function blockAtOrBefore(seconds: bigint, head: bigint): Promise<bigint> {
    if ((await timestampOf(head)) <= seconds) return head;
    let high = head;
    let step = 1n;
    let low = head - step;
    while (low > 0n && (await timestampOf(low)) > seconds) {
      high = low;
      step *= 2n;
      low = head - step > 0n ? head - step : 0n;
    }
    if (low <= 0n && (await timestampOf(0n)) > seconds) return 0n;
    // timestamp(low) <= seconds < timestamp(high)
    while (high - low > 1n) {
      const middle = (low + high) / 2n;
      if ((await timestampOf(middle)) <= seconds) low = middle;
      else high = middle;
    }
    return low;
  }

  return { timestampOf, blockAtOrBefore };
}

/**
 * The block ranges a settlement of any of `claims` can lie in: from a little before the oldest claim (the clock skew
 * allowed) to the head, in ranges of at most `maxLogRange` blocks (providers cap an `eth_getLogs` range).
 */
export async function claimLogRanges(
  client: Pick<PublicClient, "getBlockNumber">,
  blocks: Pick<ReturnType<typeof createBlockTimes>, "blockAtOrBefore">,
  claims: { claimedAt: Date }[],
  maxLogRange: bigint,
): Promise<{ fromBlock: bigint; toBlock: bigint }[]> {
  if (claims.length === 0) return [];
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const oldest = claims.reduce((a, b) => (a.claimedAt < b.claimedAt ? a : b)).claimedAt;
  const since = BigInt(Math.floor(oldest.getTime() / 1000)) - CLAIM_SKEW_SECONDS;
  const ranges: { fromBlock: bigint; toBlock: bigint }[] = [];
  for (let start = await blocks.blockAtOrBefore(since, head); start <= head; start += maxLogRange) {
    const end = start + maxLogRange - 1n;
    ranges.push({ fromBlock: start, toBlock: end < head ? end : head });
  }
  return ranges;
}

/** Candidate settlement transactions of each claim, by its payment key: what a log named, to be read. */
export type Candidates = Map<string, Set<Hash>>;

export function addCandidate(candidates: Candidates, paymentKey: string, transaction: Hash): void {
  const known = candidates.get(paymentKey) ?? new Set<Hash>();
  known.add(transaction);
  candidates.set(paymentKey, known);
}

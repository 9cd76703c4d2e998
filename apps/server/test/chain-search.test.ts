/**
 * The log ranges the reconciler reads for a set of claims (src/settlement/chain-search.ts): from a little before the
 * oldest claim to the head, in contiguous ranges no wider than a provider allows.
 */
import { describe, expect, it } from "vitest";
import { CLAIM_SKEW_SECONDS, claimLogRanges, createBlockTimes } from "../src/settlement/chain-search.js";

/** A chain of `head + 1` blocks, one every 12 s from `genesis` seconds; counts the blocks read. */
function chainOf(head: bigint, genesis = 1_700_000_000n) {
  const read: bigint[] = [];
  return {
    read,
    timeOf: (block: bigint) => genesis + block * 12n,
    getBlockNumber: async () => head,
    getBlock: async ({ blockNumber }: { blockNumber: bigint }) => {
      read.push(blockNumber);
      return { timestamp: genesis + blockNumber * 12n };
    },
  };
}

describe("claimLogRanges", () => {
  it("covers from the block before the oldest claim, less the skew, to the head, in ranges of at most the cap", async () => {
    const chain = chainOf(10_000n);
    const blocks = createBlockTimes(chain as never);
    const claimedAt = (block: bigint) => ({ claimedAt: new Date(Number(chain.timeOf(block)) * 1000) });
    const ranges = await claimLogRanges(chain as never, blocks, [claimedAt(9_500n), claimedAt(7_250n)], 500n);
    const first = 7_250n - CLAIM_SKEW_SECONDS / 12n;
    expect(ranges[0]!.fromBlock).toBe(first);
    expect(ranges.at(-1)!.toBlock).toBe(10_000n);
    for (const [i, range] of ranges.entries()) {
      expect(range.toBlock - range.fromBlock + 1n).toBeLessThanOrEqual(500n);
      expect(range.toBlock).toBeGreaterThanOrEqual(range.fromBlock);
      if (i > 0) expect(range.fromBlock).toBe(ranges[i - 1]!.toBlock + 1n);
    }
    expect(ranges).toHaveLength(Math.ceil(Number(10_000n - first + 1n) / 500));
    // Found by halving, not by walking every block back from the head.
    expect(new Set(chain.read).size).toBeLessThan(40);
  });

  it("asks nothing for no claims, and one range for a claim within the cap of the head", async () => {
    const chain = chainOf(300n);
    const blocks = createBlockTimes(chain as never);
    expect(await claimLogRanges(chain as never, blocks, [], 100n)).toEqual([]);
    expect(chain.read).toEqual([]);
    const ranges = await claimLogRanges(
      chain as never,
      blocks,
      [{ claimedAt: new Date(Number(chain.timeOf(290n)) * 1000) }],
      100n,
    );
    expect(ranges).toEqual([{ fromBlock: 280n, toBlock: 300n }]);
  });
});

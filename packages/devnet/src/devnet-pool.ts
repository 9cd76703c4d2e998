/**
 * Seeded in-process devnets lent and taken back, for test files that each need fresh seeded chains and run one after
 * another in one process (docs/architecture.md, "What a test run costs"). Seeding L1 costs seconds of CPU (6666
 * tokens minted, revealed, registered and bound); L2 costs a tenth of that. So a borrower gets:
 * - an L1 seeded once, reverted to its seeded snapshot when the previous borrower gave it back (whatever that one
 *   sent, mined or changed is gone) with automine on, and one empty block at the current time, so its clock reads now
 *   whenever it was seeded;
 * - a fresh L2, because its B20 schedule is laid out up to the moment it is seeded.
 * Both are what `createInProcessDevnet` gives, one L1 block further.
 */
import type { Client } from "viem";
import { DEFAULT_PUBLIC_URL, devnetL1Chain } from "./constants.js";
import {
  devnetDeployment,
  type InProcessChain,
  type InProcessDevnet,
  inProcessChain,
  openInProcessChain,
} from "./devnet.js";
import { type L1SeedResult, normalizePublicUrl, seedL1 } from "./seed-l1.js";
import { seedL2 } from "./seed-l2.js";
import { rpc } from "./tx.js";

interface SeededL1 {
  chain: InProcessChain;
  seed: L1SeedResult;
  close(): Promise<void>;
  /** The `evm_snapshot` id of the chain as seeded (a revert consumes it). */
  snapshot: string;
}

export interface InProcessDevnetPool {
  /** A seeded devnet; its `close()` hands its L1 back to the pool and closes its L2. */
  borrow(options?: { publicUrl?: string }): Promise<InProcessDevnet>;
  /** Closes the chains the pool holds (lent ones close when given back). */
  close(): Promise<void>;
}

/** Sets the next block's time to now (or the latest block's, if later) and mines it. */
async function mineNow(client: Client): Promise<void> {
  const latest = (await rpc(client, "eth_getBlockByNumber", ["latest", false])) as { timestamp: `0x${string}` };
  const now = Math.max(Math.floor(Date.now() / 1000), Number(BigInt(latest.timestamp)));
  await rpc(client, "evm_setNextBlockTimestamp", [now]);
  await rpc(client, "evm_mine");
}

export function createInProcessDevnetPool(): InProcessDevnetPool {
  const idle = new Map<string, SeededL1[]>();
  let closed = false;

  async function seededL1(publicUrl: string): Promise<SeededL1> {
    const { chain, close } = await openInProcessChain("l1");
    try {
      const seed = await seedL1(chain.publicClient, { publicUrl });
      const snapshot = (await rpc(chain.publicClient, "evm_snapshot")) as string;
      return { chain, seed, snapshot, close };
    } catch (error) {
      await close();
      throw error;
    }
  }

  async function giveBack(publicUrl: string, l1: SeededL1): Promise<void> {
    const client = l1.chain.publicClient;
    try {
      if (closed) throw new Error("the pool is closed");
      if ((await rpc(client, "evm_revert", [l1.snapshot])) !== true) throw new Error("evm_revert refused");
      await rpc(client, "evm_setIntervalMining", [0]);
      await rpc(client, "evm_setAutomine", [true]);
      l1.snapshot = (await rpc(client, "evm_snapshot")) as string;
    } catch {
      await l1.close();
      return;
    }
    const list = idle.get(publicUrl) ?? [];
    list.push(l1);
    idle.set(publicUrl, list);
  }

  return {
    async borrow(options = {}) {
      if (closed) throw new Error("the devnet pool is closed");
      const publicUrl = normalizePublicUrl(options.publicUrl ?? DEFAULT_PUBLIC_URL);
      const started = performance.now();
      const takeL1 = async () => {
        const l1 = idle.get(publicUrl)?.pop() ?? (await seededL1(publicUrl));
        try {
          await mineNow(l1.chain.publicClient);
        } catch (error) {
          await l1.close();
          throw error;
        }
        return { l1, ms: Math.round(performance.now() - started) };
      };
      const makeL2 = async () => {
        const { chain, close } = await openInProcessChain("l2");
        try {
          return { chain, seed: await seedL2(chain.publicClient), close };
        } catch (error) {
          await close();
          throw error;
        }
      };
      const [l1Taken, l2Made] = await Promise.allSettled([takeL1(), makeL2()]);
      if (l1Taken.status === "rejected" || l2Made.status === "rejected") {
        if (l1Taken.status === "fulfilled") await giveBack(publicUrl, l1Taken.value.l1);
        if (l2Made.status === "fulfilled") await l2Made.value.close();
        throw l1Taken.status === "rejected" ? l1Taken.reason : (l2Made as PromiseRejectedResult).reason;
      }
      const { l1, ms: l1Ms } = l1Taken.value;
      const l2 = l2Made.value;
      let given = false;
      const l1Seed = { ...l1.seed, blockNumber: l1.seed.blockNumber + 1, durationMs: l1Ms };
      return {
        // Fresh clients on the lent provider: nothing a previous borrower's clients cached is seen.
        l1: inProcessChain(l1.chain.provider, devnetL1Chain),
        l2: l2.chain,
        async close() {
          if (given) return;
          given = true;
          await Promise.allSettled([l2.close(), giveBack(publicUrl, l1)]);
        },
        deployment: devnetDeployment(l1Seed, l2.seed, publicUrl),
        seedDurationMs: { l1: l1Ms, l2: l2.seed.durationMs, total: Math.round(performance.now() - started) },
      };
    },
    async close() {
      closed = true;
      const all = [...idle.values()].flat();
      idle.clear();
      await Promise.allSettled(all.map((l1) => l1.close()));
    },
  };
}

/**
 * The claim policy of the service's channels (docs/channels.md, "The claim policy"): every pass, one instance at a
 * time (a lease in the store) reads the payers' timed withdrawals started since the last pass, claims every channel
 * with charges not claimed yet in batches (channels being withdrawn from first), then sweeps what was claimed to
 * `payTo`. A pass runs at most `intervalMs` apart, far inside the shortest withdrawal delay, so no answered call's
 * money is left unclaimed when a withdrawal ends. A claim sent twice is a no-op on chain: nothing is claimed twice.
 */

import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from "@agent-tools/contracts";
import type { PaymentRequirements } from "@agent-tools/schema";
import type { PaymentPayload, SettleResponse } from "@x402/core/types";
import type { Logger } from "pino";
import { type Address, getAbiItem, type Hex, type LocalAccount, type PublicClient } from "viem";
import type { Facilitator } from "../../settlement/facilitator.js";
import type { ChainChannelState, ChannelRecord, ChannelStore } from "../../store/channels.js";
import { signClaimBatch } from "./channel-typed-data.js";

const WITHDRAW_INITIATED = getAbiItem({ abi: batchSettlementAbi, name: "WithdrawInitiated" });

export interface ChannelClaimerParameters {
  store: ChannelStore;
  facilitator: Facilitator;
  authorizer: LocalAccount;
  /** The service's channel requirement (its network, asset and payTo name what is claimed and swept). */
  requirements: PaymentRequirements;
  chain: Pick<PublicClient, "getBlock" | "getBlockNumber" | "getLogs" | "readContract">;
  /** Most channels claimed in one transaction. */
  batchSize: number;
  /** Most blocks asked for in one `eth_getLogs` call (RPC_MAX_LOG_RANGE). */
  maxLogRange: bigint;
  /** Time between passes. */
  intervalMs: number;
  /** This instance, as the lease names it. */
  instance: string;
  /** Calls that held a channel longer than this ago and left a pending entry are settled or given back. */
  holdMs: number;
  now: () => Date;
  logger?: Logger;
  /** Told after each pass that claimed or swept something. */
  onPass?: (pass: ClaimPass) => void;
  /**
   * Told of each channel whose payer started a timed withdrawal, once marked in the store: this instance's scheme
   * forgets what it knew of it, so that its next voucher is refused before its tool runs.
   */
  onWithdrawal?: (channelId: string) => void;
}

/** What one pass did. */
export interface ClaimPass {
  /** Channels claimed, and in how many transactions. */
  channels: number;
  claims: number;
  /** Amount swept to `payTo`. */
  swept: bigint;
  /** Withdrawals seen starting on the service's channels. */
  withdrawals: number;
}

export interface ChannelClaimer {
  /**
   * Marks where withdrawals are read from, once for a store that never read any: the head at the service's first
   * start (no channel of the service is older).
   */
  prepare(): Promise<void>;
  /** One pass now (a pass under way is awaited instead); undefined when another instance holds the lease. */
  claimNow(): Promise<ClaimPass | undefined>;
  start(): void;
  /** Stops the timer and waits for a pass under way. */
  stop(): Promise<void>;
}

export function createChannelClaimer(parameters: ChannelClaimerParameters): ChannelClaimer {
  const { store, facilitator, authorizer, requirements, chain, logger } = parameters;
  const chainId = Number(requirements.network.split(":")[1]);
  let running: Promise<ClaimPass | undefined> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  // Channels whose claim was refused on its own, and the pass they are tried again at.
  const setAside = new Map<string, number>();
  let passes = 0;

  const envelope = (payload: Record<string, unknown>): PaymentPayload =>
    ({ x402Version: 2, accepted: requirements, payload }) as unknown as PaymentPayload;

  /** The last block whose withdrawals were read; the head, marked so, for a store that never read any. */
  async function scannedFrom(): Promise<bigint> {
    const scanned = await store.scannedBlock();
    if (scanned !== 0n) return scanned;
    const head = await chain.getBlockNumber();
    await store.setScannedBlock(head);
    return head;
  }

  /**
   * Marks the channels whose payers started a timed withdrawal since the last pass, reading the contract's logs in
   * ranges the RPC takes (from the head at the first, when `prepare` did not mark it).
   */
  async function readWithdrawals(): Promise<number> {
    const scanned = await scannedFrom();
    const head = await chain.getBlockNumber();
    let seen = 0;
    for (let from = scanned + 1n; from <= head; from += parameters.maxLogRange) {
      const to = from + parameters.maxLogRange - 1n < head ? from + parameters.maxLogRange - 1n : head;
      const logs = await chain.getLogs({
        address: BATCH_SETTLEMENT_ADDRESS,
        event: WITHDRAW_INITIATED,
        fromBlock: from,
        toBlock: to,
      });
      for (const log of logs) {
        const id = log.args.channelId?.toLowerCase();
        const channel = id ? await store.get(id) : undefined;
        if (!channel) continue;
        seen += 1;
        // When it started, on the chain's clock (the log says when it may end).
        const started = Number(log.args.finalizeAfter ?? 0) - Number(channel.config.withdrawDelay ?? 0);
        await store.mirror(channel.channelId, {
          balance: channel.balance,
          totalClaimed: channel.totalClaimed,
          refundNonce: channel.refundNonce,
          withdrawRequestedAt: started > 0 ? started : Math.floor(parameters.now().getTime() / 1000),
        });
        parameters.onWithdrawal?.(channel.channelId);
        logger?.warn(
          { channelId: channel.channelId },
          "a payer started a timed withdrawal: its channel is claimed now",
        );
      }
      await store.setScannedBlock(to);
    }
    return seen;
  }

  /** What the chain says of a channel now, mirrored into the store. */
  async function resync(channel: ChannelRecord): Promise<ChainChannelState> {
    const id = channel.channelId as Hex;
    const contract = { address: BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi, args: [id] } as const;
    const [[balance, totalClaimed], [, initiatedAt], refundNonce] = await Promise.all([
      chain.readContract({ ...contract, functionName: "channels" }),
      chain.readContract({ ...contract, functionName: "pendingWithdrawals" }),
      chain.readContract({ ...contract, functionName: "refundNonce" }),
    ]);
    const state = { balance, totalClaimed, refundNonce, withdrawRequestedAt: Number(initiatedAt) };
    await store.mirror(channel.channelId, state);
    return state;
  }

  /** Sends one claim of `channels`; false when the facilitator refused it (nothing was claimed). */
  async function claim(channels: ChannelRecord[]): Promise<boolean> {
    const entries = channels.map((channel) => ({
      channelId: channel.channelId as Hex,
      maxClaimableAmount: channel.signedMax,
      totalClaimed: claimable(channel),
    }));
    const claimAuthorizerSignature = await signClaimBatch(authorizer, chainId, entries);
    const settled = await facilitator.settle(
      envelope({ type: "claim", claims: channels.map(claimOf), claimAuthorizerSignature }),
      requirements as never,
    );
    if (!settled.success) {
      logger?.warn(
        { channels: channels.length, reason: settled.errorReason, message: settled.errorMessage },
        "the facilitator refused a channel claim",
      );
      return false;
    }
    await store.claimed(
      { transaction: settled.transaction, asset: requirements.asset, network: requirements.network },
      channels.map((channel) => ({ channelId: channel.channelId, totalClaimed: claimable(channel) })),
    );
    return true;
  }

  /**
   * Claims one batch of channels; the number claimed and whether any was looked at. A batch refused is claimed one
   * channel at a time, so that one channel the chain will not let be claimed (its balance withdrawn, say) holds up
   * no other: that one is read again from the chain and set aside for `SET_ASIDE_PASSES` passes.
   */
  async function claimBatch(): Promise<{ claimed: number; claims: number; looked: number }> {
    const channels = await store.unclaimed(parameters.batchSize, [...setAside.keys()]);
    if (channels.length === 0) return { claimed: 0, claims: 0, looked: 0 };
    if (await claim(channels)) return { claimed: channels.length, claims: 1, looked: channels.length };
    let claimed = 0;
    for (const channel of channels) {
      if (channels.length > 1 && (await claim([channel]))) {
        claimed += 1;
        continue;
      }
      const state = await resync(channel);
      setAside.set(channel.channelId, passes + SET_ASIDE_PASSES);
      const lost = channel.charged > state.balance ? channel.charged - state.balance : 0n;
      logger?.error(
        {
          channelId: channel.channelId,
          charged: channel.charged.toString(),
          ...stateFields(state),
          lost: lost.toString(),
        },
        lost > 0n
          ? "a channel's balance no longer covers what was charged on it: what is left is claimed at the next try"
          : "a channel's claim was refused: it is set aside and tried again later",
      );
    }
    return { claimed, claims: claimed, looked: channels.length };
  }

  /**
   * Withdrawals that ended (finalized, or a deposit or refund since) give their channels back to the vouchers: each
   * channel being withdrawn from is read again from the chain.
   */
  async function readEndedWithdrawals(): Promise<void> {
    const withdrawing = await store.withdrawing();
    if (withdrawing.length === 0) return;
    // The chain's clock, which the contract's delay is counted on.
    const now = Number((await chain.getBlock()).timestamp);
    for (const channel of withdrawing) {
      const delay = Number(channel.config.withdrawDelay ?? 0);
      // Until its delay has passed, a withdrawal cannot have been finalized: only a deposit or refund ends it sooner,
      // and those are seen by the calls that bring them.
      if (channel.withdrawRequestedAt + delay > now) continue;
      const state = await resync(channel);
      if (state.withdrawRequestedAt === 0) {
        logger?.info({ channelId: channel.channelId, ...stateFields(state) }, "a channel's timed withdrawal ended");
      }
    }
  }

  /** Moves what was claimed and not yet settled to `payTo`; the amount. */
  async function sweep(): Promise<bigint> {
    const [claimed, settledSoFar] = await chain.readContract({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      functionName: "receivers",
      args: [requirements.payTo as Address, requirements.asset as Address],
    });
    if (claimed <= settledSoFar) return 0n;
    const settled = await facilitator.settle(
      envelope({ type: "settle", receiver: requirements.payTo, token: requirements.asset }),
      requirements as never,
    );
    if (!settled.success) throw new ClaimFailed(settled);
    const amount = settled.amount ? BigInt(settled.amount) : claimed - settledSoFar;
    await store.record({
      transaction: settled.transaction,
      kind: "sweep",
      channelId: "",
      amount,
      asset: requirements.asset,
      network: requirements.network,
    });
    return amount;
  }

  async function pass(): Promise<ClaimPass | undefined> {
    if (!(await store.lease(parameters.instance, Math.max(parameters.intervalMs * 3, 30_000)))) return undefined;
    passes += 1;
    for (const [id, until] of setAside) if (until <= passes) setAside.delete(id);
    const result: ClaimPass = { channels: 0, claims: 0, swept: 0n, withdrawals: 0 };
    result.withdrawals = await readWithdrawals();
    await readEndedWithdrawals();
    for (;;) {
      const batch = await claimBatch();
      result.channels += batch.claimed;
      result.claims += batch.claims;
      if (batch.looked < parameters.batchSize) break;
    }
    result.swept = await sweep();
    const leftovers = await store.settleLeftovers(new Date(parameters.now().getTime() - parameters.holdMs));
    if (leftovers.settled + leftovers.released > 0) logger?.info(leftovers, "channel calls cut short, accounted for");
    if (result.channels > 0 || result.swept > 0n) parameters.onPass?.(result);
    return result;
  }

  function claimNow(): Promise<ClaimPass | undefined> {
    running ??= pass().finally(() => {
      running = undefined;
    });
    return running;
  }

  function schedule() {
    if (stopped) return;
    timer = setTimeout(() => {
      claimNow()
        .catch((error: unknown) =>
          logger?.error({ err: error }, "channel claim pass failed; the next pass tries again"),
        )
        .finally(schedule);
    }, parameters.intervalMs);
    timer.unref?.();
  }

  return {
    prepare: async () => {
      await scannedFrom();
    },
    claimNow,
    start: () => {
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running?.catch(() => undefined);
      // Another instance may claim at once, not only once this lease has run out.
      await store
        .releaseLease(parameters.instance)
        .catch((error: unknown) =>
          logger?.warn({ err: error }, "the channel claimer's lease was not given up; it runs out on its own"),
        );
    },
  };
}

/** Passes a channel whose claim was refused is left out of. */
const SET_ASIDE_PASSES = 10;

/** What can be claimed of a channel: what was charged, or its whole balance when a withdrawal left less. */
const claimable = (channel: ChannelRecord) => (channel.charged < channel.balance ? channel.charged : channel.balance);

/** One row of a claim: the channel's terms, the payer's latest voucher, and the total the service takes of it. */
function claimOf(channel: ChannelRecord) {
  return {
    voucher: { channel: channel.config, maxClaimableAmount: channel.signedMax.toString() },
    signature: channel.signature,
    totalClaimed: claimable(channel).toString(),
  };
}

/** A channel's chain state for the log. */
const stateFields = (state: ChainChannelState) => ({
  balance: state.balance.toString(),
  totalClaimed: state.totalClaimed.toString(),
  withdrawRequestedAt: state.withdrawRequestedAt,
});

/** A claim or sweep the facilitator refused. */
export class ClaimFailed extends Error {
  constructor(readonly settlement: SettleResponse) {
    super(`the facilitator refused a channel claim or sweep: ${settlement.errorReason ?? "no reason given"}`);
    this.name = "ClaimFailed";
  }
}

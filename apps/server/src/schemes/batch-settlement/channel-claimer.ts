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
import type { ChannelRecord, ChannelStore } from "../../store/channels.js";
import { signClaimBatch } from "./channel-typed-data.js";

const WITHDRAW_INITIATED = getAbiItem({ abi: batchSettlementAbi, name: "WithdrawInitiated" });

export interface ChannelClaimerParameters {
  store: ChannelStore;
  facilitator: Facilitator;
  authorizer: LocalAccount;
  /** The service's channel requirement (its network, asset and payTo name what is claimed and swept). */
  requirements: PaymentRequirements;
  chain: Pick<PublicClient, "getBlockNumber" | "getLogs" | "readContract">;
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

  const envelope = (payload: Record<string, unknown>): PaymentPayload =>
    ({ x402Version: 2, accepted: requirements, payload }) as unknown as PaymentPayload;

  async function prepare(): Promise<void> {
    if ((await store.scannedBlock()) === 0n) await store.setScannedBlock(await chain.getBlockNumber());
  }

  /**
   * Marks the channels whose payers started a timed withdrawal since the last pass, reading the contract's logs in
   * ranges the RPC takes (from where `prepare` marked, at the first).
   */
  async function readWithdrawals(): Promise<number> {
    await prepare();
    const head = await chain.getBlockNumber();
    const scanned = await store.scannedBlock();
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
        await store.mirror(channel.channelId, {
          balance: channel.balance,
          totalClaimed: channel.totalClaimed,
          refundNonce: channel.refundNonce,
          withdrawRequestedAt: Math.floor(parameters.now().getTime() / 1000),
        });
        logger?.warn(
          { channelId: channel.channelId },
          "a payer started a timed withdrawal: its channel is claimed now",
        );
      }
      await store.setScannedBlock(to);
    }
    return seen;
  }

  /** Claims one batch of channels; the number claimed (0 when none is left). */
  async function claimBatch(): Promise<number> {
    const channels = await store.unclaimed(parameters.batchSize);
    if (channels.length === 0) return 0;
    const entries = channels.map((channel) => ({
      channelId: channel.channelId as Hex,
      maxClaimableAmount: channel.signedMax,
      totalClaimed: channel.charged,
    }));
    const claimAuthorizerSignature = await signClaimBatch(authorizer, chainId, entries);
    const settled = await facilitator.settle(
      envelope({ type: "claim", claims: channels.map(claimOf), claimAuthorizerSignature }),
      requirements as never,
    );
    if (!settled.success) throw new ClaimFailed(settled);
    await store.claimed(
      { transaction: settled.transaction, asset: requirements.asset, network: requirements.network },
      channels.map((channel) => ({ channelId: channel.channelId, totalClaimed: channel.charged })),
    );
    return channels.length;
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
    const result: ClaimPass = { channels: 0, claims: 0, swept: 0n, withdrawals: 0 };
    result.withdrawals = await readWithdrawals();
    for (;;) {
      const claimed = await claimBatch();
      if (claimed === 0) break;
      result.channels += claimed;
      result.claims += 1;
      if (claimed < parameters.batchSize) break;
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
    prepare,
    claimNow,
    start: () => {
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}

/** One row of a claim: the channel's terms, the payer's latest voucher, and the total the service takes of it. */
function claimOf(channel: ChannelRecord) {
  return {
    voucher: { channel: channel.config, maxClaimableAmount: channel.signedMax.toString() },
    signature: channel.signature,
    totalClaimed: channel.charged.toString(),
  };
}

/** A claim or sweep the facilitator refused. */
export class ClaimFailed extends Error {
  constructor(readonly settlement: SettleResponse) {
    super(`the facilitator refused a channel claim or sweep: ${settlement.errorReason ?? "no reason given"}`);
    this.name = "ClaimFailed";
  }
}

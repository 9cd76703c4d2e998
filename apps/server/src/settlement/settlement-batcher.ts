/**
 * Settles many authorizations in one transaction: calls that arrive while a batch forms go out together through
 * Multicall3's `aggregate3`, each with `allowFailure`, so one that reverts fails alone, and each caller reads its own
 * outcome from the receipt (../schemes/exact/chain-settlements.ts); a call that comes alone goes at once, as a plain
 * call to the token. A batch waits at most its window, and on a chain seen mining on a clock (./block-clock.ts)
 * leaves before the next block (docs/decisions.md, "Settlements in batches").
 */
import { type Address, encodeFunctionData, type Hex, multicall3Abi } from "viem";
import type { BlockClock, Departure } from "./block-clock.js";
import { SETTLEMENT_GAS, type SentTransaction, type SettlementSender } from "./settlement-sender.js";

/** Multicall3's address, the same on every chain it is deployed to (github.com/mds1/multicall3). */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

/** Gas a batch needs beside its calls: the transaction, `aggregate3`'s loop and the calls' data. */
const BATCH_OVERHEAD_GAS = 50_000n;

export interface SettlementCall {
  to: Address;
  data: Hex;
}

/** A settlement as sent: its transaction, and how many settlements that transaction carries. */
export interface SentSettlement extends SentTransaction {
  /** Settlements in the transaction: 1 for a call sent alone. */
  batchSize: number;
}

export interface SettlementBatcherOptions {
  sender: SettlementSender;
  /** The batching contract (default: Multicall3's canonical address). */
  multicall3?: Address;
  /** Most settlements in one transaction; a full batch leaves at once. */
  maxSize: number;
  /** Least time between two batches, so the longest a call waits for its batch (0: only while one is sent). */
  windowMs: number;
  /** Gas allowed per settlement in a batch (default: a single settlement's limit). */
  gasPerCall?: bigint;
  /**
   * Settlements on their way: paid requests that came and whose settlement is not asked for yet
   * ({@link createSettlementsAhead}). Once none is, the batch has nobody to wait for, and leaves. Default: a batch
   * always waits out its window.
   */
  ahead?: () => number;
  /**
   * When the payment chain's next block comes, once it is seen mining on a clock: a batch then waits out its window,
   * and leaves before the block. Told how long each send takes, and which block each batch aimed at.
   */
  clock?: Pick<BlockClock, "nextDeparture" | "handedOver" | "aimed">;
  /** Told the size of each transaction sent (metrics). */
  onBatch?: (size: number) => void;
  /** The clock, in milliseconds. */
  now?: () => number;
}

export interface SettlementBatcher {
  /** Sends `call` in the next batch; resolves once the node accepted the batch's transaction. */
  send(call: SettlementCall): Promise<SentSettlement>;
}

interface Waiting {
  call: SettlementCall;
  resolve: (sent: SentSettlement) => void;
  reject: (error: unknown) => void;
}

export function createSettlementBatcher(options: SettlementBatcherOptions): SettlementBatcher {
  const { sender, maxSize, windowMs } = options;
  if (!Number.isInteger(maxSize) || maxSize < 1) throw new Error("a settlement batch holds at least one call");
  const multicall3 = options.multicall3 ?? MULTICALL3_ADDRESS;
  const gasPerCall = options.gasPerCall ?? SETTLEMENT_GAS;
  const now = options.now ?? Date.now;
  let lastLeft = Number.NEGATIVE_INFINITY;
  let forming: Waiting[] = [];
  let timer: NodeJS.Timeout | undefined;
  /** The window has passed, and the batch waits for the one being sent. */
  let due = false;
  let sending = 0;
  /** The block the forming batch aims at, when the chain keeps a clock. */
  let departure: Departure | undefined;

  function transactionOf(batch: Waiting[]): { to: Address; data: Hex; gas?: bigint } {
    if (batch.length === 1) return batch[0]!.call;
    return {
      to: multicall3,
      data: encodeFunctionData({
        abi: multicall3Abi,
        functionName: "aggregate3",
        args: [batch.map(({ call }) => ({ target: call.to, allowFailure: true, callData: call.data }))],
      }),
      gas: BATCH_OVERHEAD_GAS + gasPerCall * BigInt(batch.length),
    };
  }

  function dispatch(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    due = false;
    const batch = forming;
    const aim = departure;
    forming = [];
    departure = undefined;
    if (batch.length === 0) return;
    const left = now();
    lastLeft = left;
    options.onBatch?.(batch.length);
    sending++;
    sender.send(transactionOf(batch)).then(
      (sent) => {
        options.clock?.handedOver(now() - left);
        if (aim) options.clock?.aimed(sent.hash, aim.block);
        for (const waiting of batch) waiting.resolve({ ...sent, batchSize: batch.length });
        handedOver();
      },
      (error: unknown) => {
        for (const waiting of batch) waiting.reject(error);
        handedOver();
      },
    );
  }

  /** A batch was handed over (or refused): the next one leaves if its window has passed. */
  function handedOver(): void {
    sending--;
    if (due && sending === 0) dispatch();
  }

  /**
   * The batch may go. Without a window it waits for the batch before it to be handed over, the only time calls
   * have to gather in; with one, the window spaces batches already, and waiting for a slow node's answer on top
   * of it would only add latency.
   */
  function leave(): void {
    if (sending === 0 || windowMs > 0) dispatch();
    else due = true;
  }

  function windowPassed(): void {
    timer = undefined;
    leave();
  }

  return {
    send(call) {
      return new Promise<SentSettlement>((resolve, reject) => {
        forming.push({ call, resolve, reject });
        if (forming.length >= maxSize) return dispatch();
        const at = now();
        if (forming.length === 1 && windowMs > 0) departure = options.clock?.nextDeparture(at);
        // Every paid call on its way has joined: nobody else is coming to wait for, unless the chain mines on a
        // clock, where the batch waits for more calls until its window ends or its block nears.
        if (!departure && options.ahead?.() === 0) leave();
        else if (forming.length === 1) {
          const leaveAt = Math.min(lastLeft + windowMs, departure?.leaveBy ?? Number.POSITIVE_INFINITY);
          timer = setTimeout(windowPassed, Math.max(0, leaveAt - at));
        }
      });
    },
  };
}

/** A count of settlements on their way to the batcher: each paid call is expected once and arrives once. */
export interface SettlementsAhead {
  /** Settlements expected and not arrived. */
  count(): number;
  /** A paid request came: its settlement (or its refusal or release) is to come. Call the returned function then. */
  expect(): () => void;
}

export function createSettlementsAhead(): SettlementsAhead {
  let count = 0;
  return {
    count: () => count,
    expect() {
      count++;
      let arrived = false;
      return () => {
        if (arrived) return;
        arrived = true;
        count--;
      };
    },
  };
}

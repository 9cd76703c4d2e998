import { usdTokenAbi } from "@agent-tools/contracts";
import type { Logger } from "pino";
import type { Address, Hex, PublicClient } from "viem";
import type { SettlementLedger } from "../store/settlement-ledger.js";

/** What the payment chain says of one EIP-3009 authorization. */
export type AuthorizationState = { used: false } | { used: true; transaction?: Hex; settledAt?: Date };

export interface AuthorizationReader {
  read(asset: Address, payer: Address, nonce: Hex): Promise<AuthorizationState>;
}

/** How far back the settlement of a cut-short call is looked for (about a week of 2-second blocks). */
const LOOKBACK_BLOCKS = 300_000n;

/**
 * Reads an authorization from the token itself: `authorizationState(payer, nonce)`, and the block of its
 * `AuthorizationUsed` event for the transaction and time.
 */
export function createAuthorizationReader(client: PublicClient): AuthorizationReader {
  return {
    async read(asset, payer, nonce) {
      const used = await client.readContract({
        address: asset,
        abi: usdTokenAbi,
        functionName: "authorizationState",
        args: [payer, nonce],
      });
      if (!used) return { used: false };
      // Never viem's cached block number: a settlement mined a moment ago must be in the range searched.
      const latest = await client.getBlockNumber({ cacheTime: 0 });
      const [log] = await client.getContractEvents({
        address: asset,
        abi: usdTokenAbi,
        eventName: "AuthorizationUsed",
        args: { authorizer: payer, nonce },
        fromBlock: latest > LOOKBACK_BLOCKS ? latest - LOOKBACK_BLOCKS : 0n,
        toBlock: "latest",
      });
      if (!log?.transactionHash || log.blockNumber === null) return { used: true };
      const block = await client.getBlock({ blockNumber: log.blockNumber });
      return { used: true, transaction: log.transactionHash, settledAt: new Date(Number(block.timestamp) * 1000) };
    },
  };
}

export interface ReconcileResult {
  /** Found settled on chain and recorded. */
  settled: number;
  /** Never settled and expired: given back. */
  dropped: number;
  /** Not decided yet (still valid, or the chain did not answer). */
  open: number;
}

/** Passes over the ledger's pending claims, on demand or on a timer. */
export interface SettlementReconciler {
  /** One pass; `graceMs` overrides the default (0 at start-up: every claim left over is from before). */
  reconcile(options?: { graceMs?: number }): Promise<ReconcileResult>;
  start(intervalMs: number): void;
  stop(): void;
}

/**
 * Settles the ledger's account of calls cut short (a crash or a lost facilitator answer between settlement and
 * response): a pending claim whose authorization the chain shows used is recorded as settled, with its
 * transaction; one that is unused and past its `validBefore` can never be settled and is given back.
 */
export function createSettlementReconciler(deps: {
  ledger: SettlementLedger;
  reader: AuthorizationReader;
  /** The payment network (`eip155:<id>`) the reader reads; claims on another network are left alone. */
  network: string;
  logger: Logger;
  now?: () => Date;
  /** Claims younger than this are calls still in flight: left to them. */
  graceMs?: number;
}): SettlementReconciler {
  const { ledger, reader, network, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const graceMs = deps.graceMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<ReconcileResult> | undefined;

  async function reconcileOnce(grace: number): Promise<ReconcileResult> {
    const result: ReconcileResult = { settled: 0, dropped: 0, open: 0 };
    // Without a grace period every pending claim is a leftover (at start, in tests): none is left out by a clock
    // comparison that a claim made in the same millisecond could lose.
    const pending = await ledger.pending(grace > 0 ? new Date(now().getTime() - grace) : undefined);
    for (const claim of pending) {
      if (claim.network !== network) {
        result.open += 1;
        continue;
      }
      try {
        const state = await reader.read(claim.asset as Address, claim.payer as Address, claim.nonce as Hex);
        if (state.used && state.transaction) {
          await ledger.markSettled(claim.paymentKey, state.transaction, state.settledAt ?? now());
          logger.warn(
            { paymentKey: claim.paymentKey, transaction: state.transaction },
            "recorded a cut-short settlement",
          );
          result.settled += 1;
        } else if (!state.used && claim.validBefore.getTime() < now().getTime()) {
          await ledger.release(claim.paymentKey);
          logger.info({ paymentKey: claim.paymentKey }, "gave back an unsettled, expired payment claim");
          result.dropped += 1;
        } else {
          result.open += 1;
        }
      } catch (error) {
        logger.warn({ err: error, paymentKey: claim.paymentKey }, "could not check a pending settlement");
        result.open += 1;
      }
    }
    return result;
  }

  const reconcile = (options: { graceMs?: number } = {}) => {
    running ??= reconcileOnce(options.graceMs ?? graceMs).finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    reconcile,
    start(intervalMs) {
      timer = setInterval(() => {
        reconcile().catch((error) => logger.error({ err: error }, "settlement reconciliation failed"));
      }, intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}

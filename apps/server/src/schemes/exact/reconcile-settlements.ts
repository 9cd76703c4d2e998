/**
 * The ledger's account of calls cut short (a crash, a lost facilitator answer, a settlement that reverted): a pending
 * claim is recorded with its settlement when the chain shows one (./chain-settlements.ts), or given back once its
 * authorization has expired, whatever else used it. Every instance applies the same rule to the same chain, so
 * instances reconciling together agree (docs/threat-model.md, "Settlements").
 */
import type { Logger } from "pino";
import { getAddress, type Hash, type Hex, type PublicClient } from "viem";
import {
  addCandidate,
  type Candidates,
  claimLogRanges,
  createBlockTimes,
  eachLimit,
} from "../../settlement/chain-search.js";
import type { PendingSettlement, SettlementLedger } from "../../store/settlement-ledger.js";
import { ANSWER_RETENTION_MS } from "../../store/settlement-ledger.js";
import { isCountingSettlement, settlementEventsAbi } from "./chain-settlements.js";

/** `authorizationState` of an EIP-3009 token. */
const authorizationStateAbi = [
  {
    type: "function",
    name: "authorizationState",
    stateMutability: "view",
    inputs: [
      { name: "authorizer", type: "address" },
      { name: "nonce", type: "bytes32" },
    ],
    outputs: [{ type: "bool" }],
  },
] as const;

/** What the chain says of one claimed payment. */
export interface ChainVerdict {
  /** The authorization's nonce is used (settled, canceled, or taken by another authorization). */
  used: boolean;
  /**
   * The settlement that paid this claim, when there is one; `amount`, for a payment settled for less than it signed
   * (`upto`), what it took.
   */
  settlement?: { transaction: Hex; settledAt: Date; amount?: string };
  /**
   * Why the claim must stay pending whatever its age: the chain shows its authorization used and no settlement of it
   * was found, so it may have been paid; logged as an error at each pass, for the operator.
   */
  keep?: string;
}

/** Reads the payment chain for a page of claims. */
export interface SettlementFinder {
  find(claims: PendingSettlement[]): Promise<Map<string, ChainVerdict>>;
}

export interface SettlementFinderOptions {
  client: PublicClient;
  /** Most blocks asked for in one `eth_getLogs` call (providers cap the range). Default 5,000. */
  maxLogRange?: bigint;
  /** Reads in flight at once. Default 8. */
  concurrency?: number;
}

/**
 * A finder for the claims of several schemes: each claim goes to the first route that owns it (a scheme whose
 * payments the chain records otherwise, such as `upto`'s Permit2 nonces), any other to `others` (EIP-3009).
 */
export function routeSettlementFinders(
  routes: readonly { owns(claim: PendingSettlement): boolean; finder: SettlementFinder }[],
  others: SettlementFinder,
): SettlementFinder {
  return {
    async find(claims) {
      const groups = new Map<SettlementFinder, PendingSettlement[]>();
      for (const claim of claims) {
        const finder = routes.find((route) => route.owns(claim))?.finder ?? others;
        groups.set(finder, [...(groups.get(finder) ?? []), claim]);
      }
      const verdicts = new Map<string, ChainVerdict>();
      for (const [finder, group] of groups) {
        for (const [key, verdict] of await finder.find(group)) verdicts.set(key, verdict);
      }
      return verdicts;
    },
  };
}

/**
 * Finds settlements the way the chain can be asked at scale: one state read per claim, and for the claims whose
 * authorization is used, the `AuthorizationUsed` logs of the page in one query per range of `maxLogRange` blocks,
 * from a little before the oldest of those claims to the head; each candidate transaction's receipt is read once.
 */
export function createSettlementFinder(options: SettlementFinderOptions): SettlementFinder {
  const { client } = options;
  const maxLogRange = options.maxLogRange ?? 5000n;
  const concurrency = options.concurrency ?? 8;
  const blocks = createBlockTimes(client);

  return {
    async find(claims) {
      const verdicts = new Map<string, ChainVerdict>();
      const states = await eachLimit(claims, concurrency, (claim) =>
        client.readContract({
          address: getAddress(claim.asset),
          abi: authorizationStateAbi,
          functionName: "authorizationState",
          args: [getAddress(claim.payer), claim.nonce as Hex],
        }),
      );
      const used = claims.filter((_, i) => states[i]);
      for (const [i, claim] of claims.entries()) if (!states[i]) verdicts.set(claim.paymentKey, { used: false });
      if (used.length === 0) return verdicts;

      const ranges = await claimLogRanges(client, blocks, used, maxLogRange);
      const wanted = new Map(used.map((claim) => [`${getAddress(claim.payer)}:${claim.nonce.toLowerCase()}`, claim]));
      const candidates: Candidates = new Map();
      for (const asset of new Set(used.map((claim) => getAddress(claim.asset)))) {
        const ofAsset = used.filter((claim) => getAddress(claim.asset) === asset);
        for (const range of ranges) {
          const logs = await client.getContractEvents({
            address: asset,
            abi: settlementEventsAbi,
            eventName: "AuthorizationUsed",
            args: {
              authorizer: [...new Set(ofAsset.map((claim) => getAddress(claim.payer)))],
              nonce: ofAsset.map((claim) => claim.nonce as Hex),
            },
            ...range,
          });
          for (const log of logs) {
            const claim = wanted.get(`${getAddress(log.args.authorizer!)}:${log.args.nonce!.toLowerCase()}`);
            if (claim && log.transactionHash) addCandidate(candidates, claim.paymentKey, log.transactionHash);
          }
        }
      }
      const receipts = new Map<Hash, Awaited<ReturnType<PublicClient["getTransactionReceipt"]>>>();
      const hashes = [...new Set([...candidates.values()].flatMap((set) => [...set]))];
      await eachLimit(hashes, concurrency, async (hash) => {
        receipts.set(hash, await client.getTransactionReceipt({ hash }));
      });
      for (const claim of used) {
        const expected = {
          asset: getAddress(claim.asset),
          payer: getAddress(claim.payer),
          payTo: getAddress(claim.payTo),
          amount: BigInt(claim.amount),
          nonce: claim.nonce as Hex,
        };
        const paid = [...(candidates.get(claim.paymentKey) ?? [])]
          .map((hash) => receipts.get(hash)!)
          .find((receipt) => isCountingSettlement(receipt, expected));
        verdicts.set(
          claim.paymentKey,
          paid
            ? {
                used: true,
                settlement: {
                  transaction: paid.transactionHash,
                  settledAt: new Date(Number(await blocks.timestampOf(paid.blockNumber)) * 1000),
                },
              }
            : { used: true },
        );
      }
      return verdicts;
    },
  };
}

export interface ReconcileResult {
  /** Found settled on chain and recorded. */
  settled: number;
  /** Expired without a settlement that paid them: given back. */
  dropped: number;
  /** Not decided yet (still valid, or the chain did not answer). */
  open: number;
  /** Answers kept for payment identifiers past their time, forgotten (../../paid-call/payment-identifier.ts). */
  forgotten: number;
}

/**
 * Passes over the ledger's pending claims, on demand or on a timer; each pass also forgets the answers kept for
 * payment identifiers once their time is over.
 */
export interface SettlementReconciler {
  /** One pass; `graceMs` overrides the default (0 at start-up: every claim left over is from before). */
  reconcile(options?: { graceMs?: number }): Promise<ReconcileResult>;
  start(intervalMs: number): void;
  stop(): void;
}

/** Claims read from the ledger, and from the chain, at a time. */
const PAGE = 100;
/** How long past `validBefore` a claim waits before it is given back: a settlement mined at the very end is seen. */
const EXPIRY_MARGIN_MS = 30_000;

export function createSettlementReconciler(deps: {
  ledger: SettlementLedger;
  finder: SettlementFinder;
  /** The payment network (`eip155:<id>`) the finder reads; claims on another network are left alone. */
  network: string;
  logger: Logger;
  now?: () => Date;
  /** Claims younger than this are calls still in flight: left to them. */
  graceMs?: number;
}): SettlementReconciler {
  const { ledger, finder, network, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const graceMs = deps.graceMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<ReconcileResult> | undefined;

  async function decide(claims: PendingSettlement[], result: ReconcileResult): Promise<void> {
    const ours = claims.filter((claim) => claim.network === network);
    result.open += claims.length - ours.length;
    if (ours.length === 0) return;
    let verdicts: Map<string, ChainVerdict>;
    try {
      verdicts = await finder.find(ours);
    } catch (error) {
      logger.warn({ err: error, claims: ours.length }, "could not read pending settlements from the chain");
      result.open += ours.length;
      return;
    }
    for (const claim of ours) {
      const verdict = verdicts.get(claim.paymentKey);
      if (verdict?.settlement) {
        const { transaction, settledAt, amount } = verdict.settlement;
        await ledger.markSettled(claim.paymentKey, transaction, settledAt, undefined, amount ? { amount } : undefined);
        logger.warn(
          { paymentKey: claim.paymentKey, transaction, ...(amount ? { amount } : {}) },
          "recorded a cut-short settlement",
        );
        result.settled += 1;
      } else if (verdict?.keep) {
        // Perhaps paid: never given back by the clock, for the operator to look at.
        logger.error({ paymentKey: claim.paymentKey, payer: claim.payer, nonce: claim.nonce }, verdict.keep);
        result.open += 1;
      } else if (verdict && claim.validBefore.getTime() + EXPIRY_MARGIN_MS < now().getTime()) {
        await ledger.release(claim.paymentKey);
        logger.info(
          { paymentKey: claim.paymentKey, authorizationUsed: verdict.used },
          verdict.used
            ? "gave back an expired payment claim whose authorization was used without paying"
            : "gave back an unsettled, expired payment claim",
        );
        result.dropped += 1;
      } else {
        result.open += 1;
      }
    }
  }

  async function reconcileOnce(grace: number): Promise<ReconcileResult> {
    const result: ReconcileResult = { settled: 0, dropped: 0, open: 0, forgotten: 0 };
    // Without a grace period every pending claim is a leftover (at start, in tests): none is left out by a clock
    // comparison that a claim made in the same millisecond could lose.
    const olderThan = grace > 0 ? new Date(now().getTime() - grace) : undefined;
    let after: string | undefined;
    for (;;) {
      const page = await ledger.pending({
        ...(olderThan ? { olderThan } : {}),
        ...(after ? { after } : {}),
        limit: PAGE,
      });
      if (page.length === 0) break;
      await decide(page, result);
      after = page.at(-1)!.paymentKey;
      if (page.length < PAGE) break;
    }
    try {
      result.forgotten = await ledger.forgetAnswers(new Date(now().getTime() - ANSWER_RETENTION_MS));
    } catch (error) {
      logger.warn({ err: error }, "could not forget the answers kept past their time");
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

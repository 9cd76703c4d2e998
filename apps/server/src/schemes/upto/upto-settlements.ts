/**
 * What the chain says of a pending `upto` claim (a call cut short: a crash, a lost facilitator answer, a settlement
 * whose receipt did not come in time), for the ledger's reconciler (../exact/reconcile-settlements.ts). An `upto`
 * payment spends a Permit2 nonce, not an EIP-3009 authorization, and is settled for less than it signed, so:
 *
 * - its nonce unused (Permit2's `nonceBitmap`): nothing was taken, and the claim is given back once the permit's
 *   deadline has passed (no settlement can be mined after it);
 * - its nonce used: the settlement is looked for in the payee's incoming transfers from the payer since a little
 *   before the claim, a successful call of x402's upto proxy naming this owner and nonce; found, the claim is
 *   recorded with what that transaction took; not found (the payer spent the nonce otherwise, or the settlement went
 *   through a contract of another facilitator), the claim is kept pending, logged as an error at each pass, for the
 *   operator to look at: it may have been paid.
 */
import { PERMIT2_ADDRESS, permit2Abi, UPTO_PERMIT2_PROXY_ADDRESS } from "@agent-tools/contracts";
import { x402UptoPermit2ProxyABI } from "@x402/evm";
import {
  decodeFunctionData,
  erc20Abi,
  getAddress,
  type Hash,
  type Hex,
  isAddressEqual,
  type PublicClient,
  parseEventLogs,
} from "viem";
import {
  addCandidate,
  type Candidates,
  claimLogRanges,
  createBlockTimes,
  eachLimit,
} from "../../settlement/chain-search.js";
import type { PendingSettlement } from "../../store/settlement-ledger.js";
import type { ChainVerdict, SettlementFinder } from "../exact/reconcile-settlements.js";

/** Whether a pending claim is an `upto` payment's (its key: `upto:<payer>:<nonce>`, ./upto-payload.ts). */
export function isUptoClaim(claim: Pick<PendingSettlement, "paymentKey">): boolean {
  return claim.paymentKey.startsWith("upto:");
}

export interface UptoSettlementFinderOptions {
  client: PublicClient;
  /** Most blocks asked for in one `eth_getLogs` call (providers cap the range). Default 5,000. */
  maxLogRange?: bigint;
  /** Reads in flight at once. Default 8. */
  concurrency?: number;
}

/** Whether the Permit2 nonce of `owner` is spent: bit `nonce & 0xff` of word `nonce >> 8` of its bitmap. */
export async function permit2NonceUsed(
  client: Pick<PublicClient, "readContract">,
  owner: string,
  nonce: bigint,
): Promise<boolean> {
  const word = await client.readContract({
    address: PERMIT2_ADDRESS,
    abi: permit2Abi,
    functionName: "nonceBitmap",
    args: [getAddress(owner), nonce >> 8n],
  });
  return ((word >> (nonce & 0xffn)) & 1n) === 1n;
}

export function createUptoSettlementFinder(options: UptoSettlementFinderOptions): SettlementFinder {
  const { client } = options;
  const maxLogRange = options.maxLogRange ?? 5000n;
  const concurrency = options.concurrency ?? 8;
  const blocks = createBlockTimes(client);

  /** The amount a transaction took for `claim`: a successful settle of the upto proxy for its owner and nonce. */
  async function settledBy(
    claim: PendingSettlement,
    hash: Hash,
  ): Promise<{ amount: bigint; block: bigint } | undefined> {
    const [transaction, receipt] = await Promise.all([
      client.getTransaction({ hash }),
      client.getTransactionReceipt({ hash }),
    ]);
    if (
      receipt.status !== "success" ||
      !transaction.to ||
      !isAddressEqual(transaction.to, UPTO_PERMIT2_PROXY_ADDRESS)
    ) {
      return undefined;
    }
    let call: ReturnType<typeof decodeFunctionData<typeof x402UptoPermit2ProxyABI>>;
    try {
      call = decodeFunctionData({ abi: x402UptoPermit2ProxyABI, data: transaction.input });
    } catch {
      return undefined;
    }
    // settle(permit, amount, owner, witness, signature); settleWithPermit(permit2612, permit, amount, owner, ...).
    const args = (call.functionName === "settleWithPermit" ? call.args.slice(1) : call.args) as unknown as [
      { permitted: { token: Hex }; nonce: bigint },
      bigint,
      Hex,
      { to: Hex },
    ];
    const [permit, amount, owner, witness] = args;
    if (
      (call.functionName !== "settle" && call.functionName !== "settleWithPermit") ||
      permit.nonce !== BigInt(claim.nonce) ||
      !isAddressEqual(owner, getAddress(claim.payer)) ||
      !isAddressEqual(witness.to, getAddress(claim.payTo)) ||
      !isAddressEqual(permit.permitted.token, getAddress(claim.asset))
    ) {
      return undefined;
    }
    const moved = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).some(
      (log) =>
        isAddressEqual(log.address, getAddress(claim.asset)) &&
        isAddressEqual(log.args.from, getAddress(claim.payer)) &&
        isAddressEqual(log.args.to, getAddress(claim.payTo)) &&
        log.args.value === amount,
    );
    return moved ? { amount, block: receipt.blockNumber } : undefined;
  }

  return {
    async find(claims) {
      const verdicts = new Map<string, ChainVerdict>();
      const states = await eachLimit(claims, concurrency, (claim) =>
        permit2NonceUsed(client, claim.payer, BigInt(claim.nonce)),
      );
      const used = claims.filter((_, i) => states[i]);
      for (const [i, claim] of claims.entries()) if (!states[i]) verdicts.set(claim.paymentKey, { used: false });
      if (used.length === 0) return verdicts;

      const ranges = await claimLogRanges(client, blocks, used, maxLogRange);
      // The payee's incoming transfers from these payers: a settlement's is among them.
      const candidates: Candidates = new Map();
      const pairs = new Set(used.map((claim) => `${getAddress(claim.asset)}|${getAddress(claim.payTo)}`));
      for (const pair of pairs) {
        const [asset, payTo] = pair.split("|") as [Hex, Hex];
        const ofPair = used.filter((claim) => getAddress(claim.asset) === asset && getAddress(claim.payTo) === payTo);
        for (const range of ranges) {
          const logs = await client.getContractEvents({
            address: asset,
            abi: erc20Abi,
            eventName: "Transfer",
            args: { from: [...new Set(ofPair.map((claim) => getAddress(claim.payer)))], to: payTo },
            ...range,
          });
          for (const log of logs) {
            if (!log.transactionHash) continue;
            for (const claim of ofPair) {
              if (isAddressEqual(log.args.from!, getAddress(claim.payer))) {
                addCandidate(candidates, claim.paymentKey, log.transactionHash);
              }
            }
          }
        }
      }
      await eachLimit(used, concurrency, async (claim) => {
        for (const hash of candidates.get(claim.paymentKey) ?? []) {
          const settled = await settledBy(claim, hash);
          if (!settled) continue;
          verdicts.set(claim.paymentKey, {
            used: true,
            settlement: {
              transaction: hash,
              settledAt: new Date(Number(await blocks.timestampOf(settled.block)) * 1000),
              amount: settled.amount.toString(),
            },
          });
          return;
        }
        verdicts.set(claim.paymentKey, {
          used: true,
          keep:
            "an upto claim's Permit2 nonce is used on chain and no settlement of it by x402's upto proxy was found: " +
            "kept pending (it may have been paid); check the payer's transfers to the payee",
        });
      });
      return verdicts;
    },
  };
}

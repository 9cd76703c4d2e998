import { usdTokenAbi } from "@agent-tools/contracts";
import type { LedgerEntry, LedgerReport } from "@agent-tools/schema";
import type { Address, Hex, PublicClient } from "viem";

export interface SettlementsSince {
  /** Transfers to the payee since the block: every settlement is one. */
  transfers: number;
  /** Their transactions. */
  onChain: Set<Hex>;
  /** The operator's ledger, once it counts as many new rows as the chain shows settlements (or after 30 s). */
  ledger: LedgerReport;
  /** The ledger's rows not listed in `before`. */
  recorded: LedgerEntry[];
}

/**
 * What the chain and the ledger say of the settlements since `fromBlock`, for a test that holds them against each
 * other (none lost, none twice). A server restarted after a kill records the settlements the kill cut short when
 * it starts: the ledger is read again until it has caught up.
 */
export async function settlementsSince(options: {
  l2: PublicClient;
  asset: Address;
  payTo: Address;
  fromBlock: bigint;
  readLedger: () => Promise<LedgerReport>;
  before: LedgerReport;
}): Promise<SettlementsSince> {
  const transfers = await options.l2.getContractEvents({
    address: options.asset,
    abi: usdTokenAbi,
    eventName: "Transfer",
    args: { to: options.payTo },
    fromBlock: options.fromBlock,
    toBlock: "latest",
  });
  const onChain = new Set(transfers.map((t) => t.transactionHash));
  const { before } = options;
  let ledger = await options.readLedger();
  for (let i = 0; i < 150 && ledger.total.payments - before.total.payments < onChain.size; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    ledger = await options.readLedger();
  }
  // The new rows are those not listed before (rows are listed by settlement time, and a settlement recorded by the
  // reconciler carries its block's time, so they are not simply the newest).
  const listed = new Set(before.entries.map((e) => e.transaction));
  const recorded = ledger.entries.filter((e) => !listed.has(e.transaction));
  return { transfers: transfers.length, onChain, ledger, recorded };
}

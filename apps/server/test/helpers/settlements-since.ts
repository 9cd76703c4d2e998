import { usdTokenAbi } from "@agent-tools/contracts";
import type { LedgerReport } from "@agent-tools/schema";
import type { Address, Hex, PublicClient } from "viem";

/** Every settled payment the service has recorded: how many, and their transactions (all of them, not a page). */
export interface Book {
  payments: number;
  transactions: Hex[];
}

/**
 * The book as the operator's ledger lists it. The listing is capped, so a book larger than one listing is refused
 * rather than compared in part (a test that settles more reads the store itself).
 */
export function bookOfLedger(ledger: LedgerReport): Book {
  if (ledger.entries.length < ledger.total.payments) {
    throw new Error(
      `the operator's ledger lists ${ledger.entries.length} of its ${ledger.total.payments} payments: too many ` +
        "to compare with the chain through one listing",
    );
  }
  return { payments: ledger.total.payments, transactions: ledger.entries.map((e) => e.transaction as Hex) };
}

export interface SettlementsSince {
  /** Transfers to the payee since the block: every settlement is one. */
  transfers: number;
  /** Their transactions. */
  onChain: Set<Hex>;
  /** The book, once it counts as many new payments as the chain shows settlements (or after 30 s). */
  book: Book;
  /** The book's transactions not in `before`. */
  recorded: Hex[];
}

/**
 * What the chain and the service's book say of the settlements since `fromBlock`, for a test that holds them
 * against each other (none lost, none twice). A server restarted after a kill records the settlements the kill cut
 * short when it starts: the book is read again until it has caught up.
 */
export async function settlementsSince(options: {
  l2: PublicClient;
  asset: Address;
  payTo: Address;
  fromBlock: bigint;
  readBook: () => Promise<Book>;
  before: Book;
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
  let book = await options.readBook();
  for (let i = 0; i < 150 && book.payments - before.payments < onChain.size; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    book = await options.readBook();
  }
  const listed = new Set(before.transactions);
  const recorded = book.transactions.filter((tx) => !listed.has(tx));
  return { transfers: transfers.length, onChain, book, recorded };
}

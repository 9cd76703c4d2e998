import { usdTokenAbi } from "@agent-tools/contracts";
import type { LedgerReport } from "@agent-tools/schema";
import { type Address, getAddress, type Hex, type PublicClient } from "viem";

/**
 * A settlement's identity: its payer and EIP-3009 nonce. Not its transaction, which a batch shares among the
 * settlements it carries.
 */
export const settlementKey = (payer: string, nonce: string): string => `${getAddress(payer)}:${nonce.toLowerCase()}`;

/** The settlement key of a `PAYMENT-SIGNATURE` header's `exact` payment; undefined for another scheme's. */
export function paymentSettlementKey(payment: string): string | undefined {
  const { authorization } = JSON.parse(Buffer.from(payment, "base64").toString("utf8")).payload as {
    authorization?: { from: string; nonce: string };
  };
  return authorization ? settlementKey(authorization.from, authorization.nonce) : undefined;
}

/** Every settled payment the service has recorded: how many, and their keys (all of them, not a page). */
export interface Book {
  payments: number;
  settlements: string[];
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
  const payments = ledger.entries.filter((e) => e.kind === "payment");
  return { payments: ledger.total.payments, settlements: payments.map((e) => settlementKey(e.payer, e.nonce)) };
}

export interface SettlementsSince {
  /** Transfers to the payee since the block: every settlement is one. */
  transfers: number;
  /** The settlements among them (a transfer right after its authorization's use), by key, with their transaction. */
  onChain: Map<string, Hex>;
  /** The book, once it counts as many new payments as the chain shows settlements (or after 30 s). */
  book: Book;
  /** The book's settlement keys not in `before`. */
  recorded: string[];
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
  const events = await options.l2.getContractEvents({
    address: options.asset,
    abi: usdTokenAbi,
    fromBlock: options.fromBlock,
    toBlock: "latest",
  });
  const payTo = getAddress(options.payTo);
  const transfers = events.filter((e) => e.eventName === "Transfer" && getAddress(e.args.to!) === payTo);
  const onChain = new Map<string, Hex>();
  for (const transfer of transfers) {
    // EIP-3009 tokens log the authorization's use right before its transfer (src/schemes/exact/chain-settlements.ts).
    const used = events.find(
      (e) => e.transactionHash === transfer.transactionHash && e.logIndex === transfer.logIndex - 1,
    );
    if (used?.eventName === "AuthorizationUsed") {
      onChain.set(settlementKey(used.args.authorizer!, used.args.nonce!), transfer.transactionHash);
    }
  }
  const { before } = options;
  let book = await options.readBook();
  for (let i = 0; i < 150 && book.payments - before.payments < onChain.size; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    book = await options.readBook();
  }
  const listed = new Set(before.settlements);
  const recorded = book.settlements.filter((key) => !listed.has(key));
  return { transfers: transfers.length, onChain, book, recorded };
}

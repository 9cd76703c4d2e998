/** The ledger's shapes: what it records of a paid call and a refund, and what it reads back (../settlement-ledger.ts). */
import type { Readable } from "node:stream";
import type { CountedWork } from "@agent-tools/schema";

/** What the ledger records of a paid call when its payment is claimed. */
export interface SettlementClaim {
  /** One key per payment authorization (see `replayKey`). */
  paymentKey: string;
  route: string;
  method: "GET" | "POST" | "MCP" | "A2A";
  tokenId: number;
  payer: string;
  /** The EIP-3009 nonce (bytes32 hex). */
  nonce: string;
  caller: string | null;
  pricePoint: "standard" | "discounted";
  amount: string;
  asset: string;
  network: string;
  payTo: string;
  /** After this instant the authorization can no longer be settled. */
  validBefore: Date;
  requestId: string;
  /** The x402 payment identifier the call named, and a digest of its request: its answer is then kept. */
  identifier?: { paymentId: string; requestHash: string };
  /** A call paid over a channel: the channel's id and the cumulative amount its voucher signs (docs/channels.md). */
  channel?: { id: string; cumulative: string };
}

/** What a payment settled for less than it signed was charged (`SettlementLedger.markSettled`). */
export interface SettledCharge {
  /** In the asset's smallest unit: at most the claim's amount, its ceiling. */
  amount: string;
  /** The counted work the amount is the formula of (docs/api.md, "Prices by the work done"), when known. */
  work?: CountedWork;
}

/** A paid call's answer, kept with its settlement for the payment identifier the call named. */
export interface KeptAnswer {
  /** The HTTP status it was answered with (200, or 202 for a queued mission). */
  status: number;
  output: unknown;
  /** The x402 settlement response it was answered with. */
  settlement: Record<string, unknown>;
}

/** What the ledger holds for a payer's payment identifier. */
export interface IdentifiedPayment {
  paymentKey: string;
  requestHash: string;
  status: "pending" | "settled";
  transaction: string | null;
  network: string;
  amount: string;
  /** The answer; null while the call runs, when it was cut after its settlement, or once forgotten. */
  answer: KeptAnswer | null;
  /** When the answer was kept; set and with a null answer once it was forgotten. */
  answeredAt: Date | null;
}

export interface PendingSettlement {
  paymentKey: string;
  payer: string;
  nonce: string;
  asset: string;
  network: string;
  payTo: string;
  /** The price, in the asset's smallest units. */
  amount: string;
  validBefore: Date;
  claimedAt: Date;
}

/** An entry of the book: a settled payment, or a refund of one (with the payment's route, payer and nonce). */
export interface SettledRow {
  kind: "payment" | "refund";
  route: string;
  method: "GET" | "POST" | "MCP" | "A2A";
  tokenId: number;
  payer: string;
  caller: string | null;
  pricePoint: "standard" | "discounted";
  amount: string;
  asset: string;
  network: string;
  /** The payment's EIP-3009 nonce. */
  nonce: string;
  /** The settlement transaction; a refund's own transaction. */
  transaction: string;
  /** A call paid over a channel: its voucher's cumulative amount (the channel's charged total then); else null. */
  cumulative: string | null;
  /** When the payment was settled; when a refund's transaction was mined: ISO 8601 in UTC, to the millisecond. */
  settledAt: string;
  requestId: string;
  /** A refund's note; null for a payment. */
  note: string | null;
  /** The price point the payment signed: the amount of an `exact` payment, the most a metered one could be charged. */
  ceiling: string;
  /** What a call charged by its work took; null otherwise. */
  work: CountedWork | null;
}

/** Payments settled and refunds made per UTC day, route and price point (a refund on the day it was mined). */
export interface LedgerTotals {
  day: string;
  route: string;
  pricePoint: "standard" | "discounted";
  payments: number;
  amount: string;
  refunds: number;
  refunded: string;
}

/** An entry of the book with its key: where a page of the book ends (see `SettlementLedger.page`). */
export interface BookRow extends SettledRow {
  key: string;
}

/** A settled payment, as a refund of it is checked against (see `SettlementLedger.settledPayment`). */
export interface SettledPayment {
  paymentKey: string;
  payer: string;
  payTo: string;
  asset: string;
  network: string;
  amount: string;
  transaction: string;
}

/** A transfer a refund transaction made from the payee to the payer: one of its logs. */
export interface RefundTransfer {
  logIndex: number;
  amount: bigint;
}

/** What recording a refund did (see `SettlementLedger.recordRefund`). */
export type RecordRefundResult =
  /** `recorded` now, or `already` recorded for this payment (the same transaction again): the refund as booked. */
  | { outcome: "recorded" | "already"; refund: SettledRow; refunded: bigint }
  /** Every transfer of the transaction is booked as the refund of another payment. */
  | { outcome: "taken" }
  /** The transfer is more than what is left of the payment to give back. */
  | { outcome: "exceeds"; amount: bigint; remaining: bigint };

/** Where a page of the book ended: the last row's settlement time (ISO 8601) and key. */
export interface BookPosition {
  settledAt: string;
  key: string;
}

/**
 * The settlement ledger: a durable record of every payment taken, one row per payment authorization. It is
 * also the replay guard shared by every instance and kept across restarts: an authorization is claimed here
 * before its call runs, so it buys one call only.
 */
export interface SettlementLedger {
  /**
   * Claims the authorization for one call: `claimed`, or `used` (it already bought a call) or `in_use`
   * (another call holds it, or a call was cut short and its settlement is not yet known). A claim also says what
   * the payer already has in flight: the sum of its other pending claims in the same asset and network that can
   * still be settled. Claims of one payer are made one at a time, so each sees every claim made before it.
   */
  claim(claim: SettlementClaim): Promise<ClaimResult>;
  /** Gives a claim back: the call failed and nothing was settled. Missions queued by the call go with it. */
  release(paymentKey: string): Promise<void>;
  /**
   * Records the settlement of a claimed payment, with the answer when its call named a payment identifier
   * (idempotent: a second call changes nothing). `charge`, for a payment settled for less than it signed (`upto`):
   * the amount taken, and the work it is the formula of when known; the claim's amount stays its ceiling.
   */
  markSettled(
    paymentKey: string,
    transaction: string,
    settledAt: Date,
    answer?: KeptAnswer,
    charge?: SettledCharge,
  ): Promise<void>;
  /** The payment a payer's identifier names, when there is one. */
  identified(payer: string, paymentId: string): Promise<IdentifiedPayment | undefined>;
  /** Keeps the answer of a settled call that had none yet (answered again after it was cut); false if it had one. */
  keepAnswer(paymentKey: string, answer: KeptAnswer, at: Date): Promise<boolean>;
  /** Forgets the answers kept before `before` (their rows stay); how many were forgotten. */
  forgetAnswers(before: Date): Promise<number>;
  /**
   * Claims still pending (claimed before `olderThan`, or all of them without it), in the order of their keys: a page
   * of at most `limit` (default 100) whose keys come after `after`. Reading page after page reaches every claim.
   */
  pending(options?: { olderThan?: Date; after?: string; limit?: number }): Promise<PendingSettlement[]>;
  /** Entries (settled payments and refunds) in [from, to) for the asset and network, newest first. */
  entries(range: LedgerRange, limit: number): Promise<SettledRow[]>;
  /**
   * The book: settled payments and refunds in [from, to) for the asset and network, oldest first by (time, key), at
   * most `limit` after `after`. Reading page after page from no position reaches every entry made before the first
   * page was read, once each; one made later appears further on when its time is later.
   */
  page(range: LedgerRange, after: BookPosition | undefined, limit: number): Promise<BookRow[]>;
  /**
   * The same page in the pieces of the export's CSV lines (see CsvBookRecord).
   */
  csvPage(range: LedgerRange, after: BookPosition | undefined, limit: number): Promise<CsvBookRecord[]>;
  /**
   * Postgres only: the whole range as one `COPY … TO STDOUT (FORMAT csv)`, in book order, the rows of the export's
   * CSV but for the payer and caller (as stored) and the line ends (a line feed): transports/http/routes/ledger-csv-copy.ts finishes
   * them. The asset column is `range.asset` as given. Destroying the stream stops the statement.
   */
  csvCopy?(range: LedgerRange): Promise<Readable>;
  /**
   * Count and sum of settled payments and of refunds per UTC day, route and price point in [from, to), both UTC
   * midnights (a RangeError otherwise).
   */
  totals(range: LedgerRange): Promise<LedgerTotals[]>;
  /** The settled payment of this key, if there is one. */
  settledPayment(paymentKey: string): Promise<SettledPayment | undefined>;
  /**
   * Books a refund of a settled payment: the first of `transfers` (logs of `transaction`) not booked yet, if what
   * the payment's refunds then add up to is no more than it paid. Refunds of one payment are booked one at a time,
   * across instances; a transfer is booked once.
   */
  recordRefund(refund: {
    paymentKey: string;
    /** What the payment paid (a settled payment's amount never changes). */
    paid: bigint;
    transaction: string;
    transfers: RefundTransfer[];
    refundedAt: Date;
    note: string | null;
  }): Promise<RecordRefundResult>;
  /** How many claims are pending. */
  pendingCount(): Promise<number>;
  /** Pending claims made since `since`, and those older: a call cut short and not resolved yet. */
  pendingByAge(since: Date): Promise<{ recent: number; older: number }>;
}

export type ClaimResult =
  | { outcome: "claimed" /** Smallest units the payer's other pending claims add up to. */; inFlight: bigint }
  /** `identifier_taken`: the payer's payment identifier names another payment. */
  | { outcome: "used" | "in_use" | "identifier_taken" };

/**
 * A book row in the pieces of its CSV line (ledger-csv-sql.ts): `head` (its time and kind, a comma after each), the
 * route, `mid` (the method and token id between commas), the payer and caller as stored, `amounts` (the price point,
 * amount and USD between commas), the nonce, transaction, cumulative amount, ceiling and work (a comma after each), the request id,
 * the note; its key.
 */
export type CsvBookRecord = [
  head: string,
  route: string,
  mid: string,
  payer: string,
  caller: string | null,
  amounts: string,
  nonceTransactionCumulative: string,
  requestId: string,
  note: string | null,
  key: string,
];

export interface LedgerRange {
  from: Date;
  to: Date;
  asset: string;
  network: string;
}

/** A book row as the database gives it: BOOK_COLUMNS, in their order (an array per row: an export reads millions). */
export type BookRecord = [
  kind: "payment" | "refund",
  key: string,
  /** ISO 8601 (see BOOK_COLUMNS). */
  at: string,
  route: string,
  method: "GET" | "POST" | "MCP" | "A2A",
  tokenId: number,
  payer: string,
  caller: string | null,
  pricePoint: "standard" | "discounted",
  amount: string,
  nonce: string,
  transaction: string,
  /** numeric as text; null but for a call paid over a channel. */
  cumulative: string | null,
  requestId: string,
  note: string | null,
  /** numeric as text: the price point the payment signed (its amount, on rows from before it was kept). */
  ceiling: string,
  /** The counted work as workCsvText writes it; null but for a call charged by its work. */
  work: string | null,
];

/** A refund to book (`SettlementLedger.recordRefund`). */
export type RefundToRecord = Parameters<SettlementLedger["recordRefund"]>[0];

/** The options of `SettlementLedger.pending`. */
export type PendingOptions = NonNullable<Parameters<SettlementLedger["pending"]>[0]>;

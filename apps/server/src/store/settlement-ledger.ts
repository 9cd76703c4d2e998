import type { Readable } from "node:stream";
import type { Database, Queryable } from "./database.js";
import { BOOK_TIME, CSV_PAGE_COLUMNS, copyCsvColumns } from "./ledger-csv-sql.js";

/**
 * How long an answer is kept for its identifier: a retry comes seconds after the answer was lost, or minutes after
 * a client restarts; an hour covers both, and keeps the ledger from holding every answer ever given.
 */
export const ANSWER_RETENTION_MS = 60 * 60 * 1000;

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
  /** When the payment was settled; when a refund's transaction was mined: ISO 8601 in UTC, to the millisecond. */
  settledAt: string;
  requestId: string;
  /** A refund's note; null for a payment. */
  note: string | null;
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
   * (idempotent: a second call changes nothing).
   */
  markSettled(paymentKey: string, transaction: string, settledAt: Date, answer?: KeptAnswer): Promise<void>;
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
 * amount and USD between commas), the nonce and transaction (a comma after each), the request id, the note; its key.
 */
export type CsvBookRecord = [
  head: string,
  route: string,
  mid: string,
  payer: string,
  caller: string | null,
  amounts: string,
  nonceTransaction: string,
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
type BookRecord = [
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
  requestId: string,
  note: string | null,
];

// Settlement times are written from JavaScript dates (milliseconds), and refund times are block times (seconds), so
// a page's position, read back to the millisecond (BOOK_COLUMNS), is exact and no row is read twice.
/**
 * Settled payments as book rows; the WHERE clause follows. A page's asset and network are its range's: they are not
 * read again for every row (an export reads millions).
 */
const PAYMENTS = `SELECT 'payment' AS kind, payment_key AS key, settled_at AS at, route, method, token_id, payer, caller,
    price_point, amount, nonce, transaction, request_id, NULL::text AS note
  FROM settlements`;
/**
 * The settled payments of the asset ($1, lower case) and network ($2): the leading columns of the book's index
 * (migrations.ts, version 11), so that a page is one range of it.
 */
const OF_ASSET = "status = 'settled' AND lower(asset) = $1 AND network = $2";
/**
 * A book row's columns, read from PAYMENTS or REFUND_COLUMNS as `book`: its time as the wire writes it, so that an
 * export of millions of rows neither parses nor formats a date per row (docs/decisions.md, "Ledger totals and pages
 * at ten million entries"). A query orders by `book.at`, the time itself.
 */
const BOOK_COLUMNS = `book.kind, book.key, ${BOOK_TIME} AS at,
    book.route, book.method, book.token_id, book.payer, book.caller, book.price_point, book.amount::text, book.nonce,
    book.transaction, book.request_id, book.note`;
/** Refunds as book rows: the payment's fields, the refund's amount, transaction and time. */
const REFUND_COLUMNS = `'refund' AS kind, r.book_key AS key, r.refunded_at AS at, s.route, s.method, s.token_id, s.payer,
    s.caller, s.price_point, r.amount, s.nonce, r.transaction, s.request_id, r.note`;
const REFUNDS_FROM = "FROM refunds r JOIN settlements s ON s.payment_key = r.payment_key";
/** The refunds of payments in the asset ($1, lower case) and network ($2). */
const REFUNDS_OF_ASSET = "lower(s.asset) = $1 AND s.network = $2";

/** A text as an SQL literal (with `standard_conforming_strings` on, which csvCopy sets): COPY takes no parameters. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * The statement of a range's CSV export (see `SettlementLedger.csvCopy`): the payments and the refunds, each one
 * range of its index in book order, merged in the same order, as `bookPage` reads a page.
 */
function csvCopyStatement(range: LedgerRange): string {
  const values = [
    literal(range.asset.toLowerCase()),
    literal(range.network),
    `${literal(range.from.toISOString())}::timestamptz`,
    `${literal(range.to.toISOString())}::timestamptz`,
  ];
  const withValues = (sql: string) => sql.replace(/\$([1-4])\b/g, (_, n: string) => values[Number(n) - 1]!);
  const book = withValues(`(${PAYMENTS} WHERE ${OF_ASSET} AND settled_at >= $3 AND settled_at < $4
         ORDER BY settled_at, payment_key)
       UNION ALL
       (SELECT ${REFUND_COLUMNS} ${REFUNDS_FROM}
         WHERE ${REFUNDS_OF_ASSET} AND r.refunded_at >= $3 AND r.refunded_at < $4 ORDER BY r.refunded_at, r.book_key)`);
  return `COPY (SELECT ${copyCsvColumns(literal(range.asset), literal(range.network))} FROM (${book}) book
    ORDER BY book.at, book.key) TO STDOUT WITH (FORMAT csv)`;
}

/**
 * What the export's statement runs with: the book's order from its indexes, never a sort of the whole range (which
 * the planner may prefer for a range of millions, and which spills to disk), and literals read as written.
 */
const CSV_COPY_SETTINGS = ["SET LOCAL enable_sort = off", "SET LOCAL standard_conforming_strings = on"];

/** The UTC day a range starts or ends at: totals are kept per day, so a range of them is whole days. */
function utcDayOf(at: Date, end: "from" | "to"): string {
  if (at.getTime() % 86_400_000 !== 0)
    throw new RangeError(`The ledger's totals need whole UTC days: ${end} is ${at.toISOString()}.`);
  return at.toISOString().slice(0, 10);
}

/** A refund's place in the book, beside the payments' keys. */
const refundBookKey = (transaction: string, logIndex: number) => `refund:${transaction.toLowerCase()}:${logIndex}`;

/** A book row read from the database, in the asset and network it was read for. */
function bookRowOf(row: [...BookRecord, ...unknown[]], of: { asset: string; network: string }): BookRow {
  return {
    kind: row[0],
    key: row[1],
    settledAt: row[2],
    route: row[3],
    method: row[4],
    tokenId: row[5],
    payer: row[6],
    caller: row[7],
    pricePoint: row[8],
    amount: row[9],
    asset: of.asset,
    network: of.network,
    nonce: row[10],
    transaction: row[11],
    requestId: row[12],
    note: row[13],
  };
}

/**
 * The statement and parameters of a page of the book (see `SettlementLedger.page`), each row read with `columns` over
 * the book subquery `book`. Each side is one range of its index, from the position on (or from the window's start),
 * in book order; the two are merged in the same order. A later page is bounded by its position alone, never beside
 * the window's start: given both, the planner may begin at the window's start and read every row up to the position.
 */
function bookPage(
  columns: string,
  range: LedgerRange,
  after: BookPosition | undefined,
  limit: number,
): [sql: string, params: unknown[]] {
  const [payments, refunds, params] =
    after !== undefined && Date.parse(after.settledAt) >= range.from.getTime()
      ? [
          "(settled_at, payment_key) > ($3::timestamptz, $4::text) AND settled_at < $5",
          // The plain bound beside the row comparison, which alone the planner takes to leave a quarter of the refunds
          // after any position (and so scans them all): with it, the refunds side is one range of refunds_book.
          "r.refunded_at >= $3::timestamptz AND (r.refunded_at, r.book_key) > ($3::timestamptz, $4::text) AND r.refunded_at < $5",
          [after.settledAt, after.key, range.to],
        ]
      : ["settled_at >= $3 AND settled_at < $4", "r.refunded_at >= $3 AND r.refunded_at < $4", [range.from, range.to]];
  const limitParam = `$${params.length + 3}`;
  // The refunds side reads no refund past the time of the last payment a full page can list (`reach`, the payments'
  // range read once more, for the time alone): a refund after it cannot be on the page. Without that bound, how many
  // refunds were read, each with a lookup of its payment, was the planner's choice: at ten million entries it read a
  // page's worth after every position (docs/decisions.md, "Ledger totals and pages at ten million entries").
  const paymentsRange = `${OF_ASSET} AND ${payments} ORDER BY settled_at, payment_key`;
  const reach = `coalesce((SELECT settled_at FROM settlements WHERE ${paymentsRange}
    OFFSET ${limitParam} - 1 LIMIT 1), 'infinity')`;
  return [
    `SELECT ${columns} FROM (
       (${PAYMENTS} WHERE ${paymentsRange} LIMIT ${limitParam})
       UNION ALL
       (SELECT ${REFUND_COLUMNS} ${REFUNDS_FROM} WHERE ${REFUNDS_OF_ASSET} AND ${refunds} AND r.refunded_at <= ${reach}
         ORDER BY r.refunded_at, r.book_key LIMIT ${limitParam})
     ) book ORDER BY book.at, book.key LIMIT ${limitParam}`,
    [range.asset.toLowerCase(), range.network, ...params, limit],
  ];
}

export function createSettlementLedger(db: Database): SettlementLedger {
  const ledger: SettlementLedger = {
    async claim(c) {
      const params = [
        c.paymentKey,
        c.route,
        c.method,
        c.tokenId,
        c.payer,
        c.nonce,
        c.caller,
        c.pricePoint,
        c.amount,
        c.asset,
        c.network,
        c.payTo,
        c.validBefore,
        c.requestId,
        c.identifier?.paymentId ?? null,
        c.identifier?.requestHash ?? null,
      ];
      // The claim and the sum of the payer's other claims in flight, in one statement (the sum does not see the row
      // it inserts, which it leaves out anyway).
      const claim = async (q: Queryable): Promise<bigint | undefined> => {
        const [row] = await q.query<{ claimed: number; in_flight: string }>(
          `WITH claimed AS (
             INSERT INTO settlements (payment_key, status, route, method, token_id, payer, nonce, caller, price_point,
               amount, asset, network, pay_to, valid_before, request_id, payment_id, request_hash)
             VALUES ($1, 'pending', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
             ON CONFLICT DO NOTHING
             RETURNING payment_key)
           SELECT (SELECT count(*) FROM claimed)::int AS claimed,
             (SELECT coalesce(sum(amount), 0) FROM settlements
              WHERE status = 'pending' AND payer = $5 AND lower(asset) = lower($10) AND network = $11
                AND payment_key <> $1 AND valid_before > now())::text AS in_flight`,
          params,
        );
        return row && row.claimed > 0 ? BigInt(row.in_flight) : undefined;
      };
      // One claim of a payer at a time, so that the sum sees every claim made before. PGlite runs one statement at
      // a time for its one process: the statement alone is that. On Postgres, instances claim at once: a lock per
      // payer, taken before the statement, whose snapshot then holds every claim committed before it.
      const inserted =
        db.kind === "pglite"
          ? await claim(db)
          : await db.transaction(async (tx) => {
              await tx.query("SELECT pg_advisory_xact_lock(72610002, hashtext($1))", [c.payer.toLowerCase()]);
              return claim(tx);
            });
      if (inserted !== undefined) return { outcome: "claimed", inFlight: inserted };
      const [existing] = await db.query<{ status: string }>("SELECT status FROM settlements WHERE payment_key = $1", [
        c.paymentKey,
      ]);
      if (!existing) {
        // Not this payment's row: the payer's identifier is taken by another payment; or the row was released
        // between the insert and this read, and the caller may simply try again.
        if (c.identifier && (await ledger.identified(c.payer, c.identifier.paymentId))) {
          return { outcome: "identifier_taken" };
        }
        return { outcome: "in_use" };
      }
      return { outcome: existing.status === "settled" ? "used" : "in_use" };
    },
    async release(paymentKey) {
      await db.query("DELETE FROM settlements WHERE payment_key = $1 AND status = 'pending'", [paymentKey]);
    },
    async markSettled(paymentKey, transaction, settledAt, answer) {
      await db.query(
        `UPDATE settlements SET status = 'settled', transaction = $2, settled_at = $3::timestamptz,
           answer = $4::jsonb, answered_at = CASE WHEN $4::jsonb IS NULL THEN NULL ELSE $3::timestamptz END
         WHERE payment_key = $1 AND status = 'pending'`,
        [paymentKey, transaction, settledAt, answer ? JSON.stringify(answer) : null],
      );
    },
    async identified(payer, paymentId) {
      const [row] = await db.query<{
        payment_key: string;
        request_hash: string;
        status: "pending" | "settled";
        transaction: string | null;
        network: string;
        amount: string;
        answer: KeptAnswer | null;
        answered_at: Date | null;
      }>(
        `SELECT payment_key, request_hash, status, transaction, network, amount::text AS amount, answer, answered_at
         FROM settlements WHERE payer = $1 AND payment_id = $2`,
        [payer, paymentId],
      );
      if (!row) return undefined;
      return {
        paymentKey: row.payment_key,
        requestHash: row.request_hash,
        status: row.status,
        transaction: row.transaction,
        network: row.network,
        amount: row.amount,
        answer: row.answer,
        answeredAt: row.answered_at ? new Date(row.answered_at) : null,
      };
    },
    async keepAnswer(paymentKey, answer, at) {
      const rows = await db.query(
        `UPDATE settlements SET answer = $2::jsonb, answered_at = $3
         WHERE payment_key = $1 AND status = 'settled' AND answered_at IS NULL RETURNING payment_key`,
        [paymentKey, JSON.stringify(answer), at],
      );
      return rows.length > 0;
    },
    async forgetAnswers(before) {
      const rows = await db.query(
        "UPDATE settlements SET answer = NULL WHERE answer IS NOT NULL AND answered_at < $1 RETURNING payment_key",
        [before],
      );
      return rows.length;
    },
    async pending({ olderThan, after, limit = 100 } = {}) {
      const rows = await db.query<{
        payment_key: string;
        payer: string;
        nonce: string;
        asset: string;
        network: string;
        pay_to: string;
        amount: string;
        valid_before: Date;
        claimed_at: Date;
      }>(
        `SELECT payment_key, payer, nonce, asset, network, pay_to, amount::text AS amount, valid_before, claimed_at
         FROM settlements
         WHERE status = 'pending' AND ($1::timestamptz IS NULL OR claimed_at < $1) AND payment_key > $2
         ORDER BY payment_key LIMIT $3`,
        [olderThan ?? null, after ?? "", limit],
      );
      return rows.map((row) => ({
        paymentKey: row.payment_key,
        payer: row.payer,
        nonce: row.nonce,
        asset: row.asset,
        network: row.network,
        payTo: row.pay_to,
        amount: row.amount,
        validBefore: new Date(row.valid_before),
        claimedAt: new Date(row.claimed_at),
      }));
    },
    async entries(range, limit) {
      // Newest first: each side read backwards along its index from the window's end.
      const rows = await db.queryArrays<BookRecord>(
        `SELECT ${BOOK_COLUMNS} FROM (
           (${PAYMENTS} WHERE ${OF_ASSET} AND settled_at >= $3 AND settled_at < $4
             ORDER BY settled_at DESC, payment_key DESC LIMIT $5)
           UNION ALL
           (SELECT ${REFUND_COLUMNS} ${REFUNDS_FROM} WHERE ${REFUNDS_OF_ASSET} AND r.refunded_at >= $3 AND r.refunded_at < $4
             ORDER BY r.refunded_at DESC, r.book_key DESC LIMIT $5)
         ) book ORDER BY book.at DESC, book.key DESC LIMIT $5`,
        [range.asset.toLowerCase(), range.network, range.from, range.to, limit],
      );
      return rows.map((row) => bookRowOf(row, range));
    },
    async page(range, after, limit) {
      const rows = await db.queryArrays<BookRecord>(...bookPage(BOOK_COLUMNS, range, after, limit));
      return rows.map((row) => bookRowOf(row, range));
    },
    async csvPage(range, after, limit) {
      return db.queryArrays<CsvBookRecord>(...bookPage(CSV_PAGE_COLUMNS, range, after, limit));
    },
    ...(db.copyOut
      ? {
          csvCopy: (range: LedgerRange) => db.copyOut!(csvCopyStatement(range), CSV_COPY_SETTINGS),
        }
      : {}),
    async totals(range) {
      // The totals the store keeps per day (migrations.ts, version 11): a window of days reads a few rows per day and
      // route, however many entries they hold.
      return db.query<LedgerTotals>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, route, price_point AS "pricePoint", sum(payments)::int AS payments,
           sum(amount)::text AS amount, sum(refunds)::int AS refunds, sum(refunded)::text AS refunded
         FROM ledger_totals
         WHERE asset = $1 AND network = $2 AND day >= $3::date AND day < $4::date
         GROUP BY day, route, price_point HAVING sum(payments) <> 0 OR sum(refunds) <> 0
         ORDER BY 1, 2, 3`,
        [range.asset.toLowerCase(), range.network, utcDayOf(range.from, "from"), utcDayOf(range.to, "to")],
      );
    },
    async settledPayment(paymentKey) {
      const [row] = await db.query<{
        payer: string;
        pay_to: string;
        asset: string;
        network: string;
        amount: string;
        transaction: string;
      }>(
        `SELECT payer, pay_to, asset, network, amount::text AS amount, transaction FROM settlements
         WHERE payment_key = $1 AND status = 'settled'`,
        [paymentKey],
      );
      if (!row) return undefined;
      return {
        paymentKey,
        payer: row.payer,
        payTo: row.pay_to,
        asset: row.asset,
        network: row.network,
        amount: row.amount,
        transaction: row.transaction,
      };
    },
    async recordRefund(refund) {
      const transaction = refund.transaction.toLowerCase();
      const booked = async (tx: Queryable, where: string, params: unknown[]) => {
        const [row] = await tx.queryArrays<[...BookRecord, asset: string, network: string]>(
          `SELECT ${BOOK_COLUMNS}, book.asset, book.network
           FROM (SELECT ${REFUND_COLUMNS}, s.asset, s.network ${REFUNDS_FROM} WHERE ${where}) book`,
          params,
        );
        return row ? bookRowOf(row, { asset: row[14], network: row[15] }) : undefined;
      };
      return db.transaction(async (tx): Promise<RecordRefundResult> => {
        // One refund of a payment at a time, across instances: the sum below then sees every refund booked before.
        await tx.query("SELECT pg_advisory_xact_lock(72610003, hashtext($1))", [refund.paymentKey]);
        const refundedOf = async () => {
          const [sum] = await tx.query<{ amount: string }>(
            "SELECT coalesce(sum(amount), 0)::text AS amount FROM refunds WHERE payment_key = $1",
            [refund.paymentKey],
          );
          return BigInt(sum?.amount ?? "0");
        };
        const already = await booked(tx, "r.transaction = $1 AND r.payment_key = $2", [transaction, refund.paymentKey]);
        if (already) return { outcome: "already", refund: already, refunded: await refundedOf() };
        const taken = new Set(
          (
            await tx.query<{ log_index: number }>("SELECT log_index FROM refunds WHERE transaction = $1", [transaction])
          ).map((row) => row.log_index),
        );
        const transfer = refund.transfers.find((t) => !taken.has(t.logIndex));
        if (!transfer) return { outcome: "taken" };
        const refunded = await refundedOf();
        const remaining = refund.paid - refunded;
        if (transfer.amount > remaining) return { outcome: "exceeds", amount: transfer.amount, remaining };
        const key = refundBookKey(transaction, transfer.logIndex);
        const inserted = await tx.query(
          `INSERT INTO refunds (transaction, log_index, payment_key, amount, refunded_at, book_key, note)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING book_key`,
          [
            transaction,
            transfer.logIndex,
            refund.paymentKey,
            transfer.amount.toString(),
            refund.refundedAt,
            key,
            refund.note,
          ],
        );
        // Booked for another payment in the meantime (its lock is not this one's).
        if (inserted.length === 0) return { outcome: "taken" };
        const recorded = await booked(tx, "r.book_key = $1", [key]);
        return { outcome: "recorded", refund: recorded!, refunded: refunded + transfer.amount };
      });
    },
    async pendingByAge(since) {
      const [row] = await db.query<{ recent: number; older: number }>(
        `SELECT count(*) FILTER (WHERE claimed_at >= $1)::int AS recent, count(*) FILTER (WHERE claimed_at < $1)::int AS older
         FROM settlements WHERE status = 'pending'`,
        [since],
      );
      return { recent: row?.recent ?? 0, older: row?.older ?? 0 };
    },
    async pendingCount() {
      const [row] = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM settlements WHERE status = 'pending'",
      );
      return row?.n ?? 0;
    },
  };
  return ledger;
}

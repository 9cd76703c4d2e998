/** The SQL of the ledger's book: its rows, a page of them in book order, and the CSV export's COPY. */
import { parseWorkText } from "@agent-tools/schema";
import { BOOK_TIME, copyCsvColumns } from "../ledger-csv-sql.js";
import type { BookPosition, BookRecord, BookRow, LedgerRange } from "./types.js";

// Settlement times are written from JavaScript dates (milliseconds), and refund times are block times (seconds), so
// a page's position, read back to the millisecond (BOOK_COLUMNS), is exact and no row is read twice.
/**
 * Settled payments as book rows; the WHERE clause follows. A page's asset and network are its range's: they are not
 * read again for every row (an export reads millions).
 */
export const PAYMENTS = `SELECT 'payment' AS kind, payment_key AS key, settled_at AS at, route, method, token_id, payer, caller,
    price_point, amount, nonce, transaction, cumulative, request_id, NULL::text AS note,
    coalesce(ceiling, amount) AS ceiling, work
  FROM settlements`;
/**
 * The settled payments of the asset ($1, lower case) and network ($2): the leading columns of the book's index
 * (migrations.ts, version 11), so that a page is one range of it.
 */
export const OF_ASSET = "status = 'settled' AND lower(asset) = $1 AND network = $2";
/**
 * A book row's columns, read from PAYMENTS or REFUND_COLUMNS as `book`: its time as the wire writes it, so that an
 * export of millions of rows neither parses nor formats a date per row (docs/decisions.md, "Ledger totals and pages
 * at ten million entries"). A query orders by `book.at`, the time itself.
 */
export const BOOK_COLUMNS = `book.kind, book.key, ${BOOK_TIME} AS at,
    book.route, book.method, book.token_id, book.payer, book.caller, book.price_point, book.amount::text, book.nonce,
    book.transaction, book.cumulative::text, book.request_id, book.note, book.ceiling::text, book.work`;
/**
 * Refunds as book rows: the payment's fields, the refund's amount, transaction and time. A refund has no cumulative
 * amount, even of a payment made over a channel: that is the voucher's, which the refund did not sign.
 */
export const REFUND_COLUMNS = `'refund' AS kind, r.book_key AS key, r.refunded_at AS at, s.route, s.method, s.token_id, s.payer,
    s.caller, s.price_point, r.amount, s.nonce, r.transaction, NULL::numeric AS cumulative, s.request_id, r.note,
    coalesce(s.ceiling, s.amount) AS ceiling, NULL::text AS work`;
export const REFUNDS_FROM = "FROM refunds r JOIN settlements s ON s.payment_key = r.payment_key";
/** The refunds of payments in the asset ($1, lower case) and network ($2). */
export const REFUNDS_OF_ASSET = "lower(s.asset) = $1 AND s.network = $2";

/** A text as an SQL literal (with `standard_conforming_strings` on, which csvCopy sets): COPY takes no parameters. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * The statement of a range's CSV export (see `SettlementLedger.csvCopy`): the payments and the refunds, each one
 * range of its index in book order, merged in the same order, as `bookPage` reads a page.
 */
export function csvCopyStatement(range: LedgerRange): string {
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
export const CSV_COPY_SETTINGS = ["SET LOCAL enable_sort = off", "SET LOCAL standard_conforming_strings = on"];

/** The UTC day a range starts or ends at: totals are kept per day, so a range of them is whole days. */
export function utcDayOf(at: Date, end: "from" | "to"): string {
  if (at.getTime() % 86_400_000 !== 0)
    throw new RangeError(`The ledger's totals need whole UTC days: ${end} is ${at.toISOString()}.`);
  return at.toISOString().slice(0, 10);
}

/** A refund's place in the book, beside the payments' keys. */
export const refundBookKey = (transaction: string, logIndex: number) =>
  `refund:${transaction.toLowerCase()}:${logIndex}`;

/** A book row read from the database, in the asset and network it was read for. */
export function bookRowOf(row: [...BookRecord, ...unknown[]], of: { asset: string; network: string }): BookRow {
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
    cumulative: row[12],
    requestId: row[13],
    note: row[14],
    ceiling: row[15],
    work: row[16] === null ? null : parseWorkText(row[16]),
  };
}

/**
 * The statement and parameters of a page of the book (see `SettlementLedger.page`), each row read with `columns` over
 * the book subquery `book`. Each side is one range of its index, from the position on (or from the window's start),
 * in book order; the two are merged in the same order. A later page is bounded by its position alone, never beside
 * the window's start: given both, the planner may begin at the window's start and read every row up to the position.
 */
export function bookPage(
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

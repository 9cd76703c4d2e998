/** The ledger's book read back: the newest entries, pages in book order, and the totals per day. */
import type { Database } from "../database.js";
import { CSV_PAGE_COLUMNS } from "../ledger-csv-sql.js";
import {
  BOOK_COLUMNS,
  bookPage,
  bookRowOf,
  OF_ASSET,
  PAYMENTS,
  REFUND_COLUMNS,
  REFUNDS_FROM,
  REFUNDS_OF_ASSET,
  utcDayOf,
} from "./book-sql.js";
import type {
  BookPosition,
  BookRecord,
  BookRow,
  CsvBookRecord,
  LedgerRange,
  LedgerTotals,
  SettledRow,
} from "./types.js";

/** The window's newest entries, payments and refunds, newest first. */
export async function bookEntries(db: Database, range: LedgerRange, limit: number): Promise<SettledRow[]> {
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
}

/** A page of the book in book order, after a position. */
export async function bookPageRows(
  db: Database,
  range: LedgerRange,
  after: BookPosition | undefined,
  limit: number,
): Promise<BookRow[]> {
  const rows = await db.queryArrays<BookRecord>(...bookPage(BOOK_COLUMNS, range, after, limit));
  return rows.map((row) => bookRowOf(row, range));
}

/** A page of the book as the CSV export writes it. */
export async function csvBookPage(
  db: Database,
  range: LedgerRange,
  after: BookPosition | undefined,
  limit: number,
): Promise<CsvBookRecord[]> {
  return db.queryArrays<CsvBookRecord>(...bookPage(CSV_PAGE_COLUMNS, range, after, limit));
}

/** The window's totals per day, route and price point, from the totals the store keeps. */
export async function ledgerTotals(db: Database, range: LedgerRange): Promise<LedgerTotals[]> {
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
}

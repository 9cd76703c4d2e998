/**
 * The CSV export's SQL, on two paths: on PGlite a page is read as the pieces of its lines (`ledgerCsvLine`,
 * packages/schema), split between the database and the server by what each does cheaply; on Postgres the whole window
 * is one COPY whose rows the server finishes (copyCsvColumns). test/ledger-book.test.ts holds both to ledgerCsvLine's
 * bytes (docs/decisions.md, "Ledger totals and pages at ten million entries").
 */
import { CSV_FORMULA_STARTS, PAYMENT_ASSET_DECIMALS } from "@agent-tools/schema";

/** One unit of the asset as a numeric literal (0.000001): an amount times it is USD to the last unit, "0.010000". */
const UNIT = `0.${"1".padStart(PAYMENT_ASSET_DECIMALS, "0")}`;

/**
 * A book row's time as the wire writes it (ISO 8601, UTC, to the millisecond), over a book subquery named `book`: read
 * as text, an export of millions of rows neither parses nor formats a date per row.
 */
export const BOOK_TIME = `to_char(book.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The sign of a book row's amount and USD: a refund's are negative (LEDGER_CSV_COLUMNS), except a refund of nothing. */
const SIGN = `CASE WHEN book.kind = 'refund' AND book.amount <> 0 THEN '-' ELSE '' END`;
/** A book row's amount in units, signed. */
const AMOUNT = `${SIGN} || book.amount::text`;
/** A book row's USD to the last unit, signed. */
const USD = `${SIGN} || (book.amount * ${UNIT})::text`;

/** The select list of a CSV page over a book subquery named `book` (settlement-ledger.ts), in CsvBookRecord's order. */
export const CSV_PAGE_COLUMNS = `${BOOK_TIME} || ',' || book.kind || ',' AS head,
    book.route,
    ',' || book.method || ',' || book.token_id || ',' AS mid,
    book.payer, book.caller,
    ',' || book.price_point || ',' || ${AMOUNT} || ',' || ${USD} || ',' AS amounts,
    book.nonce || ',' || book.transaction || ',' || coalesce(book.cumulative::text, '') || ',' ||
      book.ceiling::text || ',' || coalesce(book.work, '') || ',' AS nonce_transaction_cumulative,
    book.request_id, book.note, book.key`;

/** A text as csvField guards it against a spreadsheet (packages/schema): an apostrophe before a formula's start. */
const FORMULA_CODES = CSV_FORMULA_STARTS.map((start) => start.charCodeAt(0)).join(", ");
const guarded = (text: string) =>
  `CASE WHEN ascii(${text}) IN (${FORMULA_CODES}) THEN '''' || ${text} ELSE ${text} END`;

/**
 * The select list of the export's `COPY … TO STDOUT (FORMAT csv)` over a book subquery named `book`: the columns of
 * LEDGER_CSV_COLUMNS, the asset and network of the range given as SQL literals. COPY adds the quotes RFC 4180 asks
 * for, by csvField's rule (a comma, a quote or a line break); a text that may be empty (the route, the transaction of
 * a call over a channel not yet claimed, the request id) is written as NULL is, unquoted, as csvField writes it, where
 * COPY would quote an empty text; so are a NULL cumulative amount (an entry not paid over a channel) and work. Two
 * things are left to the server, in place (transports/http/routes/ledger-csv-copy.ts): the payer and caller come as stored, to be
 * checksummed, and the note ends in a space, to become the carriage return of the line's CRLF where COPY ends a row
 * with a line feed alone (docs/decisions.md, "The CSV export on Postgres: one COPY").
 */
export function copyCsvColumns(assetLiteral: string, networkLiteral: string): string {
  return `${BOOK_TIME}, book.kind, nullif(${guarded("book.route")}, ''), book.method, book.token_id, book.payer,
    book.caller, book.price_point, ${AMOUNT}, ${USD}, ${assetLiteral}, ${networkLiteral}, book.nonce,
    nullif(book.transaction, ''), book.cumulative, book.ceiling, book.work, nullif(${guarded("book.request_id")}, ''),
    coalesce(${guarded("book.note")}, '') || ' '`;
}

/**
 * The CSV export's SQL, on two paths. On PGlite, a page is read as the pieces of its lines (`ledgerCsvLine`,
 * packages/schema), the work split between the database and the server by what each does cheaply (docs/decisions.md,
 * "The CSV export in pieces (PGlite)"): the database writes the time and the amounts and joins the fields that need
 * no care into a few columns; the server checksums the addresses, checks the three free texts and adds the asset and
 * network. On Postgres, the whole window is one COPY whose rows the server finishes (copyCsvColumns).
 * test/ledger-book.test.ts holds both to ledgerCsvLine's bytes.
 */
import { PAYMENT_ASSET_DECIMALS } from "@agent-tools/schema";

/** One unit of the asset as a numeric literal (0.000001): an amount times it is USD to the last unit, "0.010000". */
const UNIT = `0.${"1".padStart(PAYMENT_ASSET_DECIMALS, "0")}`;

/** A book row's amount and USD: a refund's are negative (LEDGER_CSV_COLUMNS), except a refund of nothing. */
const AMOUNTS = `CASE WHEN book.kind = 'refund' AND book.amount <> 0
      THEN '-' || book.amount::text || ',-' || (book.amount * ${UNIT})::text
      ELSE book.amount::text || ',' || (book.amount * ${UNIT})::text END`;

/** The select list of a CSV page over a book subquery named `book` (settlement-ledger.ts), in CsvBookRecord's order. */
export const CSV_PAGE_COLUMNS = `to_char(book.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || ',' || book.kind || ',' AS head,
    book.route,
    ',' || book.method || ',' || book.token_id || ',' AS mid,
    book.payer, book.caller,
    ',' || book.price_point || ',' || ${AMOUNTS} || ',' AS amounts,
    book.nonce || ',' || book.transaction || ',' AS nonce_transaction,
    book.request_id, book.note, book.key`;

/**
 * A text as csvField guards it against a spreadsheet (packages/schema): an apostrophe before `=`, `+`, `-`, `@`, a tab
 * or a carriage return first.
 */
const guarded = (text: string) =>
  `CASE WHEN ascii(${text}) IN (61, 43, 45, 64, 9, 13) THEN '''' || ${text} ELSE ${text} END`;

/**
 * The select list of the export's `COPY … TO STDOUT (FORMAT csv)` over a book subquery named `book`: the columns of
 * LEDGER_CSV_COLUMNS, the asset and network of the range given as SQL literals. COPY adds the quotes RFC 4180 asks
 * for, by csvField's rule (a comma, a quote or a line break); an empty text is written as NULL is, unquoted. Two
 * things are left to the server, in place (routes/ledger-csv-copy.ts): the payer and caller come as stored, to be
 * checksummed, and the note ends in a space, to become the carriage return of the line's CRLF where COPY ends a row
 * with a line feed alone (docs/decisions.md, "The CSV export on Postgres: one COPY").
 */
export function copyCsvColumns(assetLiteral: string, networkLiteral: string): string {
  return `to_char(book.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), book.kind,
    nullif(${guarded("book.route")}, ''), book.method, book.token_id, book.payer, book.caller, book.price_point,
    CASE WHEN book.kind = 'refund' AND book.amount <> 0 THEN '-' || book.amount::text ELSE book.amount::text END,
    CASE WHEN book.kind = 'refund' AND book.amount <> 0 THEN '-' || (book.amount * ${UNIT})::text
      ELSE (book.amount * ${UNIT})::text END,
    ${assetLiteral}, ${networkLiteral}, book.nonce, book.transaction, nullif(${guarded("book.request_id")}, ''),
    coalesce(${guarded("book.note")}, '') || ' '`;
}

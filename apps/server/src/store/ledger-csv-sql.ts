/**
 * A page of the CSV export read as the pieces of its lines (`ledgerCsvLine`, packages/schema), the work split between
 * the database and the server by what each does cheaply (docs/decisions.md, "The CSV export in pieces"): the database
 * writes the whole line but the addresses, texts checked with integer and substring tests (a regular expression per
 * field costs it several times more); the server checksums the payer and caller and adds the asset and network every
 * line repeats. test/ledger-book.test.ts holds the lines to ledgerCsvLine's bytes.
 */
import { PAYMENT_ASSET_DECIMALS } from "@agent-tools/schema";

/** A book row's time as the wire writes it (ISO 8601, UTC, milliseconds): no date parsed or formatted per row. */
export const BOOK_TIME = `to_char(book.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** One unit of the asset as a numeric literal (0.000001): an amount times it is USD to the last unit, "0.010000". */
const UNIT = `0.${"1".padStart(PAYMENT_ASSET_DECIMALS, "0")}`;

/** A book row's amount and USD: a refund's are negative (LEDGER_CSV_COLUMNS), except a refund of nothing. */
const AMOUNTS = `CASE WHEN book.kind = 'refund' AND book.amount <> 0
      THEN '-' || book.amount::text || ',-' || (book.amount * ${UNIT})::text
      ELSE book.amount::text || ',' || (book.amount * ${UNIT})::text END`;

/** The first characters csvField guards as a formula (`=`, `+`, `-`, `@`, tab, carriage return), as code points. */
const FORMULA_STARTS = ["=", "+", "-", "@", "\t", "\r"].map((c) => c.codePointAt(0)).join(", ");
/** Whether a text holds a character that RFC 4180 quotes: a comma, a quote or a line break. */
const holdsQuoted = (text: string) =>
  `strpos(${text}, ',') + strpos(${text}, '"') + strpos(${text}, E'\\n') + strpos(${text}, E'\\r') > 0`;

/**
 * `csvField` (packages/schema) of a non-null text in SQL. Most texts need no care, and the first branch says so with
 * an integer comparison and four substring searches; `ascii` of a text is its first character's code point.
 */
function csvFieldOf(text: string): string {
  const guarded = `CASE WHEN ascii(${text}) IN (${FORMULA_STARTS}) THEN '''' || ${text} ELSE ${text} END`;
  return `CASE WHEN ascii(${text}) NOT IN (${FORMULA_STARTS}) AND NOT (${holdsQuoted(text)}) THEN ${text}
      WHEN ${holdsQuoted(text)} THEN '"' || replace(${guarded}, '"', '""') || '"'
      ELSE ${guarded} END`;
}

/**
 * The select list of a CSV page over a book subquery named `book` (settlement-ledger.ts), in CsvBookRecord's order:
 * the line up to the payer, the payer and caller as stored, the amounts up to the asset, the rest of the line.
 */
export const CSV_PAGE_COLUMNS = `${BOOK_TIME} || ',' || book.kind || ',' || ${csvFieldOf("book.route")} || ',' ||
      book.method || ',' || book.token_id || ',' AS head,
    book.payer, book.caller,
    ',' || book.price_point || ',' || ${AMOUNTS} || ',' AS amounts,
    book.nonce || ',' || book.transaction || ',' || ${csvFieldOf("book.request_id")} || ',' ||
      CASE WHEN book.note IS NULL THEN '' ELSE ${csvFieldOf("book.note")} END || E'\\r\\n' AS tail,
    book.key`;

/**
 * The CSV export on Postgres: the rows of one `COPY … TO STDOUT (FORMAT csv)` (SettlementLedger.csvCopy) finished into
 * the export's lines in place, as bytes, never read into strings. The database writes every field as the export does
 * but what it cannot: the payer and caller, checksummed here (EIP-55, a Keccak hash SQL lacks), and the line's end,
 * where the note's last byte, a space, becomes the carriage return before COPY's line feed (store/ledger-csv-sql.ts;
 * docs/decisions.md, "The CSV export on Postgres: one COPY").
 */
import { Transform, type TransformCallback } from "node:stream";
import { checksumOf } from "./ledger-book.js";

const COMMA = 0x2c;
const QUOTE = 0x22;
const SPACE = 0x20;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
/** An address as text: `0x` and 40 hex digits. */
const ADDRESS_BYTES = 42;
/** Fields before the payer: time, kind, route, method, token id (LEDGER_CSV_COLUMNS). */
const FIELDS_BEFORE_PAYER = 5;

/** Where a row's bytes run short: the rest of the row comes with the next chunk. */
const INCOMPLETE = -1;

/** A row of the COPY that is not as copyCsvColumns writes it: the export is cut rather than written wrong. */
export class CopyRowError extends Error {
  constructor(what: string) {
    super(`A row of the ledger's COPY is not as the export writes it: ${what}.`);
    this.name = "CopyRowError";
  }
}

/** The export's lines from the COPY's rows, chunk by chunk; a row cut between chunks waits for its end. */
export class CsvLinesFromCopy extends Transform {
  private rest: Buffer | undefined;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let from = 0;
    try {
      if (this.rest !== undefined) {
        // The row cut at the last chunk's end, joined to as much of this chunk as it needs, not to all of it: a copy
        // of every chunk costs more than finishing its rows.
        const rest = this.rest;
        for (let take = Math.min(chunk.length, 1024); ; take = Math.min(chunk.length, take * 4)) {
          const joined = Buffer.concat([rest, chunk.subarray(0, take)]);
          const end = this.finishRow(joined, 0);
          if (end !== INCOMPLETE) {
            this.rest = undefined;
            this.push(joined.subarray(0, end));
            from = end - rest.length;
            break;
          }
          if (take === chunk.length) {
            this.rest = joined;
            done();
            return;
          }
        }
      }
      let row = from;
      while (row < chunk.length) {
        const next = this.finishRow(chunk, row);
        if (next === INCOMPLETE) break;
        row = next;
      }
      if (row < chunk.length) this.rest = chunk.subarray(row);
      done(null, row > from ? chunk.subarray(from, row) : undefined);
    } catch (error) {
      done(error as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    done(this.rest === undefined ? null : new CopyRowError("the COPY ended inside a row"));
  }

  /**
   * Finishes the row at `row` in place, once all its bytes are there: the payer and caller checksummed, CRLF at its
   * end. Returns where the next row begins, or INCOMPLETE (nothing written). The bytes are read by a loop of our own:
   * a row is a few hundred bytes, and Buffer's indexOf costs more per call than the loop per field.
   */
  private finishRow(bytes: Buffer, row: number): number {
    const length = bytes.length;
    let at = row;
    for (let field = 0; field < FIELDS_BEFORE_PAYER; field++) {
      let quoted = false;
      while (at < length && (quoted || bytes[at] !== COMMA)) {
        if (bytes[at] === QUOTE) quoted = !quoted;
        at++;
      }
      if (at === length) return INCOMPLETE;
      at++;
    }
    const payer = at;
    const caller = payer + ADDRESS_BYTES + 1;
    if (caller >= length) return INCOMPLETE;
    const callerEnd = bytes[caller] === COMMA ? caller : caller + ADDRESS_BYTES;
    if (callerEnd >= length) return INCOMPLETE;
    if (bytes[caller - 1] !== COMMA || bytes[callerEnd] !== COMMA) throw new CopyRowError("a payer or caller");
    // The line's end: the first line feed outside quotes (a request id or note may hold one). A quote inside a
    // quoted field is doubled, so counting them says whether a line feed is inside one.
    let lineFeed = callerEnd + 1;
    let quoted = false;
    while (lineFeed < length && (quoted || bytes[lineFeed] !== LINE_FEED)) {
      if (bytes[lineFeed] === QUOTE) quoted = !quoted;
      lineFeed++;
    }
    if (lineFeed === length) return INCOMPLETE;
    // The note's last byte, a space, becomes the carriage return; in a quoted note, the closing quote moves onto it.
    if (bytes[lineFeed - 1] === SPACE) {
      bytes[lineFeed - 1] = CARRIAGE_RETURN;
    } else if (bytes[lineFeed - 1] === QUOTE && bytes[lineFeed - 2] === SPACE) {
      bytes[lineFeed - 2] = QUOTE;
      bytes[lineFeed - 1] = CARRIAGE_RETURN;
    } else {
      throw new CopyRowError("a note without its closing space");
    }
    bytes.write(checksumOf(bytes.toString("latin1", payer, payer + ADDRESS_BYTES)), payer, "latin1");
    if (callerEnd !== caller) bytes.write(checksumOf(bytes.toString("latin1", caller, callerEnd)), caller, "latin1");
    return lineFeed + 1;
  }
}

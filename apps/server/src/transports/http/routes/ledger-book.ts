/**
 * The ledger's book as the operator routes hand it out (transports/http/routes/operator.ts): entries in their wire form, the opaque
 * position where a page ends, and an export written page after page at the pace the caller reads it.
 */
import { once } from "node:events";
import type { Writable } from "node:stream";
import { csvField, isoDateTimeSchema, type LedgerEntry } from "@agent-tools/schema";
import { type Address, getAddress } from "viem";
import { ServiceError } from "../../../errors/service-error.js";
import type { BookPosition, CsvBookRecord, SettledRow } from "../../../store/settlement-ledger.js";

/** Rows of the book per page of an export: a bounded amount in memory whatever the window holds. */
export const EXPORT_PAGE_ROWS = 5000;

/**
 * Checksummed addresses by the text the store keeps. A book repeats a few thousand payers and one asset; viem's own
 * cache reorders itself on every read, which took most of an export's time (docs/testing.md, "The ledger at ten
 * million entries"). Emptied when full.
 */
const checksummed = new Map<string, Address>();
export function checksumOf(address: string): Address {
  let known = checksummed.get(address);
  if (known === undefined) {
    if (checksummed.size >= 100_000) checksummed.clear();
    known = getAddress(address);
    checksummed.set(address, known);
  }
  return known;
}

/** A book row (a settled payment or a refund) as the wire writes it. */
export function ledgerEntryOf(row: SettledRow): LedgerEntry {
  return {
    kind: row.kind,
    route: row.route,
    method: row.method,
    tokenId: row.tokenId,
    payer: checksumOf(row.payer),
    caller: row.caller ? checksumOf(row.caller) : null,
    pricePoint: row.pricePoint,
    amount: row.amount,
    asset: checksumOf(row.asset),
    network: row.network,
    nonce: row.nonce,
    transaction: row.transaction,
    cumulative: row.cumulative,
    ceiling: row.ceiling,
    work: row.work,
    settledAt: row.settledAt,
    requestId: row.requestId,
    note: row.note,
  };
}

/**
 * The lines of a CSV page of the export (see CsvBookRecord), as `ledgerCsvLine` writes the book's entries, in the
 * asset and network of its range.
 */
export function csvLinesOf(rows: CsvBookRecord[], of: { asset: string; network: string }): string {
  const assetNetwork = `${checksumOf(of.asset)},${of.network},`;
  let text = "";
  for (const [head, route, mid, payer, caller, amounts, nonceTransactionCumulative, requestId, note] of rows) {
    text +=
      `${head}${csvField(route)}${mid}${checksumOf(payer)},${caller === null ? "" : checksumOf(caller)}${amounts}` +
      `${assetNetwork}${nonceTransactionCumulative}${csvField(requestId)},${note === null ? "" : csvField(note)}\r\n`;
  }
  return text;
}

/** Where a CSV page's row is in the book: its time begins the line. */
export function csvPositionOf(row: CsvBookRecord): BookPosition {
  return { settledAt: row[0].slice(0, row[0].indexOf(",")), key: row[9] };
}

/** A page's `next`: the last row's position, opaque to the caller. */
export function cursorOf(position: BookPosition): string {
  return Buffer.from(`${position.settledAt}|${position.key}`).toString("base64url");
}

/** The position a page's `next` names; a 400 naming `after` when it names none. */
export function positionOf(cursor: string): BookPosition {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const bar = text.indexOf("|");
  const time = text.slice(0, bar);
  // A time as the wire writes one, not whatever a date parser takes: one beyond the database's range was a 500.
  if (bar < 0 || !isoDateTimeSchema.safeParse(time).success || bar === text.length - 1) {
    throw new ServiceError("invalid_request", "The query is invalid: after: must be the `next` of a previous page.", [
      { field: "after", message: "must be the `next` of a previous page" },
    ]);
  }
  return { settledAt: new Date(time).toISOString(), key: text.slice(bar + 1) };
}

export interface WriteBookParameters<Row> {
  out: Writable;
  /** A page of the book: at most `limit` rows after `after`, in book order. */
  readPage: (after: BookPosition | undefined, limit: number) => Promise<Row[]>;
  /** Where the last row of a full page is in the book: the next page is read after it. */
  positionOf: (row: Row) => BookPosition;
  /** The text of consecutive rows of a page. */
  render: (rows: Row[]) => string;
  pageRows?: number;
}

/** Rows of a page rendered and written at a time, between which the next page is read off the database's socket. */
const SLICE_ROWS = 500;

/**
 * Writes the book page after page. The next page is read while this one is rendered and written, and taken only once
 * the caller has taken this one (the socket drained): the database and this process work at once, memory holds two
 * pages whatever the window holds, and a caller gone away stops the reading. A page is rendered a slice at a time,
 * letting the next page's rows in between: rendered at once, the database's socket filled while this process was
 * busy and the database waited (docs/decisions.md, "The CSV export in pieces (PGlite)").
 */
export async function writeBook<Row>({
  out,
  readPage,
  positionOf,
  render,
  pageRows = EXPORT_PAGE_ROWS,
}: WriteBookParameters<Row>): Promise<void> {
  const read = (after: BookPosition | undefined) => {
    const page = readPage(after, pageRows);
    // Its failure is met where the page is awaited, or not at all when the caller has gone: never left unhandled.
    page.catch(() => {});
    return page;
  };
  let reading: Promise<Row[]> | undefined = read(undefined);
  while (reading !== undefined) {
    const rows = await reading;
    reading = undefined;
    if (out.destroyed) return;
    const last = rows.at(-1);
    if (last !== undefined && rows.length === pageRows) reading = read(positionOf(last));
    let taken = true;
    for (let start = 0; start < rows.length; start += SLICE_ROWS) {
      if (start > 0) {
        await new Promise((resolve) => setImmediate(resolve));
        if (out.destroyed) return;
      }
      taken = out.write(render(rows.slice(start, start + SLICE_ROWS)));
    }
    if (!taken) {
      // Both waits are taken off the stream once either ends: an export of thousands of pages would otherwise leave
      // a listener per page on the answer.
      const waits = new AbortController();
      await Promise.race([
        once(out, "drain", { signal: waits.signal }),
        once(out, "close", { signal: waits.signal }),
      ]).finally(() => waits.abort());
      if (out.destroyed) return;
    }
  }
}

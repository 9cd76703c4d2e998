/**
 * The ledger's book as the operator routes hand it out (routes/operator.ts): entries in their wire form, the opaque
 * position where a page ends, and an export written page after page at the pace the caller reads it.
 */
import { once } from "node:events";
import type { Writable } from "node:stream";
import { isoDateTimeSchema, type LedgerEntry } from "@agent-tools/schema";
import { type Address, getAddress } from "viem";
import { HttpError } from "../http/errors.js";
import type { BookPosition, BookRow, SettledRow } from "../store/settlement-ledger.js";

/** Rows of the book per page of an export: a bounded amount in memory whatever the window holds. */
export const EXPORT_PAGE_ROWS = 5000;

/**
 * Checksummed addresses by the text the store keeps. A book repeats a few thousand payers and one asset; viem's own
 * cache reorders itself on every read, which took most of an export's time (docs/testing.md, "The ledger at ten
 * million entries"). Emptied when full.
 */
const checksummed = new Map<string, Address>();
function checksumOf(address: string): Address {
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
    settledAt: row.settledAt,
    requestId: row.requestId,
    note: row.note,
  };
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
    throw new HttpError("invalid_request", "The query is invalid: after: must be the `next` of a previous page.", [
      { field: "after", message: "must be the `next` of a previous page" },
    ]);
  }
  return { settledAt: new Date(time).toISOString(), key: text.slice(bar + 1) };
}

export interface WriteBookParameters {
  out: Writable;
  /** A page of the book: at most `limit` rows after `after`, in book order. */
  readPage: (after: BookPosition | undefined, limit: number) => Promise<BookRow[]>;
  /** The text of a page's rows. */
  render: (rows: BookRow[]) => string;
  pageRows?: number;
}

/**
 * Writes the book page after page. The next page is read while this one is rendered and written, and taken only once
 * the caller has taken this one (the socket drained): the database and this process work at once, memory holds two
 * pages whatever the window holds, and a caller gone away stops the reading.
 */
export async function writeBook({
  out,
  readPage,
  render,
  pageRows = EXPORT_PAGE_ROWS,
}: WriteBookParameters): Promise<void> {
  const read = (after: BookPosition | undefined) => {
    const page = readPage(after, pageRows);
    // Its failure is met where the page is awaited, or not at all when the caller has gone: never left unhandled.
    page.catch(() => {});
    return page;
  };
  let reading: Promise<BookRow[]> | undefined = read(undefined);
  while (reading !== undefined) {
    const rows = await reading;
    reading = undefined;
    if (out.destroyed) return;
    const last = rows.at(-1);
    if (last !== undefined && rows.length === pageRows) reading = read(last);
    if (rows.length > 0 && !out.write(render(rows))) {
      await Promise.race([once(out, "drain"), once(out, "close")]);
      if (out.destroyed) return;
    }
  }
}

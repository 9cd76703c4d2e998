/**
 * The CSV export's lines (`ledgerCsvLine`, packages/schema) read back by csv-parse, a published RFC 4180 parser, not
 * by our own: every column holds its entry's field, whatever a caller put in a request id or an operator in a note.
 */
import { exactUsd, LEDGER_CSV_COLUMNS, type LedgerEntry, ledgerCsvHeader, ledgerCsvLine } from "@agent-tools/schema";
import { parse } from "csv-parse/sync";
import fc from "fast-check";
import { type Address, getAddress, type Hex, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { csvText } from "./helpers/csv-text.js";

const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => getAddress(toHex(b)) as Address);
const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => toHex(b) as Hex);
const entry: fc.Arbitrary<LedgerEntry> = fc.record({
  kind: fc.constantFrom("payment", "refund"),
  route: fc.constantFrom("/intel", "/drop-radar", "/dispatch"),
  method: fc.constantFrom("GET", "POST", "MCP", "A2A"),
  tokenId: fc.integer({ min: 1, max: 6666 }),
  payer: address,
  caller: fc.option(address, { nil: null }),
  pricePoint: fc.constantFrom("standard", "discounted"),
  amount: fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String),
  asset: address,
  network: fc.constantFrom("eip155:8453", "eip155:31338"),
  nonce: bytes32,
  transaction: bytes32,
  cumulative: fc.option(fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String), { nil: null }),
  ceiling: fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String),
  work: fc.option(
    fc.record({
      upstreamReads: fc.nat({ max: 10_000 }),
      itemsExamined: fc.nat({ max: 10_000 }),
      blocksScanned: fc.nat({ max: 10_000_000 }),
    }),
    { nil: null },
  ),
  settledAt: fc
    .integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2100, 0, 1) })
    .map((ms) => new Date(ms).toISOString()),
  requestId: csvText,
  note: fc.option(csvText, { nil: null }),
});

/** What a spreadsheet shows for a text field: a formula's first character guarded by an apostrophe. */
const shown = (value: string) => (/^[=+\-@\t\r]/.test(value) ? `'${value}` : value);

describe("the CSV export's lines", () => {
  it("read back by csv-parse, hold each field of their entry under its column", () => {
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 5 }), (entries) => {
        const rows: Record<string, string>[] = parse(ledgerCsvHeader + entries.map(ledgerCsvLine).join(""), {
          columns: true,
          relax_column_count: false,
        });
        expect(rows).toHaveLength(entries.length);
        rows.forEach((row, i) => {
          const e = entries[i]!;
          const sign = e.kind === "refund" && e.amount !== "0" ? "-" : "";
          expect(Object.keys(row)).toEqual([...LEDGER_CSV_COLUMNS]);
          expect(row).toEqual({
            settledAt: e.settledAt,
            kind: e.kind,
            route: e.route,
            method: e.method,
            tokenId: String(e.tokenId),
            payer: e.payer,
            caller: e.caller ?? "",
            pricePoint: e.pricePoint,
            amount: `${sign}${e.amount}`,
            usd: `${sign}${exactUsd(e.amount)}`,
            asset: e.asset,
            network: e.network,
            nonce: e.nonce,
            transaction: e.transaction,
            cumulative: e.cumulative ?? "",
            ceiling: e.ceiling,
            work: e.work
              ? `upstreamReads:${e.work.upstreamReads} itemsExamined:${e.work.itemsExamined} blocksScanned:${e.work.blocksScanned}`
              : "",
            requestId: shown(e.requestId),
            note: e.note === null ? "" : shown(e.note),
          });
        });
      }),
      { numRuns: 500 },
    );
  });
});

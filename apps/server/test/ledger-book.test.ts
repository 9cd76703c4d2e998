/**
 * The operator's whole book: every settled payment of a window, page by page (`GET /operator/ledger/entries`) and as
 * a CSV or JSON Lines export (`GET /operator/ledger/export`). The CSV is read with csv-parse, not with the service's
 * own writer, and its total held against the chain's transfers to the payee.
 */
import { once } from "node:events";
import { PassThrough } from "node:stream";
import { usdTokenAbi } from "@agent-tools/contracts";
import {
  LEDGER_CSV_COLUMNS,
  LEDGER_ENTRIES_PATH,
  LEDGER_EXPORT_PATH,
  type LedgerEntry,
  ledgerEntrySchema,
  ledgerPageSchema,
  ledgerReportSchema,
} from "@agent-tools/schema";
import { parse } from "csv-parse/sync";
import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeBook } from "../src/routes/ledger-book.js";
import type { BookRow } from "../src/store/settlement-ledger.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";

let t: PaidTestServer;
let fromBlock: bigint;
const account = (index: number): Address => t.devnet.deployment.accounts[index]!.address;
const today = () => new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  t = await startPaidTestServer();
  fromBlock = await t.devnet.l2.publicClient.getBlockNumber();
  // Real paid calls: four anonymous ones at the standard price, two signed-in holders at the holder price. One
  // request id starts like a spreadsheet formula.
  for (const payer of [3, 4, 5, 6]) {
    const res = await t.post(
      "/intel",
      { tokenId: 7 },
      {
        "PAYMENT-SIGNATURE": await t.pay(payer, await t.quote({ path: "/intel", body: { tokenId: 7 } })),
        ...(payer === 3 ? { "X-Request-Id": "-A1" } : {}),
      },
    );
    expect(res.status).toBe(200);
  }
  for (const holder of [1, 2]) {
    const headers = { "SIGN-IN-WITH-X": await t.signIn(holder, "/intel") };
    const quote = await t.quote({ path: "/intel", body: { tokenId: holder }, headers });
    const res = await t.post(
      "/intel",
      { tokenId: holder },
      { "SIGN-IN-WITH-X": await t.signIn(holder, "/intel"), "PAYMENT-SIGNATURE": await t.pay(holder, quote) },
    );
    expect(res.status).toBe(200);
  }
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/** A GET of an operator path, signed in as the operator (account 0) for it. */
async function asOperator(path: string, query: string): Promise<Response> {
  return t.get(`${path}${query}`, { "SIGN-IN-WITH-X": await t.signIn(0, path) });
}

/** The chain's word: transfers of the payment asset to the payee since the file began. */
async function transfersToPayee(): Promise<{ count: number; amount: bigint; transactions: Set<string> }> {
  const logs = await t.devnet.l2.publicClient.getContractEvents({
    address: t.config.payment.asset as Address,
    abi: usdTokenAbi,
    eventName: "Transfer",
    args: { to: t.config.payment.payTo as Address },
    fromBlock,
  });
  return {
    count: logs.length,
    amount: logs.reduce((sum, log) => sum + (log.args.value ?? 0n), 0n),
    transactions: new Set(logs.map((log) => log.transactionHash)),
  };
}

describe("GET /operator/ledger/export", () => {
  it("exports the window as CSV that a CSV reader takes, whose total is the chain's transfers to the payee", async () => {
    const res = await asOperator(LEDGER_EXPORT_PATH, `?from=${today()}&to=${today()}&format=csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="ledger-${today()}-${today()}.csv"`);
    const records: Record<string, string>[] = parse(await res.text(), { columns: true });
    expect(Object.keys(records[0]!)).toEqual([...LEDGER_CSV_COLUMNS]);

    const chain = await transfersToPayee();
    expect(records).toHaveLength(chain.count);
    expect(records.reduce((sum, r) => sum + BigInt(r.amount!), 0n)).toBe(chain.amount);
    expect(new Set(records.map((r) => r.transaction))).toEqual(chain.transactions);
    // The USD column is exact, so an accountant's sum of it is the chain's too.
    const cents = records.reduce((sum, r) => sum + BigInt(r.usd!.replace(".", "")), 0n);
    expect(cents).toBe(chain.amount);
    expect(records.filter((r) => r.pricePoint === "discounted").map((r) => r.usd)).toEqual(["0.010000", "0.010000"]);
    // Oldest first; an anonymous call has no caller; a request id a spreadsheet would run is written as text.
    const times = records.map((r) => Date.parse(r.settledAt!));
    expect(times).toEqual(times.toSorted((a, b) => a - b));
    expect(records.find((r) => r.payer === account(4))).toMatchObject({ caller: "", route: "/intel" });
    expect(records.find((r) => r.payer === account(3))!.requestId).toBe("'-A1");
  });

  it("exports the same entries as JSON Lines, one LedgerEntry per line", async () => {
    const csv: Record<string, string>[] = parse(await (await asOperator(LEDGER_EXPORT_PATH, "?format=csv")).text(), {
      columns: true,
    });
    const res = await asOperator(LEDGER_EXPORT_PATH, "?format=jsonl");
    expect(res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    const lines = (await res.text()).split("\n");
    expect(lines.pop()).toBe("");
    const entries = lines.map((line) => ledgerEntrySchema.parse(JSON.parse(line)));
    expect(entries.map((e) => e.transaction)).toEqual(csv.map((r) => r.transaction));
  });

  it("asks for the operator's sign-in made for the export, and names a bad format", async () => {
    expect((await t.get(LEDGER_EXPORT_PATH)).status).toBe(401);
    const notOperator = await t.get(LEDGER_EXPORT_PATH, { "SIGN-IN-WITH-X": await t.signIn(2, LEDGER_EXPORT_PATH) });
    expect(notOperator.status).toBe(403);
    // A sign-in made for the report does not open the export.
    const elsewhere = await t.get(LEDGER_EXPORT_PATH, { "SIGN-IN-WITH-X": await t.signIn(0, "/operator/ledger") });
    expect(elsewhere.status).toBe(401);
    const bad = await asOperator(LEDGER_EXPORT_PATH, "?format=xlsx");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { details: { field: string }[] } }).error.details[0]!.field).toBe("format");
  });
});

describe("GET /operator/ledger/entries", () => {
  /** Settled rows written straight into the book, one per millisecond from `start`, for the paging tests. */
  async function insertSettled(count: number, start: Date, prefix: string): Promise<void> {
    await t.db.query(
      `INSERT INTO settlements (payment_key, payer, nonce, asset, network, pay_to, amount, valid_before, claimed_at,
         status, route, method, token_id, caller, price_point, transaction, settled_at, request_id)
       SELECT $1 || i, $2, $1 || i, $3, $4, $5, 10000, now(), now(), 'settled', '/intel', 'POST', 1, $2,
         'discounted', '0x' || lpad(to_hex(i), 64, '0'), $6::timestamptz + i * interval '1 millisecond', $1 || i
       FROM generate_series(1, $7::int) AS i`,
      [prefix, account(1), t.config.payment.asset, t.config.payment.network, t.config.payment.payTo, start, count],
    );
  }

  /** Every page of a window, read with a fresh sign-in each; `between` runs after each page. */
  async function allPages(query: string, between: (page: number) => Promise<void> = async () => {}) {
    const entries: LedgerEntry[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const res = await asOperator(LEDGER_ENTRIES_PATH, `${query}&limit=1000${after ? `&after=${after}` : ""}`);
      expect(res.status).toBe(200);
      const page = ledgerPageSchema.parse(await res.json());
      entries.push(...page.entries);
      after = page.next;
      pages += 1;
      await between(pages);
    } while (after);
    return { entries, pages };
  }

  it("pages through 10,000 entries of a day completely, each once, while payments keep being settled", async () => {
    const day = "2026-01-15";
    await insertSettled(10_000, new Date(`${day}T08:00:00Z`), "book-a-");
    // While the operator pages, more payments are settled, after the pages read so far: they come in later pages.
    const { entries, pages } = await allPages(`?from=${day}&to=${day}`, async (page) => {
      if (page === 3) await insertSettled(50, new Date(`${day}T20:00:00Z`), "book-b-");
    });
    expect(pages).toBe(11);
    const keys = entries.map((e) => e.requestId);
    expect(new Set(keys).size).toBe(keys.length);
    for (let i = 1; i <= 10_000; i += 1) if (!keys.includes(`book-a-${i}`)) expect.fail(`book-a-${i} is missing`);
    expect(keys.filter((k) => k.startsWith("book-b-"))).toHaveLength(50);
    // The report's totals for the day agree with the pages.
    const report = ledgerReportSchema.parse(
      await (await asOperator("/operator/ledger", `?from=${day}&to=${day}`)).json(),
    );
    expect(report.total.payments).toBe(entries.length);
    expect(report.byDayRouteAndPricePoint).toEqual([
      expect.objectContaining({ day, route: "/intel", pricePoint: "discounted", payments: entries.length }),
    ]);
  }, 120_000);

  it("names a cursor it did not give: 400 on `after`", async () => {
    const res = await asOperator(LEDGER_ENTRIES_PATH, "?after=bm90LWEtY3Vyc29y");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { details: { field: string }[] } }).error.details[0]!.field).toBe("after");
  });
});

describe("writeBook", () => {
  it("reads the next page only once the caller has taken the last one, and stops when the caller goes", async () => {
    const row = (i: number): BookRow => ({
      key: `k${i}`,
      route: "/intel",
      method: "POST",
      tokenId: 1,
      payer: account(1),
      caller: null,
      pricePoint: "standard",
      amount: "1000000",
      asset: t.config.payment.asset,
      network: t.config.payment.network,
      transaction: `0x${"0".repeat(64)}`,
      settledAt: new Date(i),
      requestId: `r${i}`,
    });
    let reads = 0;
    // A caller that reads nothing until told: its buffers hold less than a page.
    const out = new PassThrough({ highWaterMark: 16 });
    const writing = writeBook({
      out,
      // An endless book: only the caller's pace can hold the writer back.
      readPage: async (after) => {
        reads += 1;
        const start = after ? after.settledAt.getTime() + 1 : 0;
        return Array.from({ length: 10 }, (_, i) => row(start + i));
      },
      render: (rows) => rows.map((r) => `${r.requestId}\n`).join(""),
      pageRows: 10,
    });
    await once(out, "readable");
    // Everything queued so far has run: the writer waits for the caller, having read one page.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(reads).toBe(1);
    // The caller takes the page: the writer reads the next one, and waits again.
    while (out.read() !== null) {}
    await once(out, "readable");
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(reads).toBe(2);
    out.destroy();
    await writing;
    expect(reads).toBe(2);
  });
});

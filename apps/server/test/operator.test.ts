/**
 * The operator's routes on one service with real paid calls:
 * - refunds the operator made, booked as the chain shows them (`POST /operator/refunds`): real transfers from the
 *   payee back to payers, and every way of naming a wrong one;
 * - the whole book, every payment and refund of a window, page by page (`GET /operator/ledger/entries`) and as a CSV
 *   or JSON Lines export (`GET /operator/ledger/export`), the CSV read with csv-parse, not with the service's own
 *   writer, and its total held against the chain's transfers to and from the payee;
 * - the operator console (`/operator`) in a real Chromium (Debian's), with a test wallet injected as
 *   `window.ethereum` (EIP-1193) that signs with a devnet key in the test: the operator signs in, sees the charts and
 *   the latest payments, downloads the export; another wallet is refused. And without a wallet, from the one-time
 *   link `agent-tools console` prints: signed in once, a used, expired or another key's link refused in a sentence.
 *   Screenshots are kept in test-results/;
 * - sharing that browser and service, the API reference page at `/`.
 */
import { once } from "node:events";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { usdTokenAbi } from "@agent-tools/contracts";
import {
  LEDGER_CSV_COLUMNS,
  LEDGER_ENTRIES_PATH,
  LEDGER_EXPORT_PATH,
  type LedgerEntry,
  ledgerEntrySchema,
  ledgerPageSchema,
  ledgerReportSchema,
  OPERATOR_OVERVIEW_PATH,
  OPERATOR_SESSION_PATH,
  operatorConsoleLink,
  operatorOverviewSchema,
  operatorSessionStateSchema,
  REFUNDS_PATH,
  recordedRefundSchema,
} from "@agent-tools/schema";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { parse } from "csv-parse/sync";
import { type Browser, chromium, type Page } from "playwright-core";
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BookRow } from "../src/store/settlement-ledger.js";
import { writeBook } from "../src/transports/http/routes/ledger-book.js";
import { type PaidTestServer, PUBLIC_URL, startPaidTestServer } from "./helpers/paid-server.js";
import { x402ChannelPayer } from "./helpers/x402-payer.js";

const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SCREENSHOTS = fileURLToPath(new URL("../test-results/operator-console/", import.meta.url));

let t: PaidTestServer;
let browser: Browser;
let fromBlock: bigint;
/** The paid calls made: their transactions and amounts. */
const paid: { transaction: string; amount: bigint }[] = [];
/** The refunds booked: their transactions and amounts. */
const refunds: { transaction: string; amount: bigint }[] = [];
const account = (index: number): Address => t.devnet.deployment.accounts[index]!.address;
const today = () => new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  t = await startPaidTestServer();
  fromBlock = await t.devnet.l2.publicClient.getBlockNumber();
  // Real paid calls: four anonymous ones at the standard price, two signed-in holders at the holder price. One
  // request id starts like a spreadsheet formula.
  const record = (res: Response, amount: string) => {
    expect(res.status).toBe(200);
    paid.push({
      transaction: decodePaymentResponseHeader(res.headers.get("payment-response")!).transaction,
      amount: BigInt(amount),
    });
  };
  for (const payer of [3, 4, 5, 6]) {
    const quote = await t.quote({ path: "/intel", body: { tokenId: 7 } });
    const res = await t.post(
      "/intel",
      { tokenId: 7 },
      { "PAYMENT-SIGNATURE": await t.pay(payer, quote), ...(payer === 3 ? { "X-Request-Id": "-A1" } : {}) },
    );
    record(res, quote.accepts[0]!.amount);
  }
  for (const holder of [1, 2]) {
    const headers = { "SIGN-IN-WITH-X": await t.signIn(holder, "/intel") };
    const quote = await t.quote({ path: "/intel", body: { tokenId: holder }, headers });
    const res = await t.post(
      "/intel",
      { tokenId: holder },
      { "SIGN-IN-WITH-X": await t.signIn(holder, "/intel"), "PAYMENT-SIGNATURE": await t.pay(holder, quote) },
    );
    record(res, quote.accepts[0]!.amount);
  }
  if (!existsSync(executablePath)) {
    throw new Error(`No Chromium at ${executablePath}: install Debian's chromium package or set CHROMIUM_PATH.`);
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A GET of an operator path, signed in as the operator (account 0) for it. */
async function asOperator(path: string, query: string): Promise<Response> {
  return t.get(`${path}${query}`, { "SIGN-IN-WITH-X": await t.signIn(0, path) });
}

/** The chain's word: transfers of the payment asset to the payee (or from it) since the file began. */
async function transfersOfPayee(
  direction: "to" | "from" = "to",
): Promise<{ count: number; amount: bigint; transactions: Set<string> }> {
  const logs = await t.devnet.l2.publicClient.getContractEvents({
    address: t.config.payment.asset as Address,
    abi: usdTokenAbi,
    eventName: "Transfer",
    args: { [direction]: t.config.payment.payTo as Address },
    fromBlock,
  });
  return {
    count: logs.length,
    amount: logs.reduce((sum, log) => sum + (log.args.value ?? 0n), 0n),
    transactions: new Set(logs.map((log) => log.transactionHash)),
  };
}

/** A transfer of the payment asset from devnet account `from` (0 is the payee), mined; its transaction hash. */
async function transfer(from: number, to: Address, amount: bigint): Promise<Hex> {
  const hash = await t.devnet.l2.walletClient(from).writeContract({
    address: t.config.payment.asset as Address,
    abi: usdTokenAbi,
    functionName: "transfer",
    args: [to, amount],
  });
  await t.devnet.l2.publicClient.waitForTransactionReceipt({ hash });
  return hash;
}

/** A POST of a refund, signed in as devnet account `signer` (the operator by default) for it. */
async function postRefund(body: unknown, signer = 0): Promise<Response> {
  return t.post(REFUNDS_PATH, body, { "SIGN-IN-WITH-X": await t.signIn(signer, REFUNDS_PATH) });
}

/** The book's entry of a paid call. */
async function entryOf(transaction: string): Promise<LedgerEntry> {
  const page = ledgerPageSchema.parse(await (await asOperator(LEDGER_ENTRIES_PATH, "?limit=1000")).json());
  return page.entries.find((e) => e.kind === "payment" && e.transaction === transaction)!;
}

const errorOf = async (res: Response) =>
  ((await res.json()) as { error: { code: string; message: string; details: { field: string }[] } }).error;

describe("POST /operator/refunds", () => {
  it("books a transfer from the payee back to the payer as a refund, once, and nets it in the totals", async () => {
    // Account 4 paid the standard price; the operator gives half of it back.
    const payment = await entryOf(paid[1]!.transaction);
    expect(payment).toMatchObject({ kind: "payment", payer: account(4), note: null });
    const half = BigInt(payment.amount) / 2n;
    const hash = await transfer(0, account(4), half);
    const body = { payer: payment.payer, nonce: payment.nonce, transaction: hash, note: "upstream outage" };

    const res = await postRefund(body);
    expect(res.status).toBe(201);
    const recorded = recordedRefundSchema.parse(await res.json());
    expect(recorded.refund).toMatchObject({
      kind: "refund",
      route: "/intel",
      payer: account(4),
      nonce: payment.nonce,
      amount: half.toString(),
      transaction: hash,
      requestId: payment.requestId,
      note: "upstream outage",
    });
    expect(recorded.payment).toEqual({
      amount: payment.amount,
      refunded: half.toString(),
      remaining: (BigInt(payment.amount) - half).toString(),
    });
    // Its time is the block's.
    const receipt = await t.devnet.l2.publicClient.getTransactionReceipt({ hash });
    const block = await t.devnet.l2.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    expect(Date.parse(recorded.refund.settledAt)).toBe(Number(block.timestamp) * 1000);
    refunds.push({ transaction: hash, amount: half });
    // USD to the asset's last unit, at least to the cent ("0.025", "0.05").
    const usdOf = (units: bigint) => {
      const text = String(Number(units) / 1e6);
      return (text.split(".")[1]?.length ?? 0) >= 2 ? text : Number(text).toFixed(2);
    };
    const left = BigInt(payment.amount) - half;
    expect(recorded.brief).toBe(
      `Recorded: a refund of ${usdOf(half)} USD to ${account(4)} for /intel (transaction ${hash}); ` +
        `${usdOf(left)} USD of the payment's ${usdOf(BigInt(payment.amount))} USD left to give back.`,
    );

    // Sent again (a retry): the same refund, not a second one.
    const again = await postRefund(body);
    expect(again.status).toBe(200);
    const repeated = recordedRefundSchema.parse(await again.json());
    expect(repeated.refund).toEqual(recorded.refund);
    expect(repeated.brief).toMatch(/^Already recorded: /);

    const report = ledgerReportSchema.parse(await (await asOperator("/operator/ledger", "?limit=50")).json());
    const gross = paid.reduce((sum, p) => sum + p.amount, 0n);
    expect(report.total).toMatchObject({
      payments: paid.length,
      amount: gross.toString(),
      refunds: 1,
      refunded: half.toString(),
      net: (gross - half).toString(),
    });
    expect(report.entries.filter((e) => e.kind === "refund").map((e) => e.transaction)).toEqual([hash]);
    expect(report.brief).toMatch(/1 refund gave back 0\.\d\d USD: net \d+\.\d\d USD/);
  });

  it("refuses a transfer that gives back more than is left, and changes nothing", async () => {
    const payment = await entryOf(paid[1]!.transaction);
    const rest = BigInt(payment.amount) - refunds[0]!.amount;
    const hash = await transfer(0, account(4), rest + 1n);
    const res = await postRefund({ payer: payment.payer, nonce: payment.nonce, transaction: hash });
    expect(res.status).toBe(422);
    const error = await errorOf(res);
    expect(error.code).toBe("refund_exceeds_payment");
    expect(error.message).toContain(`${rest} of the payment's ${payment.amount} are left`);
    expect(error.details[0]!.field).toBe("transaction");
    const report = ledgerReportSchema.parse(await (await asOperator("/operator/ledger", "")).json());
    expect(report.total.refunds).toBe(1);
  });

  it("refuses what is not a transfer from the payee to that payer after the payment, each said", async () => {
    const payment = await entryOf(paid[1]!.transaction);
    const name = { payer: payment.payer, nonce: payment.nonce };
    const refusal = async (body: unknown) => {
      const res = await postRefund(body);
      return { status: res.status, ...(await errorOf(res)) };
    };
    // The payment's own settlement moved money to the payee, not back.
    expect(await refusal({ ...name, transaction: payment.transaction })).toMatchObject({
      status: 422,
      code: "refund_transfer_not_found",
    });
    // A transfer from the payee to someone else.
    const elsewhere = await transfer(0, account(5), 1000n);
    expect(await refusal({ ...name, transaction: elsewhere })).toMatchObject({
      status: 422,
      code: "refund_transfer_not_found",
    });
    // A transaction the chain has never mined.
    expect(await refusal({ ...name, transaction: `0x${"ab".repeat(32)}` })).toMatchObject({
      status: 422,
      code: "refund_transaction_not_found",
    });
    // A payment the book does not have.
    expect(await refusal({ ...name, nonce: `0x${"cd".repeat(32)}`, transaction: elsewhere })).toMatchObject({
      status: 404,
      code: "payment_not_found",
    });
    // A transfer to the payer made before the payment it is named for.
    const before = await transfer(0, account(5), 2000n);
    const quote = await t.quote({ path: "/intel", body: { tokenId: 7 } });
    const res = await t.post("/intel", { tokenId: 7 }, { "PAYMENT-SIGNATURE": await t.pay(5, quote) });
    expect(res.status).toBe(200);
    const later = decodePaymentResponseHeader(res.headers.get("payment-response")!).transaction;
    paid.push({ transaction: later, amount: BigInt(quote.accepts[0]!.amount) });
    const laterPayment = await entryOf(later);
    expect(await refusal({ payer: laterPayment.payer, nonce: laterPayment.nonce, transaction: before })).toMatchObject({
      status: 422,
      code: "refund_transfer_not_found",
    });
    // Someone else's transfer back: account 4's refund named for account 3's payment.
    const other = await entryOf(paid[0]!.transaction);
    expect(
      await refusal({ payer: other.payer, nonce: other.nonce, transaction: refunds[0]!.transaction }),
    ).toMatchObject({ status: 422, code: "refund_transfer_not_found" });
    // One transfer back to account 5, which paid twice, is booked for one of its payments only.
    const firstPayment = await entryOf(paid[2]!.transaction);
    expect(firstPayment.payer).toBe(account(5));
    const shared = await transfer(0, account(5), 1000n);
    expect(
      (await postRefund({ payer: firstPayment.payer, nonce: firstPayment.nonce, transaction: shared })).status,
    ).toBe(201);
    refunds.push({ transaction: shared, amount: 1000n });
    expect(await refusal({ payer: laterPayment.payer, nonce: laterPayment.nonce, transaction: shared })).toMatchObject({
      status: 409,
      code: "refund_taken",
    });

    const report = ledgerReportSchema.parse(await (await asOperator("/operator/ledger", "")).json());
    expect(report.total.refunds).toBe(2);
  });

  it("takes only the operator's sign-in made for it, and names a bad field", async () => {
    const payment = await entryOf(paid[1]!.transaction);
    const body = { payer: payment.payer, nonce: payment.nonce, transaction: refunds[0]!.transaction };
    expect((await t.post(REFUNDS_PATH, body)).status).toBe(401);
    expect((await postRefund(body, 4)).status).toBe(403);
    // A sign-in made for a read does not record.
    const elsewhere = await t.post(REFUNDS_PATH, body, { "SIGN-IN-WITH-X": await t.signIn(0, "/operator/ledger") });
    expect(elsewhere.status).toBe(401);
    const bad = await postRefund({ ...body, nonce: "0x12" });
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).details[0]!.field).toBe("nonce");
    const extra = await postRefund({ ...body, amount: "1" });
    expect(extra.status).toBe(400);
    const long = await postRefund({ ...body, note: "x".repeat(201) });
    expect((await errorOf(long)).details[0]!.field).toBe("note");
  });
});

describe("GET /operator/ledger/export", () => {
  it("exports the window as CSV that a CSV reader takes, whose total is the chain's transfers to and from the payee", async () => {
    const res = await asOperator(LEDGER_EXPORT_PATH, `?from=${today()}&to=${today()}&format=csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="ledger-${today()}-${today()}.csv"`);
    const records: Record<string, string>[] = parse(await res.text(), { columns: true });
    expect(Object.keys(records[0]!)).toEqual([...LEDGER_CSV_COLUMNS]);

    // Every transfer to the payee is a payment's row; the refunds are the transfers back that were booked.
    const payments = records.filter((r) => r.kind === "payment");
    const refunded = records.filter((r) => r.kind === "refund");
    const chain = await transfersOfPayee("to");
    expect(payments).toHaveLength(chain.count);
    expect(new Set(payments.map((r) => r.transaction))).toEqual(chain.transactions);
    const back = await transfersOfPayee("from");
    expect(refunded.map((r) => r.transaction).sort()).toEqual(refunds.map((r) => r.transaction).sort());
    for (const r of refunded) expect(back.transactions).toContain(r.transaction);
    // A refund's amount is negative, so the column sums to what the payee kept; the USD column is exact, so an
    // accountant's sum of it is the same.
    const kept = chain.amount - refunds.reduce((sum, r) => sum + r.amount, 0n);
    expect(records.reduce((sum, r) => sum + BigInt(r.amount!), 0n)).toBe(kept);
    const units = records.reduce((sum, r) => sum + BigInt(r.usd!.replace(".", "")), 0n);
    expect(units).toBe(kept);
    const first = refunded.find((r) => r.transaction === refunds[0]!.transaction);
    expect(first).toMatchObject({ note: "upstream outage", payer: account(4), amount: `-${refunds[0]!.amount}` });
    expect(payments.filter((r) => r.pricePoint === "discounted").map((r) => r.usd)).toEqual(["0.010000", "0.010000"]);
    // Oldest first; an anonymous call has no caller; a request id a spreadsheet would run is written as text.
    const times = records.map((r) => Date.parse(r.settledAt!));
    expect(times).toEqual(times.toSorted((a, b) => a - b));
    expect(payments.find((r) => r.payer === account(4))).toMatchObject({ caller: "", route: "/intel" });
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
       SELECT $1 || i, $2, '0x' || lpad(to_hex(i), 64, '0'), $3, $4, $5, 10000, now(), now(), 'settled', '/intel', 'POST', 1, $2,
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

  it("pages through 10,000 payments and 100 refunds of a day completely, each once, while payments keep being settled", async () => {
    const day = "2026-01-15";
    const start = new Date(`${day}T08:00:00Z`);
    await insertSettled(10_000, start, "book-a-");
    // Refunds of every hundredth payment, each at the very instant of its payment: the book orders the two by key.
    await t.db.query(
      `INSERT INTO refunds (transaction, log_index, payment_key, amount, refunded_at, book_key)
       SELECT '0x' || lpad(to_hex(j), 64, 'f'), 0, 'book-a-' || (j * 100), 5000,
         $1::timestamptz + j * 100 * interval '1 millisecond', 'refund:0x' || lpad(to_hex(j), 64, 'f') || ':0'
       FROM generate_series(1, 100) AS j`,
      [start],
    );
    // While the operator pages, more payments are settled, after the pages read so far: they come in later pages.
    const { entries, pages } = await allPages(`?from=${day}&to=${day}`, async (page) => {
      if (page === 3) await insertSettled(50, new Date(`${day}T20:00:00Z`), "book-b-");
    });
    expect(pages).toBe(11);
    const keys = entries.map((e) => `${e.kind} ${e.requestId}`);
    expect(new Set(keys).size).toBe(keys.length);
    const listed = new Set(keys);
    for (let i = 1; i <= 10_000; i += 1) if (!listed.has(`payment book-a-${i}`)) expect.fail(`book-a-${i} is missing`);
    for (let j = 1; j <= 100; j += 1) {
      if (!listed.has(`refund book-a-${j * 100}`)) expect.fail(`the refund of book-a-${j * 100} is missing`);
    }
    expect(keys.filter((k) => k.startsWith("payment book-b-"))).toHaveLength(50);
    expect(entries).toHaveLength(10_150);
    // The report's totals for the day agree with the pages.
    const report = ledgerReportSchema.parse(
      await (await asOperator("/operator/ledger", `?from=${day}&to=${day}`)).json(),
    );
    expect(report.total).toMatchObject({
      payments: 10_050,
      amount: String(10_050 * 10_000),
      refunds: 100,
      refunded: String(100 * 5000),
      net: String(10_050 * 10_000 - 100 * 5000),
      netUsd: "100.00",
    });
    expect(report.byDayRouteAndPricePoint).toEqual([
      expect.objectContaining({ day, route: "/intel", pricePoint: "discounted", payments: 10_050, refunds: 100 }),
    ]);
  }, 120_000);

  it("names a cursor it did not give: 400 on `after`", async () => {
    const res = await asOperator(LEDGER_ENTRIES_PATH, "?after=bm90LWEtY3Vyc29y");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { details: { field: string }[] } }).error.details[0]!.field).toBe("after");
    // Forged with a time a date parser takes but the book never holds: beyond the database's range, or not as the
    // service writes a time. Each is the caller's mistake, named, never a 500.
    for (const time of ["+275760-09-13T00:00:00.000Z", "2026", "Nov 27 2026"]) {
      const forged = Buffer.from(`${time}|eip3009:key`).toString("base64url");
      const answer = await asOperator(LEDGER_ENTRIES_PATH, `?after=${forged}`);
      expect(answer.status, time).toBe(400);
      expect(((await answer.json()) as { error: { details: { field: string }[] } }).error.details[0]!.field).toBe(
        "after",
      );
    }
  });
});

describe("writeBook", () => {
  const row = (i: number): BookRow => ({
    kind: "payment",
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
    nonce: `0x${"1".repeat(64)}`,
    transaction: `0x${"0".repeat(64)}`,
    cumulative: null,
    settledAt: new Date(i).toISOString(),
    requestId: `r${i}`,
    note: null,
    ceiling: "1000000",
    work: null,
  });
  it("reads one page ahead of what the caller has taken, no further, and stops when the caller goes", async () => {
    let reads = 0;
    // A caller that reads nothing until told: its buffers hold less than a page.
    const out = new PassThrough({ highWaterMark: 16 });
    const writing = writeBook({
      out,
      positionOf: (r: BookRow) => r,
      // An endless book: only the caller's pace can hold the writer back.
      readPage: async (after) => {
        reads += 1;
        const start = after ? Date.parse(after.settledAt) + 1 : 0;
        return Array.from({ length: 10 }, (_, i) => row(start + i));
      },
      render: (rows) => rows.map((r) => `${r.requestId}\n`).join(""),
      pageRows: 10,
    });
    await once(out, "readable");
    // Everything queued so far has run: the writer waits for the caller, having read the page after the one written.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(reads).toBe(2);
    // The caller takes the page: the writer writes the next one, reads the one after, and waits again.
    while (out.read() !== null) {}
    await once(out, "readable");
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(reads).toBe(3);
    out.destroy();
    await writing;
    expect(reads).toBe(3);
  });

  it("leaves no listener on the caller's stream, however many pages it waited for the caller to take", async () => {
    const out = new PassThrough({ highWaterMark: 16 });
    const before = ["close", "error", "drain"].map((event) => out.listenerCount(event));
    const writing = writeBook({
      out,
      positionOf: (r: BookRow) => r,
      readPage: async (after) => {
        const start = after ? Date.parse(after.settledAt) + 1 : 0;
        return start >= 300 ? [] : Array.from({ length: 10 }, (_, i) => row(start + i));
      },
      render: (rows) => rows.map((r) => `${r.requestId}\n`).join(""),
      pageRows: 10,
    });
    let lines = 0;
    for await (const chunk of out.iterator({ destroyOnReturn: false })) {
      lines += String(chunk).split("\n").length - 1;
      if (lines === 300) break;
    }
    await writing;
    expect(lines).toBe(300);
    expect(["close", "error", "drain"].map((event) => out.listenerCount(event))).toEqual(before);
  });

  it("ends quietly when the page read ahead fails after the caller has gone", async () => {
    const out = new PassThrough({ highWaterMark: 16 });
    let failRead: (error: Error) => void = () => {};
    let reads = 0;
    const writing = writeBook({
      out,
      positionOf: (r: BookRow) => r,
      readPage: (after) => {
        reads += 1;
        if (after === undefined) return Promise.resolve([row(0), row(1)]);
        // The page read ahead: it fails while the writer waits for the caller.
        return new Promise<BookRow[]>((_, reject) => {
          failRead = reject;
        });
      },
      // More than the caller buffers: the writer waits for it.
      render: (rows) => rows.map((r) => `${r.requestId.padEnd(20)}\n`).join(""),
      pageRows: 2,
    });
    await once(out, "readable");
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(reads).toBe(2);
    failRead(new Error("connection lost"));
    // A rejection nobody handled would fail this test (vitest reports it); the writer handles it where it awaits.
    await new Promise<void>((resolve) => setImmediate(resolve));
    out.destroy();
    await expect(writing).resolves.toBeUndefined();
  });

  it("fails when a page cannot be read while the caller is still there", async () => {
    const out = new PassThrough();
    const writing = writeBook({
      out,
      positionOf: (r: BookRow) => r,
      readPage: (after) =>
        after === undefined ? Promise.resolve([row(0), row(1)]) : Promise.reject(new Error("connection lost")),
      render: (rows) => rows.map((r) => `${r.requestId}\n`).join(""),
      pageRows: 2,
    });
    await expect(writing).rejects.toThrow("connection lost");
  });
});
/**
 * A page of the console whose browser has a wallet holding devnet account `index`: `eth_requestAccounts` gives its
 * address and `personal_sign` signs with its key, in the test, as a wallet extension would after the user approves.
 */
async function pageWithWallet(index: number, requested: string[]): Promise<Page> {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on("request", (request) => {
    requested.push(request.url());
  });
  const account = privateKeyToAccount(t.devnet.deployment.accounts[index]!.privateKey);
  await page.exposeFunction("testWallet", async (method: string, params: unknown[]) => {
    if (method === "eth_requestAccounts" || method === "eth_accounts") return [account.address];
    if (method === "personal_sign") return account.signMessage({ message: { raw: params[0] as Hex } });
    throw new Error(`the test wallet does not do ${method}`);
  });
  await page.addInitScript(() => {
    const call = (window as unknown as { testWallet: (method: string, params: unknown[]) => Promise<unknown> })
      .testWallet;
    (window as unknown as { ethereum: unknown }).ethereum = {
      request: ({ method, params }: { method: string; params?: unknown[] }) => call(method, params ?? []),
    };
  });
  await page.goto(`${t.server.url}/operator`);
  await page.waitForSelector("body[data-ready]");
  return page;
}

describe("the operator console in a real browser", () => {
  it("signs the operator in with the wallet and shows the charts and latest payments of real paid calls", async () => {
    const requested: string[] = [];
    const page = await pageWithWallet(0, requested);
    await page.click("#connect");
    await page.waitForSelector('body[data-ready="console"]');

    // The cards and the charts are drawn from the ledger the paid calls wrote.
    // Revenue is net of the refund booked above, which the table lists beside the payments.
    const total = paid.reduce((sum, p) => sum + p.amount, 0n) - refunds.reduce((sum, r) => sum + r.amount, 0n);
    expect(await page.textContent('[data-card="revenue"]')).toBe(`$${(Number(total) / 1e6).toFixed(2)}`);
    expect(await page.textContent('[data-card="payments"]')).toBe(String(paid.length));
    expect(await page.textContent("#who")).toContain(`signed in as ${account(0)}`);
    // A column for each of the 30 days of the window; today's holds the payments.
    const dayBars = page.locator('svg[data-chart="by-day"] rect');
    expect(await dayBars.count()).toBe(30);
    expect(await dayBars.last().locator("title").textContent()).toBe(
      `${new Date().toISOString().slice(0, 10)}: $${(Number(total) / 1e6).toFixed(2)}`,
    );
    const routeBars = page.locator('svg[data-chart="by-route"] rect');
    expect(await routeBars.count()).toBe(1);
    expect(await routeBars.first().locator("title").textContent()).toBe(`/intel: $${(Number(total) / 1e6).toFixed(2)}`);
    for (const { transaction } of [...paid, ...refunds]) {
      expect(await page.locator(`[data-transaction="${transaction}"]`).count(), transaction).toBe(1);
    }
    expect(
      await page.locator("tr", { has: page.locator(`[data-transaction="${refunds[0]!.transaction}"]`) }).textContent(),
    ).toContain("refund: upstream outage");
    expect(await page.locator('[data-table="upstreams"] tbody tr').count()).toBe(2);
    await page.screenshot({ path: `${SCREENSHOTS}desktop.png`, fullPage: true });

    // The export downloads the book as CSV, with the session.
    const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-export="csv"]')]);
    expect(download.suggestedFilename()).toMatch(/^ledger-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
    const records: Record<string, string>[] = parse(readFileSync((await download.path())!, "utf8"), { columns: true });
    expect(records.map((r) => r.transaction).sort()).toEqual([...paid, ...refunds].map((p) => p.transaction).sort());

    // Readable on a phone: nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await page.screenshot({ path: `${SCREENSHOTS}phone.png`, fullPage: true });

    // Everything the page loaded came from the service itself.
    expect(requested.filter((url) => !url.startsWith(t.server.url))).toEqual([]);

    // Signing out ends the session: the overview is refused again.
    await page.click("#signout");
    await page.waitForSelector("#signin:not([hidden])");
    expect(await page.evaluate(async () => (await fetch("/operator/overview")).status)).toBe(401);
    await page.context().close();
  });

  it("refuses another wallet, and shows it nothing", async () => {
    const page = await pageWithWallet(2, []);
    await page.click("#connect");
    await page.waitForFunction(() => /not the operator/.test(document.getElementById("status")?.textContent ?? ""));
    expect(await page.isHidden("#console")).toBe(true);
    expect(await page.evaluate(async () => (await fetch("/operator/overview")).status)).toBe(401);
    await page.screenshot({ path: `${SCREENSHOTS}not-operator.png` });
    await page.context().close();
  });

  it("shows the payment channels' money: deposited, charged, and owed until the claim pass", async () => {
    // Two calls over a channel of x402's own client: a deposit with the first, a voucher with the second.
    const payer = x402ChannelPayer({
      account: privateKeyToAccount(t.devnet.deployment.accounts[8]!.privateKey),
      chain: t.devnet.l2.publicClient,
      network: `eip155:${t.devnet.l2.chainId}`,
      asset: t.devnet.deployment.addresses.usdToken,
      options: { depositPolicy: { depositMultiplier: 3 } },
    });
    for (let call = 0; call < 2; call++) {
      const res = await payer.post(`${t.server.url}/intel`, { tokenId: 1 });
      expect(res.status).toBe(200);
    }
    const page = await pageWithWallet(0, []);
    await page.click("#connect");
    await page.waitForSelector('body[data-ready="console"]');
    const rows = await page.locator('[data-table="channels"] tbody tr').allTextContents();
    expect(rows).toEqual([
      "channels1",
      "deposited by payers3.00",
      // Each call charged 0.012 by its work (one agent examined) under a 1.00 ceiling; the totals are to the cent.
      "charged for answered calls0.02",
      "claimed on chain0.00",
      "swept to the payee0.00",
      "refunded to payers0.00",
      "charged, not yet claimed0.02",
    ]);
    expect(await page.locator('[data-table="channels"] .warn').textContent()).toBe("0.02");
    // A call's own amount is to the last unit, with the ceiling it was charged under and, in its title, its work.
    const charged = page.locator('span[title^="charged by the work done"]').first();
    expect(await charged.textContent()).toBe("of $1.00");
    expect(await charged.getAttribute("title")).toBe(
      "charged by the work done: 0 upstream reads, 1 items examined, 0 blocks scanned",
    );
    expect(await page.locator("td", { has: charged }).first().textContent()).toBe("$0.012 of $1.00");
    // The voucher's call is listed with the payments, its transaction the claim to come.
    expect(await page.locator('[data-transaction=""]').first().textContent()).toBe("channel, not yet claimed");
    // Its title gives the voucher's cumulative amount: the channel's charged total with this, the second call.
    expect(await page.locator('[data-transaction=""] [title]').first().getAttribute("title")).toBe(
      "paid over a channel: its transaction is the claim that takes its money; the channel's charged total with " +
        "this call: $0.024",
    );
    await page.screenshot({ path: `${SCREENSHOTS}channels.png`, fullPage: true });
    await page.context().close();
  });
});

/** A page of a browser with no wallet, as an operator's on another machine; its answers of 400 and above, listed. */
async function pageWithoutWallet(): Promise<{ page: Page; failures: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const failures: string[] = [];
  page.on("response", (response) => {
    if (response.status() >= 400)
      failures.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
  return { page, failures };
}

/**
 * The link `agent-tools console` prints for devnet account `index`, made as the SDK's `consoleLink()` makes it (a
 * sign-in for `/operator/session` at the service's public origin, in the fragment of that origin's `/operator`), and
 * opened at this server's own address, where the public origin leads in production. `issuedAt` makes a stale one.
 */
async function consoleLinkOf(index: number, overrides: { issuedAt?: string } = {}): Promise<string> {
  const link = operatorConsoleLink(PUBLIC_URL, await t.signIn(index, OPERATOR_SESSION_PATH, overrides));
  expect(link.startsWith(`${PUBLIC_URL}/operator#sign-in=`)).toBe(true);
  return link.replace(PUBLIC_URL, t.server.url);
}

/** What the page says in its status line once it says something. */
async function statusOf(page: Page): Promise<string> {
  await page.waitForFunction(() => (document.getElementById("status")?.textContent ?? "") !== "");
  return (await page.textContent("#status"))!;
}

describe("the operator console without a wallet", () => {
  it("loads signed out with no failed request, and points to the link when there is no wallet", async () => {
    const { page, failures } = await pageWithoutWallet();
    await page.goto(`${t.server.url}/operator`);
    await page.waitForSelector('body[data-ready="signin"]');
    await page.waitForLoadState("networkidle");
    expect(failures).toEqual([]);
    expect(await page.textContent("#signin")).toContain("agent-tools console --key-file operator.key");
    await page.click("#connect");
    expect(await statusOf(page)).toMatch(
      /^No wallet in this browser .* run agent-tools console --key-file operator\.key /,
    );
    await page.context().close();

    // The session as the page asks for it: 200 and none, with what a sign-in is made for: the service's public
    // origin, whatever address the request came to.
    const state = await t.get(OPERATOR_SESSION_PATH);
    expect(state.status).toBe(200);
    expect(operatorSessionStateSchema.parse(await state.json())).toEqual({
      session: null,
      signIn: { origin: PUBLIC_URL, chains: t.payments.signInChains, maxAgeSeconds: 300 },
    });
    // An API caller without credentials still gets 401 and the chains it takes.
    const overview = await t.get(OPERATOR_OVERVIEW_PATH);
    expect(overview.status).toBe(401);
    expect(overview.headers.get("www-authenticate")).toMatch(/^SIWX realm="agent-tools operator", chains="eip155:/);
  });

  it("opens the console from the operator's link, once: who is signed in, a dollar axis, the refusals counted", async () => {
    // Metrics are off here; the quotes above were refused (402 payment_required) and counted all the same.
    expect(t.config.metricsPort).toBeUndefined();
    const counted = operatorOverviewSchema.parse(await (await asOperator(OPERATOR_OVERVIEW_PATH, "")).json());
    expect(counted.refusals.payment_required).toBeGreaterThanOrEqual(6);

    const link = await consoleLinkOf(0);
    const { page, failures } = await pageWithoutWallet();
    await page.goto(link);
    await page.waitForSelector('body[data-ready="console"]');
    await page.waitForLoadState("networkidle");
    expect(failures).toEqual([]);
    // The sign-in is out of the address bar.
    expect(page.url()).toBe(`${t.server.url}/operator`);
    expect(await page.textContent("#who")).toContain(`signed in as ${account(0)}`);

    // The day chart reads without hovering: $0, half and a top just above the best day, each on a gridline.
    const axis = (await page.locator('svg[data-chart="by-day"] text.axis').allTextContents()).map((label) => {
      expect(label).toMatch(/^\$\d+\.\d{2,4}$/);
      return Number(label.slice(1));
    });
    expect(axis).toHaveLength(3);
    expect(await page.locator('svg[data-chart="by-day"] line.grid').count()).toBe(3);
    const [zero, half, top] = axis as [number, number, number];
    const best = Math.max(
      ...(await page.locator('svg[data-chart="by-day"] rect title').allTextContents()).map((title) =>
        Number(title.split(": $")[1]),
      ),
    );
    expect(zero).toBe(0);
    expect(half).toBeCloseTo(top / 2, 6);
    expect(top).toBeGreaterThanOrEqual(best);
    expect(top).toBeLessThan(best * 2);
    // The refusals by reason, as the service counted them.
    const rows = await page
      .locator('[data-table="refusals"] tbody tr')
      .evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td"), (td) => td.textContent)));
    expect(Object.fromEntries(rows)).toEqual(
      Object.fromEntries(Object.entries(counted.refusals).map(([reason, n]) => [reason, String(n)])),
    );

    const dir = mkdtempSync(join(tmpdir(), "operator-console-"));
    try {
      const desktop = join(dir, "link-desktop.png");
      await page.screenshot({ path: desktop, fullPage: true });
      const png = readFileSync(desktop);
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(png.readUInt32BE(16)).toBe(1280);
      copyFileSync(desktop, `${SCREENSHOTS}link-desktop.png`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // On a phone: nothing wider than the screen, and neither date of the revenue card's range broken over two lines.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    const dates = page.locator(".card", { has: page.locator('[data-card="revenue"]') }).locator(".nowrap");
    expect(await dates.count()).toBe(2);
    expect(await dates.evaluateAll((spans) => spans.map((span) => span.getClientRects().length))).toEqual([1, 1]);
    await page.screenshot({ path: `${SCREENSHOTS}link-phone.png`, fullPage: true });
    await page.context().close();

    // The same link again, in another browser: refused, and the page says what to do.
    const again = await pageWithoutWallet();
    await again.page.goto(link);
    expect(await statusOf(again.page)).toBe(
      "This sign-in link was already used: a link signs in once. Run agent-tools console --key-file operator.key again for a new link.",
    );
    expect(again.page.url()).toBe(`${t.server.url}/operator`);
    expect(await again.page.isHidden("#console")).toBe(true);
    expect(await again.page.isVisible("#signin")).toBe(true);
    await again.page.context().close();
  });

  it("says so when a link has expired or was made with another key, and shows nothing", async () => {
    const stale = await pageWithoutWallet();
    await stale.page.goto(await consoleLinkOf(0, { issuedAt: new Date(Date.now() - 6 * 60_000).toISOString() }));
    expect(await statusOf(stale.page)).toBe(
      "This sign-in link has expired: a link is valid for 5 minutes after it is made. Run agent-tools console --key-file operator.key again for a new link.",
    );
    expect(await stale.page.isHidden("#console")).toBe(true);
    await stale.page.context().close();

    const other = await pageWithoutWallet();
    await other.page.goto(await consoleLinkOf(2));
    expect(await statusOf(other.page)).toBe(
      `${account(2)} is not the operator of this service. Make the link with the operator's key: agent-tools console --key-file operator.key`,
    );
    expect(await other.page.isHidden("#console")).toBe(true);
    await other.page.screenshot({ path: `${SCREENSHOTS}link-not-operator.png` });
    await other.page.context().close();
  });
});

describe("the API reference page in a real browser", () => {
  it("loads with no failed request and no request leaving the server, and shows all seven tools", async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    const failed: string[] = [];
    const pageErrors: string[] = [];
    page.on("request", (request) => {
      requested.push(request.url());
    });
    page.on("requestfailed", (request) => {
      failed.push(`${request.url()} ${request.failure()?.errorText ?? ""}`);
    });
    page.on("response", (response) => {
      if (response.status() >= 400) failed.push(`${response.url()} ${response.status()}`);
    });
    page.on("pageerror", (error) => {
      pageErrors.push(error.message);
    });

    await page.goto(`${t.server.url}/`, { waitUntil: "networkidle" });
    for (const summary of [
      "Agent intel",
      "NFT drop radar",
      "B20 token radar (Base)",
      "Second-chain token radar",
      "Wallet portfolio",
      "Allowlist scan",
      "Collection offer radar",
    ]) {
      await expect.poll(() => page.getByText(summary, { exact: true }).count(), { timeout: 15_000 }).toBeGreaterThan(0);
    }
    await page.waitForLoadState("networkidle");

    const outside = requested.filter((url) => !url.startsWith(t.server.url) && !url.startsWith("data:"));
    expect(outside).toEqual([]);
    expect(failed).toEqual([]);
    expect(requested).toContain(`${t.server.url}/openapi.json`);
    expect(pageErrors).toEqual([]);
    await page.screenshot({ path: "test-results/reference-page.png", fullPage: false });
    await page.close();
  });

  it("sends nothing to another host whatever button is pressed, and offers no AI or third-party service", async () => {
    const page = await browser.newPage();
    // Nothing leaves this machine: a request to any other origin is recorded and refused. The service's public
    // origin (the page's "Test Request" sends there) is the service too, but nothing listens on it in this test.
    const service = [t.server.url, PUBLIC_URL];
    const outside: string[] = [];
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith("data:") || url.startsWith("blob:") || url.startsWith(t.server.url)) return route.continue();
      if (!service.some((origin) => url.startsWith(origin))) outside.push(url);
      return route.abort();
    });
    await page.goto(`${t.server.url}/`, { waitUntil: "networkidle" });
    await expect
      .poll(() => page.getByText("Agent intel", { exact: true }).count(), { timeout: 15_000 })
      .toBeGreaterThan(0);
    expect(await page.getByText(/Ask AI/i).count()).toBe(0);
    expect(await page.locator('a[href*="scalar.com"]:visible').count()).toBe(0);

    // Every visible button, one after another; a dialog a button opened is closed before the next one.
    const buttons = await page.locator("button:visible, [role=button]:visible").all();
    expect(buttons.length).toBeGreaterThan(10);
    let pressed = 0;
    for (const button of buttons) {
      if (!(await button.isVisible().catch(() => false))) continue;
      const clicked = await button.click({ timeout: 2000 }).then(
        () => true,
        () => false,
      );
      if (clicked) pressed++;
      await page.keyboard.press("Escape");
      if (!page.url().startsWith(t.server.url)) await page.goto(`${t.server.url}/`, { waitUntil: "networkidle" });
    }
    await page.waitForLoadState("networkidle");
    expect(pressed).toBeGreaterThan(10);
    expect(outside).toEqual([]);
    await page.close();
    // Every button of the page, one after another: seconds on an idle machine, past half a minute on a loaded one.
    // The deadline is for a page that hangs.
  }, 180_000);
});

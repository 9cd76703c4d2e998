/**
 * The operator's routes on one service with real paid calls:
 * - the whole book, every settled payment of a window, page by page (`GET /operator/ledger/entries`) and as a CSV
 *   or JSON Lines export (`GET /operator/ledger/export`), the CSV read with csv-parse, not with the service's own
 *   writer, and its total held against the chain's transfers to the payee;
 * - the operator console (`/operator`) in a real Chromium (Debian's), with a test wallet injected as
 *   `window.ethereum` (EIP-1193) that signs with a devnet key in the test: the operator signs in, sees the charts and
 *   the latest payments, downloads the export; another wallet is refused. Screenshots are kept in test-results/;
 * - sharing that browser and service, the API reference page at `/`.
 */
import { once } from "node:events";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
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
} from "@agent-tools/schema";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { parse } from "csv-parse/sync";
import { type Browser, chromium, type Page } from "playwright-core";
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeBook } from "../src/routes/ledger-book.js";
import type { BookRow } from "../src/store/settlement-ledger.js";
import { type PaidTestServer, PUBLIC_URL, startPaidTestServer } from "./helpers/paid-server.js";

const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SCREENSHOTS = fileURLToPath(new URL("../test-results/operator-console/", import.meta.url));

let t: PaidTestServer;
let browser: Browser;
let fromBlock: bigint;
/** The paid calls made before the tests: their transactions and amounts. */
const paid: { transaction: string; amount: bigint }[] = [];
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
    const total = paid.reduce((sum, p) => sum + p.amount, 0n);
    expect(await page.textContent('[data-card="revenue"]')).toBe(`$${(Number(total) / 1e6).toFixed(2)}`);
    expect(await page.textContent('[data-card="payments"]')).toBe(String(paid.length));
    // A column for each of the 30 days of the window; today's holds the payments.
    const dayBars = page.locator('svg[data-chart="by-day"] rect');
    expect(await dayBars.count()).toBe(30);
    expect(await dayBars.last().locator("title").textContent()).toBe(
      `${new Date().toISOString().slice(0, 10)}: $${(Number(total) / 1e6).toFixed(2)}`,
    );
    const routeBars = page.locator('svg[data-chart="by-route"] rect');
    expect(await routeBars.count()).toBe(1);
    expect(await routeBars.first().locator("title").textContent()).toBe(`/intel: $${(Number(total) / 1e6).toFixed(2)}`);
    for (const { transaction } of paid) {
      expect(await page.locator(`[data-transaction="${transaction}"]`).count(), transaction).toBe(1);
    }
    expect(await page.locator('[data-table="upstreams"] tbody tr').count()).toBe(2);
    await page.screenshot({ path: `${SCREENSHOTS}desktop.png`, fullPage: true });

    // The export downloads the book as CSV, with the session.
    const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-export="csv"]')]);
    expect(download.suggestedFilename()).toMatch(/^ledger-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
    const records: Record<string, string>[] = parse(readFileSync((await download.path())!, "utf8"), { columns: true });
    expect(records.map((r) => r.transaction).sort()).toEqual(paid.map((p) => p.transaction).sort());

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

/**
 * The operator console in a real Chromium (Debian's), with a test wallet injected as `window.ethereum` (EIP-1193)
 * that signs with a devnet key in the test: the operator signs in, sees the charts and the latest payments of real
 * paid calls, downloads the export; another wallet is refused. Screenshots are kept in test-results/.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { parse } from "csv-parse/sync";
import { type Browser, chromium, type Page } from "playwright-core";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";

const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SCREENSHOTS = fileURLToPath(new URL("../test-results/operator-console/", import.meta.url));

let t: PaidTestServer;
let browser: Browser;
/** The paid calls made before the console is opened: their transactions and amounts. */
const paid: { transaction: string; amount: bigint }[] = [];

beforeAll(async () => {
  if (!existsSync(executablePath)) {
    throw new Error(`No Chromium at ${executablePath}: install Debian's chromium package or set CHROMIUM_PATH.`);
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  t = await startPaidTestServer();
  // Real paid calls: two anonymous ones at the standard price, a signed-in holder at the holder price.
  const calls: [payer: number, headers: () => Promise<Record<string, string>>, tokenId: number][] = [
    [3, async () => ({}), 7],
    [4, async () => ({}), 8],
    [1, async () => ({ "SIGN-IN-WITH-X": await t.signIn(1, "/intel") }), 1],
  ];
  for (const [payer, headers, tokenId] of calls) {
    const quote = await t.quote({ path: "/intel", body: { tokenId }, headers: await headers() });
    const res = await t.post(
      "/intel",
      { tokenId },
      { ...(await headers()), "PAYMENT-SIGNATURE": await t.pay(payer, quote) },
    );
    expect(res.status).toBe(200);
    const settlement = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    paid.push({ transaction: settlement.transaction, amount: BigInt(quote.accepts[0]!.amount) });
  }
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
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

import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.js";
import { type ChainTestServer, startChainTestServer } from "./helpers/chain-server.js";

const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const PUBLIC_URL = "http://127.0.0.1:8402";

let composed: ChainTestServer;
let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(executablePath)) {
    throw new Error(`No Chromium at ${executablePath}: install Debian's chromium package or set CHROMIUM_PATH.`);
  }
  composed = await startChainTestServer({ env: { PUBLIC_URL } });
  server = composed.server;
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
  await composed?.close();
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

    await page.goto(`${server.url}/`, { waitUntil: "networkidle" });
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

    const outside = requested.filter((url) => !url.startsWith(server.url) && !url.startsWith("data:"));
    expect(outside).toEqual([]);
    expect(failed).toEqual([]);
    expect(requested).toContain(`${server.url}/openapi.json`);
    expect(pageErrors).toEqual([]);
    await page.screenshot({ path: "test-results/reference-page.png", fullPage: false });
    await page.close();
  });

  it("sends nothing to another host whatever button is pressed, and offers no AI or third-party service", async () => {
    const page = await browser.newPage();
    // Nothing leaves this machine: a request to any other origin is recorded and refused. The service's public
    // origin (the page's "Test Request" sends there) is the service too, but nothing listens on it in this test.
    const service = [server.url, PUBLIC_URL];
    const outside: string[] = [];
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith("data:") || url.startsWith("blob:") || url.startsWith(server.url)) return route.continue();
      if (!service.some((origin) => url.startsWith(origin))) outside.push(url);
      return route.abort();
    });
    await page.goto(`${server.url}/`, { waitUntil: "networkidle" });
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
      if (!page.url().startsWith(server.url)) await page.goto(`${server.url}/`, { waitUntil: "networkidle" });
    }
    await page.waitForLoadState("networkidle");
    expect(pressed).toBeGreaterThan(10);
    expect(outside).toEqual([]);
    await page.close();
    // Every button of the page, one after another: seconds on an idle machine, past half a minute on a loaded one.
    // The deadline is for a page that hangs.
  }, 180_000);
});

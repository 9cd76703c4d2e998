import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startUpstreamSims } from "../src/index.js";
import { API_KEY, getJson } from "./helpers.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

/** The command from its sources, or from `entry` (the file its package.json `bin` names). */
function startCli(
  args: string[],
  env: Record<string, string> = {},
  entry: string[] = ["--import", "tsx", "src/cli.ts"],
) {
  // The real node binary (not a shell wrapper), so signals reach the CLI itself.
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: packageDir,
    env: { ...process.env, MARKETPLACE_SIM_PORT: "", MARKET_DATA_SIM_PORT: "", UPSTREAM_SIM_LATENCY_MS: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  const waiting = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    text += chunk.toString();
    for (const check of waiting) check();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  // "close" (not "exit"): the process has ended and its output is read to the end.
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  /** Resolves as soon as the output matches `pattern`; rejects, with the output, if the process ends first. */
  const printed = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(text)) return;
        waiting.delete(check);
        resolve();
      };
      waiting.add(check);
      check();
      void exited.then(() => {
        if (waiting.delete(check)) reject(new Error(`ended before printing ${pattern}; output:\n${text}`));
      });
    });
  return { child, output: () => text, exited, printed };
}

describe("agent-tools-upstream-sim command", () => {
  let running: ChildProcess | undefined;
  afterEach(() => {
    if (running?.exitCode === null) running.kill("SIGKILL");
  });

  it("prints both base URLs, serves them, and stops cleanly on SIGTERM", async () => {
    const cli = startCli(["--marketplace-port", "0", "--market-data-port", "0"], { UPSTREAM_SIM_LATENCY_MS: "20" });
    running = cli.child;
    await cli.printed(/Press Ctrl\+C to stop/);
    const text = cli.output();
    const marketplace = /marketplace \(OpenSea API v2\)\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1];
    const marketData = /market data \(DexScreener\)\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1];
    expect(marketplace).toBeDefined();
    expect(marketData).toBeDefined();
    expect((await getJson(`${marketplace}/api/v2/drops`, API_KEY)).status).toBe(200);
    expect((await getJson(`${marketplace}/api/v2/drops`, {})).status).toBe(401);
    expect((await getJson(`${marketData}/latest/dex/search?q=WBNB`, {})).status).toBe(200);
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
  });

  it("prints usage for --help and refuses bad flags", async () => {
    const help = startCli(["--help"]);
    expect(await help.exited).toBe(0);
    expect(help.output()).toMatch(/Usage: agent-tools-upstream-sim/);
    const bad = startCli(["--latency-ms", "soon"]);
    expect(await bad.exited).toBe(2);
    expect(bad.output()).toMatch(/--latency-ms must be an integer/);
  });

  it("is linked by pnpm at install, before any build: its bin is a file of the checkout that runs the built command", async () => {
    const { bin } = JSON.parse(readFileSync(`${packageDir}/package.json`, "utf8")) as { bin: Record<string, string> };
    const path = bin["agent-tools-upstream-sim"]!;
    // Tracked by git: a fresh clone has it when pnpm links the bins (a dist/ file would not exist yet).
    expect(execFileSync("git", ["ls-files", "--error-unmatch", path], { cwd: packageDir, encoding: "utf8" })).toContain(
      path.replace(/^\.\//, ""),
    );
    const help = startCli(["--help"], {}, [path]);
    expect(await help.exited).toBe(0);
    expect(help.output()).toMatch(/Usage: agent-tools-upstream-sim/);
  });
});

describe("startUpstreamSims", () => {
  it("starts both simulators on 127.0.0.1 with a shared latency and clock, and closes them", async () => {
    const at = Date.parse("2030-06-01T12:00:00Z");
    const sims = await startUpstreamSims({ latencyMs: 30, now: () => new Date(at) });
    try {
      expect(sims.urls.marketplace).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(sims.urls.marketData).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(sims.marketplace.latencyMs).toBe(30);
      expect(sims.marketData.latencyMs).toBe(30);
      expect(sims.marketplace.now()).toBe(at);
      expect(sims.marketData.now()).toBe(at);
      expect((await getJson(`${sims.urls.marketData}/token-boosts/top/v1`, {})).status).toBe(200);
    } finally {
      await sims.close();
    }
    await expect(fetch(`${sims.urls.marketplace}/api/v2/drops`)).rejects.toThrow();
  });
});

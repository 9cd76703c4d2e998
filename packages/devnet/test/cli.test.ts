import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

/** The command from its sources, or from `entry` (the file its package.json `bin` names). */
function startCli(args: string[], entry: string[] = ["--import", "tsx", "src/cli.ts"]) {
  // The real node binary (not a shell wrapper), so signals reach the CLI itself.
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: packageDir,
    env: { ...process.env, L1_PORT: "", L2_PORT: "", PUBLIC_URL: "" },
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

describe("agent-tools-devnet command", () => {
  let running: ChildProcess | undefined;
  afterEach(() => {
    if (running?.exitCode === null) running.kill("SIGKILL");
  });

  it("prints the chains, contracts and test accounts, and stops cleanly on SIGTERM", async () => {
    const cli = startCli(["--l1-port", "0", "--l2-port", "0", "--public-url", "http://127.0.0.1:9999/", "-q"]);
    running = cli.child;
    await cli.printed(/Press Ctrl\+C to stop/);
    const text = cli.output();
    const l1 = /L1 {2}chain 31337 {2}(http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1];
    const l2 = /L2 {2}chain 31338 {2}(http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1];
    expect(l1).toBeDefined();
    expect(l2).toBeDefined();
    expect(text).toContain("0x5FbDB2315678afecb367f032d93F642f64180aa3");
    expect(text).toContain("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
    expect(text).toMatch(/DEVNET ONLY/);
    expect(text).toMatch(/Never use them on a real network/);
    expect(text).toContain("http://127.0.0.1:9999/agents/info/<id>");
    expect(text).not.toContain("seeding L1:"); // -q

    const response = await fetch(l2!, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    });
    expect(((await response.json()) as { result: string }).result).toBe("0x7a6a");

    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    expect(cli.output()).toContain("devnet stopped");
  });

  it("rejects a bad port with usage help", async () => {
    const cli = startCli(["--l1-port", "http"]);
    running = cli.child;
    expect(await cli.exited).toBe(2);
    expect(cli.output()).toMatch(/--l1-port must be a port number/);
    expect(cli.output()).toMatch(/Usage: agent-tools-devnet/);
  });

  it("is linked by pnpm at install, before any build: its bin is a file of the checkout that runs the built command", async () => {
    const { bin } = JSON.parse(readFileSync(`${packageDir}/package.json`, "utf8")) as { bin: Record<string, string> };
    const path = bin["agent-tools-devnet"]!;
    // Tracked by git: a fresh clone has it when pnpm links the bins (a dist/ file would not exist yet).
    expect(execFileSync("git", ["ls-files", "--error-unmatch", path], { cwd: packageDir, encoding: "utf8" })).toContain(
      path.replace(/^\.\//, ""),
    );
    const cli = startCli(["--l1-port", "http"], [path]);
    running = cli.child;
    expect(await cli.exited).toBe(2);
    expect(cli.output()).toMatch(/Usage: agent-tools-devnet/);
  });
});

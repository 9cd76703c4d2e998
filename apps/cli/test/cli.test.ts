import { execFile, execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/healthz")
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true,"service":"agent-tools"}');
    else res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

/** Runs the built CLI without blocking this process's event loop (which serves the fake service). */
function cli(args: string[]) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [bin, ...args], { encoding: "utf8" }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe("agent-tools health", () => {
  it("prints --version from the package", async () => {
    const result = spawnSync(process.execPath, [bin, "--version"], { encoding: "utf8" });
    expect(result.stdout.trim()).toBe("1.0.0");
  });

  it("shows examples in --help", () => {
    const result = spawnSync(process.execPath, [bin, "--help"], { encoding: "utf8" });
    expect(result.stdout).toContain("Examples:");
  });

  it("prints exactly the response with --json", async () => {
    const result = await cli(["health", "--base-url", baseUrl, "--json"]);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ok: true, service: "agent-tools" });
  });

  it("exits 5 and says what to do when the service is down", async () => {
    const result = await cli(["health", "--base-url", "http://127.0.0.1:9"]);
    expect(result.status).toBe(5);
    expect(result.stderr).toContain("Is the service running?");
  });
});

describe("messages and exit codes", () => {
  it("an unknown option says so with a one-line hint, not the whole help (exit 2)", async () => {
    const result = await cli(["intel", "--bogus"]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/unknown option '--bogus'/);
    expect(result.stderr.trim().split("\n")).toHaveLength(2);
  });

  it("a --key-file that cannot be read is a usage error that names the flag (exit 2)", async () => {
    const result = await cli(["--base-url", baseUrl, "--key-file", "/nonexistent/key", "intel", "--token-id", "1"]);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe("agent-tools: --key-file /nonexistent/key cannot be read: there is no such file.\n");
  });

  it("a field whose name ends in s keeps its flag's name; a list is named by its singular flag", async () => {
    const address = await cli(["b20-radar", "--token-id", "1", "--address", "nope"]);
    expect(address.status).toBe(2);
    expect(address.stderr).toMatch(/^agent-tools: Invalid b20-radar request:\n {2}--address: /);
    const slugs = await cli(["offer-radar", "--token-id", "5"]);
    expect(slugs.status).toBe(2);
    expect(slugs.stderr).toMatch(/^ {2}--slug: /m);
  });

  it("a mission's bad param is named as the --param typed", async () => {
    const result = await cli(["dispatch", "portfolio", "--token-id", "5", "--param", "walletAddress=nope"]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^ {2}--param walletAddress: must be a 20-byte hex address/m);
    expect(result.stderr).not.toMatch(/mission\.params/);
  });

  it("a tool's help says its summary once, and each flag in plain words", async () => {
    const portfolio = await cli(["portfolio", "--help"]);
    expect(portfolio.stdout.match(/Wallet portfolio/g)).toHaveLength(1);
    const scan = await cli(["allowlist-scan", "--help"]);
    expect(scan.stdout).not.toMatch(/specification|inverted/);
    expect(scan.stdout).toMatch(/--scan-chains\s+Also query each known chain/);
  });
});

describe("the packed CLI", () => {
  it("installs from its tarball into an empty project with nothing else, and runs", async () => {
    const temp = mkdtempSync(join(tmpdir(), "agent-tools-cli-pack-"));
    try {
      const cliDir = fileURLToPath(new URL("..", import.meta.url));
      execFileSync("npm", ["pack", "--pack-destination", temp, "--silent"], { cwd: cliDir, encoding: "utf8" });
      const tarball = readdirSync(temp).find((f) => f.endsWith(".tgz"))!;
      const project = join(temp, "project");
      mkdirSync(project);
      execFileSync("npm", ["init", "-y"], { cwd: project, encoding: "utf8" });
      // Offline: the tarball carries everything it runs; no registry is asked.
      execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", join(temp, tarball)], {
        cwd: project,
        encoding: "utf8",
      });
      const installed = join(project, "node_modules", ".bin", "agent-tools");
      expect(execFileSync(installed, ["--version"], { encoding: "utf8" }).trim()).toBe("1.0.0");
      // A command that loads the client (viem, x402): answered by this test's service.
      // Not spawnSync: this process's event loop serves the fake service the command asks.
      const health = await new Promise<string>((resolve) =>
        execFile(installed, ["--base-url", baseUrl, "health"], { encoding: "utf8" }, (_error, stdout) =>
          resolve(stdout),
        ),
      );
      expect(health).toMatch(/agent-tools at .* up/);
      expect(readdirSync(join(project, "node_modules")).filter((d) => !d.startsWith("."))).toEqual(["@agent-tools"]);
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
  }, 120_000);
});

import { execFile, spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { requestFields, toolRoutes } from "@agent-tools/sdk/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
let server: Server;
let baseUrl: string;
/** The bodies of the tool calls the fake service received. */
const posted: unknown[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/healthz")
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true,"service":"agent-tools"}');
    else if (req.method === "POST") {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        posted.push(JSON.parse(body));
        res
          .writeHead(400, { "content-type": "application/json" })
          .end('{"error":{"code":"invalid_request","message":"seen","details":[]}}');
      });
    } else res.writeHead(404).end();
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
    expect(result.stderr).toMatch(/^agent-tools: there is no option --bogus\.\n/);
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

  it("each tool's help gives every value a field takes, its default, how to turn a default off, and the global flags", async () => {
    for (const [name, route] of Object.entries(toolRoutes)) {
      const help = (await cli([route.path.slice(1), "--help"])).stdout.replace(/\s+/g, " ");
      for (const field of requestFields(route.request)) {
        const flag = field.name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
        if (field.values) expect(help, `${name} --${flag}`).toContain(`one of ${field.values.join(", ")}`);
        if (field.kind === "boolean" && field.defaultValue === true) {
          expect(help, `${name} --no-${flag}`).toContain(`--no-${flag} turn --${flag} off`);
        }
      }
      expect(help, name).toMatch(/Global Options: .*--base-url <url>.*--max-price <usd>.*--json/);
    }
  });

  it("turns a field that is on by default off with its --no- flag", async () => {
    posted.length = 0;
    const result = await cli([
      "drop-radar",
      "--base-url",
      baseUrl,
      "--token-id",
      "1",
      "--no-scan-chains",
      "--anonymous",
    ]);
    expect(result.status).toBe(2);
    expect(posted).toEqual([expect.objectContaining({ tokenId: 1, scanChains: false })]);
  });

  it("dispatch's help gives an example time still ahead, so the example schedules rather than runs at once", async () => {
    const help = await cli(["dispatch", "--help"]);
    const times = [...help.stdout.matchAll(/--run-at (\d{4}-\d\d-\d\dT[\d:]+Z)/g)].map((m) => Date.parse(m[1]!));
    expect(times.length).toBeGreaterThan(0);
    for (const time of times) {
      expect(time).toBeGreaterThan(Date.now());
      expect(time - Date.now()).toBeLessThanOrEqual(24 * 60 * 60 * 1000);
    }
  });
});

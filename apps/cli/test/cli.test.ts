import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { requestFields, toolRoutes } from "@agent-tools/sdk/contracts";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { machineNode } from "./helpers/machine-node.js";
import { stateHome } from "./helpers/state-home.js";

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
function cli(args: string[], env: Record<string, string> = {}) {
  const { AGENT_TOOLS_BASE_URL: _, ...inherited } = process.env;
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { encoding: "utf8", env: { ...inherited, ...env } },
      (error, stdout, stderr) => {
        resolve({ status: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
      },
    );
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

  it("says in --help that AGENT_TOOLS_BASE_URL sets the service when --base-url does not", () => {
    const { AGENT_TOOLS_BASE_URL: _, ...inherited } = process.env;
    const help = (env: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, [bin, "--help"], { encoding: "utf8", env }).stdout.replace(/\s+/g, " ");
    expect(help(inherited)).toContain(
      '--base-url <url> service origin (else AGENT_TOOLS_BASE_URL) (default: "http://127.0.0.1:8402")',
    );
    expect(help({ ...inherited, AGENT_TOOLS_BASE_URL: "http://127.0.0.1:8500" })).toContain(
      '(else AGENT_TOOLS_BASE_URL) (default: "http://127.0.0.1:8500")',
    );
  });

  it("prints exactly the response with --json", async () => {
    const result = await cli(["health", "--base-url", baseUrl, "--json"]);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ok: true, service: "agent-tools" });
  });

  it("exits 5 when the service is down, naming the address it tried, how to point elsewhere and how to start one", async () => {
    // A port nothing listens on: one the system just gave out, closed again.
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, "127.0.0.1", done));
    const down = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((done) => closed.close(() => done()));

    const flagged = await cli(["health", "--base-url", down]);
    expect(flagged.status).toBe(5);
    const [first, source, elsewhere, start] = flagged.stderr.trim().split("\n");
    expect(first).toBe(`agent-tools: Could not reach ${down}: nothing accepts connections there (connection refused).`);
    expect(source).toBe("This address comes from --base-url.");
    expect(elsewhere).toMatch(/pass --base-url <url> or set AGENT_TOOLS_BASE_URL \(export AGENT_TOOLS_BASE_URL=http:/);
    expect(start).toMatch(/from a checkout of the repository: pnpm start .*PORT=8500 pnpm start/);
    expect(flagged.stderr).not.toMatch(/fetch failed/);

    const fromEnv = await cli(["intel", "--token-id", "1"], { AGENT_TOOLS_BASE_URL: down });
    expect(fromEnv.status).toBe(5);
    expect(fromEnv.stderr).toContain(`Could not reach ${down}: `);
    expect(fromEnv.stderr).toContain("This address comes from AGENT_TOOLS_BASE_URL.");
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

describe("agent-tools console against the embedded default", () => {
  /** The embedded default the package's test files share (test/global-setup.ts): its own port, its PUBLIC_URL. */
  const service = attachEmbeddedService(inject("embeddedService"));
  const operator = DEVNET_ACCOUNTS[0]!;

  /** Runs the built CLI as a user does, against the service, with only `env` besides PATH. */
  function run(args: string[], env: Record<string, string> = {}) {
    return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        machineNode,
        [bin, "--base-url", service.url, ...args],
        { env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", XDG_STATE_HOME: stateHome, ...env }, encoding: "utf8" },
        (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  /** Opens a console session with a link's sign-in, as the page does: POST /operator/session with its fragment. */
  const openSession = (link: string) =>
    fetch(`${service.url}/operator/session`, {
      method: "POST",
      headers: { "SIGN-IN-WITH-X": decodeURIComponent(new URL(link).hash.replace(/^#sign-in=/, "")) },
    });

  it("prints a link to the service's console that signs the operator in once, and says so and until when", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agent-tools-console-"));
    try {
      writeFileSync(join(dir, "operator.key"), `${operator.privateKey}\n`);
      const before = Date.now();
      const result = await run(["console", "--key-file", join(dir, "operator.key")]);
      expect(result.status, result.stderr).toBe(0);
      const lines = result.stdout.trim().split("\n");
      expect(lines[0]).toBe(`Operator console sign-in for ${operator.address}: open the link below in a browser.`);
      const until = /It works once, within 5 minutes \(until (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC\)\./.exec(lines[1]!);
      expect(until, lines[1]).not.toBeNull();
      const expiresAt = Date.parse(`${until![1]!.replace(" ", "T")}Z`);
      expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 5 * 60_000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 5 * 60_000);
      // The link is the service's public origin (this service's own, on a port of its own), its console page and
      // the sign-in in the fragment; the key is never printed.
      const link = lines.at(-1)!;
      expect(link.startsWith(`${service.url}/operator#sign-in=`)).toBe(true);
      expect(result.stdout + result.stderr).not.toContain(operator.privateKey.slice(2));

      const opened = await openSession(link);
      expect(opened.status).toBe(200);
      expect(((await opened.json()) as { address: string }).address).toBe(operator.address);
      expect(opened.headers.get("set-cookie")).toMatch(/^agent_tools_operator=/);
      const again = await openSession(link);
      expect(again.status).toBe(401);
      expect(((await again.json()) as { error: { message: string } }).error.message).toMatch(/already used/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives the link, the address and when it expires as JSON with --json", async () => {
    const result = await run(["console", "--json"], { AGENT_TOOLS_PRIVATE_KEY: operator.privateKey });
    expect(result.status, result.stderr).toBe(0);
    const link = JSON.parse(result.stdout) as { url: string; address: string; expiresAt: string };
    expect(Object.keys(link).sort()).toEqual(["address", "expiresAt", "url"]);
    expect(link.address).toBe(operator.address);
    expect(Date.parse(link.expiresAt) - Date.now()).toBeGreaterThan(4 * 60_000);
    expect((await openSession(link.url)).status).toBe(200);
  });

  it("refuses without a key, and refuses another key before printing a link (exit 4)", async () => {
    const keyless = await run(["console"]);
    expect(keyless.status).toBe(4);
    expect(keyless.stdout).toBe("");
    expect(keyless.stderr).toMatch(
      /^agent-tools: a console link is signed with the operator's key: set AGENT_TOOLS_PRIVATE_KEY or pass --key-file/,
    );

    const other = await run(["console"], { AGENT_TOOLS_PRIVATE_KEY: DEVNET_ACCOUNTS[1]!.privateKey });
    expect(other.status).toBe(4);
    expect(other.stdout).toBe("");
    expect(other.stderr).toContain(`${DEVNET_ACCOUNTS[1]!.address} is not the operator of this service.`);
    expect(other.stderr).toContain("Use the operator's key");
  });
});

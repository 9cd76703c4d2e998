import { execFile, spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
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

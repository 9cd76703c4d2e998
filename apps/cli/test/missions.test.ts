import { execFile } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { dispatchResponseSchema, type LedgerReport, paidRoutes } from "@agent-tools/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { missionParams, nextMorningUtc, parseRunAt } from "../src/commands/mission-params.js";
import { stateHome } from "./helpers/state-home.js";

const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url));

describe("--run-at", () => {
  const now = Date.parse("2026-11-22T12:00:00.000Z");

  it("its example time is the next 08:00 UTC", () => {
    expect(nextMorningUtc(new Date("2026-11-22T07:59:59Z"))).toBe("2026-11-22T08:00:00Z");
    expect(nextMorningUtc(new Date("2026-11-22T08:00:00Z"))).toBe("2026-11-23T08:00:00Z");
    expect(nextMorningUtc(new Date("2026-11-30T12:00:00Z"))).toBe("2026-12-01T08:00:00Z");
  });

  it("takes delays from now", () => {
    expect(parseRunAt("+30m", now)).toBe("2026-11-22T12:30:00.000Z");
    expect(parseRunAt("+2h", now)).toBe("2026-11-22T14:00:00.000Z");
    expect(parseRunAt("+1d", now)).toBe("2026-11-23T12:00:00.000Z");
    expect(parseRunAt("+90s", now)).toBe("2026-11-22T12:01:30.000Z");
  });

  it("takes ISO-8601 times, UTC unless a zone is given", () => {
    expect(parseRunAt("2026-11-23T08:00:00Z")).toBe("2026-11-23T08:00:00.000Z");
    expect(parseRunAt("2026-11-23T08:00")).toBe("2026-11-23T08:00:00.000Z");
    expect(parseRunAt("2026-11-23T09:00:00+01:00")).toBe("2026-11-23T08:00:00.000Z");
    expect(parseRunAt("2026-11-23")).toBe("2026-11-23T00:00:00.000Z");
  });

  it("refuses anything else, saying what to write", () => {
    for (const bad of ["tomorrow", "+2w", "2026-13-45T00:00:00Z", "1700000000", ""]) {
      expect(() => parseRunAt(bad, now)).toThrow(/ISO-8601 UTC time .* or a delay \(\+30m, \+2h, \+1d\)/);
    }
  });
});

describe("mission params from flags", () => {
  it("types --param values by the tool's request schema", () => {
    expect(missionParams("drop-radar", ["limit=10", "type=upcoming"])).toEqual({ limit: 10, type: "upcoming" });
    expect(missionParams("allowlist-scan", ["eligible-only=true", "scanChains=false"])).toEqual({
      eligibleOnly: true,
      scanChains: false,
    });
  });

  it("builds lists from repeated keys, singular or plural", () => {
    expect(missionParams("offer-radar", ["slug=night-owls", "slug=tide-pool"])).toEqual({
      slugs: ["night-owls", "tide-pool"],
    });
    expect(missionParams("offer-radar", ["slugs=night-owls"])).toEqual({ slugs: ["night-owls"] });
  });

  it("merges --params JSON, --param winning", () => {
    expect(missionParams("drop-radar", ["limit=5"], '{"limit":10,"chain":"base"}')).toEqual({
      limit: 5,
      chain: "base",
    });
    expect(missionParams("intel")).toEqual({});
  });

  it("refuses unknown fields, tokenId, malformed pairs and JSON that is not an object", () => {
    expect(() => missionParams("drop-radar", ["colour=red"])).toThrow(/drop-radar has no field colour; its fields are/);
    expect(() => missionParams("drop-radar", ["tokenId=3"])).toThrow(/--token-id/);
    expect(() => missionParams("drop-radar", [], '{"tokenId":3}')).toThrow(/--token-id/);
    expect(() => missionParams("drop-radar", ["limit"])).toThrow(/not key=value/);
    expect(() => missionParams("drop-radar", [], "[1]")).toThrow(/JSON object/);
    expect(() => missionParams("drop-radar", [], "{limit:1}")).toThrow(/not JSON/);
  });
});

// The built CLI against a fake service: request shapes, output and exit codes.

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}
let server: Server;
let baseUrl: string;
let seen: Seen[] = [];
let respond: (req: Seen, res: ServerResponse) => void = (_req, res) => res.writeHead(404).end();

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
const errorBody = (code: string, message: string) => ({ error: { code, message, details: [] } });
const OPERATOR_CHALLENGE = 'SIWX realm="agent-tools operator", chains="eip155:31337 eip155:31338"';

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const request = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      seen.push(request);
      respond(request, res);
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));
beforeEach(() => {
  seen = [];
});

function cli(args: string[], keyIndex?: number) {
  return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? "", NO_COLOR: "1", XDG_STATE_HOME: stateHome };
    if (keyIndex !== undefined) env.AGENT_TOOLS_PRIVATE_KEY = DEVNET_ACCOUNTS[keyIndex]!.privateKey;
    execFile(
      process.execPath,
      [bin, "--base-url", baseUrl, ...args],
      { env, encoding: "utf8" },
      (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("agent-tools dispatch (fake service)", () => {
  it("POSTs the mission with typed params, takes the 202 and prints the mission and the brief", async () => {
    respond = (_req, res) => send(res, 202, paidRoutes.dispatch.sampleOutput);
    const before = Date.now();
    const result = await cli([
      "dispatch",
      "allowlist-scan",
      "--token-id",
      "3",
      "--run-at",
      "+2h",
      "--param",
      "type=upcoming",
      "--param",
      "limit=10",
    ]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: "POST", url: "/dispatch" });
    const body = JSON.parse(seen[0]!.body);
    expect(body.mission).toEqual({ tool: "allowlist-scan", params: { type: "upcoming", limit: 10 } });
    // Two hours after the moment the command ran (ISO-8601 keeps milliseconds).
    const delay = Date.parse(body.runAt) - 2 * 3_600_000;
    expect(delay).toBeGreaterThanOrEqual(before);
    expect(delay).toBeLessThanOrEqual(Date.now());
    const mission = paidRoutes.dispatch.sampleOutput.mission;
    // The brief, and one way to follow the mission: the CLI's command, not the HTTP route the brief names.
    const [queued] = paidRoutes.dispatch.sampleOutput.brief.split(" See its result");
    expect(result.stdout).toContain(queued);
    expect(result.stdout).not.toContain("GET /dispatch");
    expect(result.stdout.match(/agent-tools missions --token-id 3/g)).toHaveLength(1);
    expect(result.stdout).toMatch(new RegExp(`id\\s+${mission.id}`));
    expect(result.stdout).toMatch(/tool\s+allowlist-scan/);
    expect(result.stdout).toMatch(new RegExp(`runAt\\s+${mission.runAt.replace(/\./g, "\\.")}`));
    expect(result.stdout).toMatch(/status\s+queued/);
  });

  it("--json prints exactly the response", async () => {
    respond = (_req, res) => send(res, 202, paidRoutes.dispatch.sampleOutput);
    const result = await cli(["dispatch", "intel", "--token-id", "3", "--json"]);
    expect(result.status).toBe(0);
    expect(result.stdout.trim().split("\n")).toHaveLength(1);
    expect(dispatchResponseSchema.parse(JSON.parse(result.stdout))).toEqual(paidRoutes.dispatch.sampleOutput);
  });

  it("an unrevealed agent exits 4 and says missions need a revealed one", async () => {
    respond = (_req, res) => send(res, 403, errorBody("agent_not_revealed", "Agent 6001 is not revealed yet."));
    const result = await cli(["dispatch", "intel", "--token-id", "6001"]);
    expect(result.status).toBe(4);
    expect(result.stderr).toMatch(/Agent 6001 is not revealed yet\.\nIntel and missions are for revealed agents/);
  });

  it("bad usage exits 2 before anything is sent", async () => {
    for (const args of [
      ["dispatch", "teleport", "--token-id", "3"],
      ["dispatch", "intel"],
      ["dispatch", "drop-radar", "--token-id", "3", "--run-at", "soon"],
      ["dispatch", "drop-radar", "--token-id", "3", "--param", "limit=500"],
      ["dispatch", "drop-radar", "--token-id", "3", "--param", "colour=red"],
      ["dispatch", "intel", "--token-id", "3", "--watch", "10"],
    ]) {
      const result = await cli(args);
      expect({ args, status: result.status }).toEqual({ args, status: 2 });
    }
    expect(seen).toHaveLength(0);
  });
});

describe("agent-tools missions (fake service)", () => {
  it("sends GET /dispatch with the query and prints counts, a table and the results' briefs", async () => {
    respond = (_req, res) => send(res, 200, paidRoutes.missions.sampleOutput);
    const result = await cli(["missions", "--token-id", "3", "--status", "done", "--limit", "5"]);
    expect(result.status).toBe(0);
    expect(seen[0]).toMatchObject({ method: "GET", url: "/dispatch?tokenId=3&status=done&limit=5", body: "" });
    expect(result.stdout).toContain(paidRoutes.missions.sampleOutput.brief);
    expect(result.stdout).toMatch(/missions \(1\) · queued 0 · running 0 · done 1 · failed 0/);
    expect(result.stdout).toMatch(/id\s+tool\s+status\s+runAt\s+finishedAt\s+attempts\s+error/);
    expect(result.stdout).toMatch(/6f1c2b1e\s+allowlist-scan\s+done\s+2026-11-23T08:00:00\.000Z/);
    expect(result.stdout).toMatch(/6f1c2b1e allowlist-scan {2}Eligible for none of 2/);
  });

  it("refuses an unknown status with exit 2", async () => {
    const result = await cli(["missions", "--token-id", "3", "--status", "lost"]);
    expect(result.status).toBe(2);
    expect(seen).toHaveLength(0);
  });
});

/** Totals of payments with nothing refunded. */
const paid = (payments: number, amount: string, usd: string) => ({
  payments,
  amount,
  usd,
  refunds: 0,
  refunded: "0",
  net: amount,
  netUsd: usd,
});
const report: LedgerReport = {
  generatedAt: "2026-11-22T12:00:00.000Z",
  from: "2026-11-01",
  to: "2026-11-22",
  asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  network: "eip155:31338",
  total: paid(2, "1010000", "1.01"),
  byRoute: [
    { route: "/intel", ...paid(1, "1000000", "1.00") },
    { route: "/dispatch", ...paid(1, "10000", "0.01") },
  ],
  byDay: [{ day: "2026-11-22", ...paid(2, "1010000", "1.01") }],
  byDayAndRoute: [],
  byDayRouteAndPricePoint: [],
  unconfirmed: 0,
  entries: [
    {
      kind: "payment",
      route: "/dispatch",
      method: "POST",
      tokenId: 3,
      payer: DEVNET_ACCOUNTS[3]!.address,
      caller: DEVNET_ACCOUNTS[3]!.address,
      pricePoint: "discounted",
      amount: "10000",
      asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
      network: "eip155:31338",
      nonce: `0x${"ef".repeat(32)}`,
      transaction: `0x${"ab".repeat(32)}`,
      cumulative: null,
      ceiling: "10000",
      work: null,
      settledAt: "2026-11-22T11:59:00.000Z",
      requestId: "req-2",
      note: null,
    },
  ],
  brief: "2 payments, 1.01 USD, from 2026-11-01 to 2026-11-22.",
};

describe("agent-tools ledger (fake service)", () => {
  /** 401 with the SIWX challenge until signed in, then `signed`. */
  const operatorRoute = (signed: (res: ServerResponse) => void) => (req: Seen, res: ServerResponse) =>
    req.headers["sign-in-with-x"]
      ? signed(res)
      : send(res, 401, errorBody("sign_in_required", "Sign in as the operator."), {
          "www-authenticate": OPERATOR_CHALLENGE,
        });

  it("signs in and prints the total, tables per route and per day, and the latest entries", async () => {
    respond = operatorRoute((res) => send(res, 200, report));
    const result = await cli(["ledger", "--from", "2026-11-01", "--to", "2026-11-22", "--limit", "5"], 0);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(seen.map((r) => r.url)).toEqual(Array(2).fill("/operator/ledger?from=2026-11-01&to=2026-11-22&limit=5"));
    expect(result.stdout).toContain(report.brief);
    expect(result.stdout).toMatch(/total 2 payments · 1\.01 USD · asked for 2026-11-01 to 2026-11-22/);
    expect(result.stdout).toMatch(
      /by route\nroute\s+payments\s+usd\s*\n\/intel\s+1\s+1\.00\s*\n\/dispatch\s+1\s+0\.01/,
    );
    expect(result.stdout).toMatch(/by day\nday\s+payments\s+usd\s*\n2026-11-22\s+2\s+1\.01/);
    expect(result.stdout).toMatch(
      /latest entries \(1\)\nsettledAt\s+kind\s+route\s+tokenId\s+payer\s+price\s+usd\s+transaction/,
    );
    expect(result.stdout).toMatch(
      /payment\s+POST \/dispatch\s+3\s+0x90F79bf6EB2c4f870365E785982E1f101E93b906\s+discounted\s+0\.01\s+0xabababab…abab/,
    );
    expect(result.stdout + result.stderr).not.toContain(DEVNET_ACCOUNTS[0]!.privateKey.slice(2));
  });

  it("shows refunds: their count and the net in the total and tables, and each one negative among the entries", async () => {
    const refunded = {
      payments: 2,
      amount: "1010000",
      usd: "1.01",
      refunds: 1,
      refunded: "5000",
      net: "1005000",
      netUsd: "1.01",
    };
    const withRefund: LedgerReport = {
      ...report,
      total: refunded,
      byRoute: [{ route: "/intel", ...refunded }],
      byDay: [{ day: "2026-11-22", ...refunded }],
      entries: [{ ...report.entries[0]!, kind: "refund", amount: "5000", note: "late" }, ...report.entries],
    };
    respond = operatorRoute((res) => send(res, 200, withRefund));
    const result = await cli(["ledger"], 0);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/total 2 payments · 1\.01 USD · 1 refund -0\.005 USD · net 1\.01 USD/);
    expect(result.stdout).toMatch(
      /by route\nroute\s+payments\s+usd\s+refunds\s+net\s*\n\/intel\s+2\s+1\.01\s+1\s+1\.01/,
    );
    expect(result.stdout).toMatch(/refund\s+POST \/dispatch\s+3\s+\S+\s+discounted\s+-0\.005\s+0xabababab…abab/);
  });

  it("--json prints exactly the report", async () => {
    respond = operatorRoute((res) => send(res, 200, report));
    const result = await cli(["ledger", "--json"], 0);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(report);
  });

  it("exits 4 without a key, before sending anything", async () => {
    const result = await cli(["ledger"]);
    expect(result.status).toBe(4);
    expect(result.stderr).toMatch(/set AGENT_TOOLS_PRIVATE_KEY or pass --key-file with the operator's key/);
    expect(seen).toHaveLength(0);
  });

  it("exits 4 when the key is not the operator's (403 not_operator)", async () => {
    respond = operatorRoute((res) => send(res, 403, errorBody("not_operator", "Only the operator reads the ledger.")));
    const result = await cli(["ledger"], 1);
    expect(result.status).toBe(4);
    expect(result.stderr).toMatch(/Only the operator reads the ledger\.\nUse the operator's key/);
  });

  it("exits 4 when the sign-in is refused (401)", async () => {
    respond = (_req, res) =>
      send(res, 401, errorBody("sign_in_required", "The sign-in is too old."), {
        "www-authenticate": OPERATOR_CHALLENGE,
      });
    const result = await cli(["ledger"], 0);
    expect(result.status).toBe(4);
    expect(result.stderr).toMatch(/The sign-in is too old\.\nSign in with the operator's key/);
  });

  it("bad days exit 2 before anything is sent", async () => {
    for (const args of [
      ["ledger", "--from", "22-11-2026"],
      ["ledger", "--from", "2026-11-22", "--to", "2026-11-01"],
      ["ledger", "--limit", "many"],
      ["ledger", "--anonymous"],
    ]) {
      const result = await cli(args, 0);
      expect({ args, status: result.status }).toEqual({ args, status: 2 });
    }
    expect(seen).toHaveLength(0);
  });
});

import { describe, expect, it } from "vitest";
import {
  buildOpenApiDocument,
  dispatchRequestSchema,
  dispatchRoutes,
  LEDGER_CSV_COLUMNS,
  type LedgerEntry,
  ledgerCsvLine,
  ledgerEntrySchema,
  ledgerQuerySchema,
  ledgerReportSchema,
  listMissionsRequestSchema,
  missionTools,
  queryToInput,
  toolNames,
  toolRoutes,
} from "../src/index.js";
import { ASSET, HOLDER } from "./helpers.js";

/** The dotted field paths a failed parse names. */
function fields(result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }): string[] {
  return (result.error?.issues ?? []).map((issue) => issue.path.map(String).join("."));
}

describe("POST /dispatch request", () => {
  it("takes a tool by its route name and checks its params against that tool's own request schema", () => {
    const ok = dispatchRequestSchema.safeParse({
      tokenId: 3,
      mission: { tool: "allowlist-scan", params: { type: "upcoming", limit: 10 } },
      runAt: "2026-11-23T08:00:00.000Z",
    });
    expect(ok.success).toBe(true);
    expect(ok.data?.mission.params).toEqual({ type: "upcoming", limit: 10 });

    const bad = dispatchRequestSchema.safeParse({
      tokenId: 3,
      mission: { tool: "allowlist-scan", params: { limit: 500, type: "everything" } },
    });
    expect(bad.success).toBe(false);
    expect(fields(bad).sort()).toEqual(["mission.params.limit", "mission.params.type"]);
  });

  it("offers every tool but itself, and refuses an unknown one naming the field", () => {
    expect(missionTools).toEqual(toolNames.map((name) => toolRoutes[name].slug));
    const bad = dispatchRequestSchema.safeParse({ tokenId: 3, mission: { tool: "dispatch", params: {} } });
    expect(fields(bad)).toEqual(["mission.tool"]);
  });

  it("leaves params optional, and refuses tokenId inside them only where the tool is strict", () => {
    expect(dispatchRequestSchema.safeParse({ tokenId: 3, mission: { tool: "intel" } }).success).toBe(true);
    // /altchain-radar rejects unknown properties, so must its mission.
    const strict = dispatchRequestSchema.safeParse({
      tokenId: 3,
      mission: { tool: "altchain-radar", params: { limit: 5, colour: "red" } },
    });
    expect(strict.success).toBe(false);
    expect(fields(strict)[0]).toMatch(/^mission\.params/);
  });

  it("schedules at most 30 days ahead and takes only ISO-8601 UTC times", () => {
    const later = new Date(Date.now() + 31 * 86_400_000).toISOString();
    expect(fields(dispatchRequestSchema.safeParse({ tokenId: 3, mission: { tool: "intel" }, runAt: later }))).toEqual([
      "runAt",
    ]);
    expect(
      fields(dispatchRequestSchema.safeParse({ tokenId: 3, mission: { tool: "intel" }, runAt: "tomorrow 8am" })),
    ).toEqual(["runAt"]);
    const past = new Date(Date.now() - 3_600_000).toISOString();
    expect(dispatchRequestSchema.safeParse({ tokenId: 3, mission: { tool: "intel" }, runAt: past }).success).toBe(true);
  });
});

describe("GET /dispatch query", () => {
  it("coerces tokenId and limit from the query string and bounds them", () => {
    const parsed = listMissionsRequestSchema.parse(
      queryToInput(listMissionsRequestSchema, { tokenId: "3", status: "done", limit: "5" }),
    );
    expect(parsed).toEqual({ tokenId: 3, status: "done", limit: 5 });
    expect(listMissionsRequestSchema.parse({ tokenId: 3 }).limit).toBe(20);
    const bad = listMissionsRequestSchema.safeParse(
      queryToInput(listMissionsRequestSchema, { tokenId: "3", status: "lost", limit: "500" }),
    );
    expect(fields(bad).sort()).toEqual(["limit", "status"]);
  });
});

describe("the mission queue in the OpenAPI document", () => {
  const doc = buildOpenApiDocument({
    serverUrl: "http://127.0.0.1:8402",
    payment: {
      network: "eip155:31338",
      asset: ASSET,
      payTo: HOLDER,
      assetName: "USD Coin",
      assetVersion: "2",
      maxTimeoutSeconds: 60,
    },
    // biome-ignore lint/suspicious/noExplicitAny: walking an untyped JSON document
  }) as any;

  it("has POST /dispatch answering 202 and GET /dispatch taking query parameters, both Elite and paid", () => {
    const post = doc.paths["/dispatch"].post;
    const get = doc.paths["/dispatch"].get;
    expect(post.operationId).toBe(dispatchRoutes.dispatch.operationId);
    expect(Object.keys(post.responses)).toContain("202");
    expect(post.responses["200"]).toBeUndefined();
    expect(post.description).not.toMatch(/answers GET/);
    expect(get.operationId).toBe("serviceListMissions");
    expect(get.requestBody).toBeUndefined();
    expect(get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
      "query:tokenId",
      "query:status",
      "query:limit",
    ]);
    for (const op of [post, get]) {
      expect(op["x-payment-info"].minimumClearance).toBe("Elite");
      expect(op.responses["403"].description).toMatch(/agent_not_revealed/);
    }
  });

  it("documents the operator's ledger view, signed in and not paid", () => {
    const ledger = doc.paths["/operator/ledger"].get;
    expect(Object.keys(ledger.responses).sort()).toEqual(["200", "400", "401", "403"]);
    expect(ledger["x-payment-info"]).toBeUndefined();
  });
});

describe("ledger query", () => {
  it("takes UTC days in order and bounds the entries listed", () => {
    expect(ledgerQuerySchema.parse({ from: "2026-11-01", to: "2026-11-22" })).toEqual({
      from: "2026-11-01",
      to: "2026-11-22",
      limit: 20,
    });
    expect(fields(ledgerQuerySchema.safeParse({ from: "2026-11-22", to: "2026-11-01" }))).toEqual(["from"]);
    expect(fields(ledgerQuerySchema.safeParse({ to: "2026-13-45" }))).toEqual(["to"]);
    expect(fields(ledgerQuerySchema.safeParse({ limit: 501 }))).toEqual(["limit"]);
  });

  it("reports totals as integer strings in the asset's smallest unit, a net that refunds can make negative", () => {
    const paid = { payments: 1, amount: "10000", usd: "0.01", refunds: 0, refunded: "0", net: "10000", netUsd: "0.01" };
    const report = {
      generatedAt: "2026-11-22T12:00:00.000Z",
      from: "2026-11-22",
      to: "2026-11-22",
      asset: ASSET,
      network: "eip155:31338",
      total: paid,
      byRoute: [{ route: "/intel", ...paid }],
      byDay: [{ day: "2026-11-22", ...paid }],
      byDayAndRoute: [{ day: "2026-11-22", route: "/intel", ...paid }],
      byDayRouteAndPricePoint: [{ day: "2026-11-22", route: "/intel", pricePoint: "discounted", ...paid }],
      unconfirmed: 0,
      entries: [],
      brief: "1 payment, 0.01 USD.",
    };
    expect(ledgerReportSchema.safeParse(report).success).toBe(true);
    const refundOnly = {
      payments: 0,
      amount: "0",
      usd: "0.00",
      refunds: 1,
      refunded: "5000",
      net: "-5000",
      netUsd: "-0.01",
    };
    expect(ledgerReportSchema.safeParse({ ...report, total: refundOnly }).success).toBe(true);
    expect(ledgerReportSchema.safeParse({ ...report, total: { ...paid, refunded: "-1" } }).success).toBe(false);
    expect(ledgerReportSchema.safeParse({ ...report, total: { ...paid, net: "-0" } }).success).toBe(false);
    expect(ledgerReportSchema.safeParse({ ...report, total: { ...report.total, amount: "0.01" } }).success).toBe(false);
  });
});

describe("the ledger's CSV line", () => {
  const entry: LedgerEntry = {
    kind: "payment",
    route: "/intel",
    method: "POST",
    tokenId: 1,
    payer: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    caller: null,
    pricePoint: "standard",
    amount: "1000000",
    asset: ASSET,
    network: "eip155:31338",
    nonce: `0x${"ef".repeat(32)}`,
    transaction: `0x${"cd".repeat(32)}`,
    cumulative: null,
    ceiling: "1000000",
    work: null,
    settledAt: "2026-11-22T11:59:00.000Z",
    requestId: "req-1",
    note: null,
  };
  const fields = (line: string) => {
    expect(line.endsWith("\r\n")).toBe(true);
    return Object.fromEntries(
      line
        .slice(0, -2)
        .split(",")
        .map((value, i) => [LEDGER_CSV_COLUMNS[i], value]),
    );
  };

  it("writes a payment's amount as it is, and a refund's negative, both exact", () => {
    expect(fields(ledgerCsvLine(entry))).toMatchObject({
      kind: "payment",
      amount: "1000000",
      usd: "1.000000",
      note: "",
    });
    const refund = fields(ledgerCsvLine({ ...entry, kind: "refund", amount: "5000", note: "late" }));
    expect(refund).toMatchObject({ kind: "refund", amount: "-5000", usd: "-0.005000", note: "late" });
  });

  it("writes a channel call's cumulative amount after its transaction, and nothing for any other entry", () => {
    const channelCall = { ...entry, nonce: `0x${"aa".repeat(32)}`, transaction: "", cumulative: "3000000" };
    expect(ledgerEntrySchema.safeParse(channelCall).success).toBe(true);
    expect(fields(ledgerCsvLine(channelCall))).toMatchObject({
      transaction: "",
      cumulative: "3000000",
      requestId: "req-1",
    });
    expect(fields(ledgerCsvLine(entry))).toMatchObject({ transaction: entry.transaction, cumulative: "" });
    expect(LEDGER_CSV_COLUMNS.indexOf("cumulative")).toBe(LEDGER_CSV_COLUMNS.indexOf("transaction") + 1);
    // A decimal count of the asset's smallest unit, or null: never a fraction, a sign, or missing.
    for (const cumulative of ["3.5", "-1", "", "0x10"]) {
      expect(ledgerEntrySchema.safeParse({ ...entry, cumulative }).success, cumulative).toBe(false);
    }
    const { cumulative: _, ...without } = entry;
    expect(ledgerEntrySchema.safeParse(without).success).toBe(false);
  });

  it("writes a note a spreadsheet would run as a formula behind an apostrophe", () => {
    const line = ledgerCsvLine({ ...entry, kind: "refund", note: "=HYPERLINK(1)" });
    expect(fields(line).note).toBe("'=HYPERLINK(1)");
  });
});

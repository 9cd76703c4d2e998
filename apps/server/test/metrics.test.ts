import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import type { PaymentRequired } from "@x402/core/types";
import { createPublicClient, http, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type EmbeddedProcess, spawnEmbeddedService } from "../dist/index.js";
import { DATASOURCE, grafanaDashboard as dashboard } from "../monitoring/grafana-dashboard.js";
import { paymentHeader } from "./helpers/x402-client.js";

let service: EmbeddedProcess;
let metricsUrl: string;

beforeAll(async () => {
  service = await spawnEmbeddedService({ env: { METRICS_PORT: "0" } });
  metricsUrl = /^ {2}metrics +(http:\/\/\S+)/m.exec(service.output())?.[1] ?? "";
}, 120_000);
afterAll(async () => {
  await service?.close();
});

/** One anonymous paid call, paid by demo account #3 with x402's own client. */
async function paidCall(path: string, body: unknown): Promise<Response> {
  const l2Url = /L2 \(payments\)\s+(http:\/\/\S+)/.exec(service.output())![1]!;
  const usd = /USD token\s+(0x[0-9a-fA-F]{40})/.exec(service.output())![1]!;
  const l2 = createPublicClient({ transport: http(l2Url) }) as PublicClient;
  const send = (headers: Record<string, string>) =>
    fetch(`${service.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const quote = (await (await send({})).json()) as PaymentRequired;
  const payer = privateKeyToAccount(DEVNET_ACCOUNTS[3]!.privateKey);
  return send({ "PAYMENT-SIGNATURE": await paymentHeader(payer, l2, quote, { network: "eip155:31338", asset: usd }) });
}

/** The value of one series in a Prometheus text exposition, or undefined when it is not there. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics (METRICS_PORT)", () => {
  it("shows the paid calls, amounts settled, refusals, requests by route, upstream calls, missions and chain lag", async () => {
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await paidCall("/intel", { tokenId: 7 })).status).toBe(200);
    expect((await paidCall("/drop-radar", { tokenId: 7, limit: 5 })).status).toBe(200);
    expect((await fetch(`${service.url}/agents/info/1`)).status).toBe(200);

    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const settled = (route: string) =>
      `agent_tools_paid_calls_total{route="${route}",price_point="standard",outcome="settled"}`;
    expect(sample(text, settled("/intel"))).toBe(1);
    expect(sample(text, settled("/drop-radar"))).toBe(1);
    expect(sample(text, 'agent_tools_settled_amount_total{route="/intel",price_point="standard"}')).toBe(1_000_000);
    // Each paid call was first quoted: a 402 with the reason payment_required.
    expect(sample(text, 'agent_tools_payment_refusals_total{reason="payment_required"}')).toBe(2);
    expect(
      sample(
        text,
        'agent_tools_http_request_duration_seconds_count{method="GET",route="/agents/info/:tokenId",status="200"}',
      ),
    ).toBe(1);
    expect(
      sample(text, 'agent_tools_http_request_duration_seconds_count{method="POST",route="/intel",status="402"}'),
    ).toBe(1);
    expect(sample(text, 'agent_tools_upstream_requests_total{upstream="marketplace",outcome="ok"}')).toBeGreaterThan(0);
    expect(sample(text, 'agent_tools_upstream_circuit_open{upstream="marketplace"}')).toBe(0);
    expect(sample(text, 'agent_tools_mission_queue{status="queued"}')).toBe(0);
    expect(sample(text, "agent_tools_collection_lag_blocks")).toBeGreaterThanOrEqual(0);
    // No call was cut short: no payment claim is left pending.
    expect(sample(text, 'agent_tools_pending_settlements{age="under_10m"}')).toBe(0);
    expect(sample(text, 'agent_tools_pending_settlements{age="over_10m"}')).toBe(0);
    expect(sample(text, "agent_tools_process_resident_memory_bytes")).toBeGreaterThan(0);
  });

  it("is not served on the API's port", async () => {
    expect((await fetch(`${service.url}/metrics`)).status).toBe(404);
  });
});

const deploy = fileURLToPath(new URL("../../../deploy/", import.meta.url));
/** Every query of the dashboard. */
const dashboardQueries = (dashboard.panels ?? []).flatMap((panel) =>
  "targets" in panel ? (panel.targets ?? []).map((target) => (target as { expr: string }).expr) : [],
);
/** Every expression of the alert rules. */
const alertExpressions = (): string[] =>
  (
    parseYaml(readFileSync(join(deploy, "prometheus/alerts.yml"), "utf8")) as {
      groups: { rules: { expr: string }[] }[];
    }
  ).groups.flatMap((group) => group.rules.map((rule) => rule.expr));

/** Debian's promtool (`npm run setup -- --with-prometheus`), run on a file of deploy/prometheus or a temporary one. */
function promtool(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  const bin = process.env.PROMTOOL ?? "/usr/bin/promtool";
  if (!existsSync(bin))
    throw new Error(`${bin} is missing: run npm run setup -- --with-prometheus (Debian's prometheus)`);
  return new Promise((resolve) => {
    execFile(bin, args, { cwd, encoding: "utf8" }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

describe("the Grafana dashboard and the Prometheus alert rules (deploy/)", () => {
  it("ship the dashboard as its typed source writes it (pnpm --filter @agent-tools/server dashboard)", () => {
    const shipped = JSON.parse(readFileSync(join(deploy, "grafana/agent-tools.json"), "utf8"));
    expect(shipped).toEqual(JSON.parse(JSON.stringify(dashboard)));
  });

  it("ask only for metrics the service exports", async () => {
    const text = await (await fetch(metricsUrl)).text();
    const exported = new Set<string>();
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      exported.add(name!);
      if (type === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) exported.add(`${name}${suffix}`);
      if (type === "summary") for (const suffix of ["_sum", "_count"]) exported.add(`${name}${suffix}`);
    }
    const asked = [...dashboardQueries, ...alertExpressions()].flatMap((expr) => expr.match(/agent_tools_\w+/g) ?? []);
    expect(new Set(asked).size).toBeGreaterThan(12);
    for (const name of new Set(asked)) expect(exported, name).toContain(name);
    // Each panel asks the dashboard's Prometheus, chosen when it is imported.
    for (const panel of dashboard.panels ?? []) {
      if (panel.type !== "row") expect(panel.datasource, panel.title).toEqual(DATASOURCE);
    }
  });

  it("pass promtool: the rules check, their unit tests pass, and every dashboard query parses", async () => {
    const rules = await promtool(["check", "rules", "alerts.yml"], join(deploy, "prometheus"));
    expect(rules.code, rules.output).toBe(0);
    expect(rules.output).toMatch(/SUCCESS: 7 rules found/);
    const tests = await promtool(["test", "rules", "alerts.test.yml"], join(deploy, "prometheus"));
    expect(tests.code, tests.output).toBe(0);

    // The dashboard's queries as recording rules, Grafana's variables given values: Prometheus's own parser reads them.
    const dir = mkdtempSync(join(tmpdir(), "agent-tools-dashboard-"));
    try {
      const asRules = dashboardQueries.map((expr, i) => ({
        record: `dashboard:query_${i}`,
        expr: expr.replaceAll("$instance", ".*").replaceAll("$__rate_interval", "5m").replaceAll("$__range", "1h"),
      }));
      writeFileSync(join(dir, "dashboard.yml"), JSON.stringify({ groups: [{ name: "dashboard", rules: asRules }] }));
      const queries = await promtool(["check", "rules", "dashboard.yml"], dir);
      expect(queries.code, queries.output).toBe(0);
      expect(queries.output).toContain(`SUCCESS: ${dashboardQueries.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

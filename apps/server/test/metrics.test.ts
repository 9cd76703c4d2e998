import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import type { PaymentRequired } from "@x402/core/types";
import { createPublicClient, http, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedProcess, spawnEmbeddedService } from "../dist/index.js";
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
    expect(sample(text, "agent_tools_process_resident_memory_bytes")).toBeGreaterThan(0);
  });

  it("is not served on the API's port", async () => {
    expect((await fetch(`${service.url}/metrics`)).status).toBe(404);
  });
});

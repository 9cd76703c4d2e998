import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/startup/server.js";
import { type ChainTestServer, startChainTestServer } from "./helpers/chain-server.js";

let service: ChainTestServer;
let server: RunningServer;
beforeAll(async () => {
  service = await startChainTestServer({ env: { PUBLIC_URL: "https://tools.test" } });
  server = service.server;
}, 120_000);
afterAll(async () => {
  await service?.close();
});

async function postRaw(path: string, body: string, contentType = "application/json") {
  const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": contentType }, body });
  return { res, body: await res.json() };
}

describe("public surface", () => {
  it("answers /healthz with ok and the service name", async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    expect(await res.json()).toEqual({ ok: true, service: "agent-tools" });
  });

  it("serves the OpenAPI 3.1 document with the seven tool operations", async () => {
    const res = await fetch(`${server.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0.0");
    const operationIds = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
      (item) => Object.values(item).map((op) => op.operationId),
    );
    for (const id of [
      "serviceIntel",
      "serviceDropRadar",
      "serviceB20Radar",
      "serviceAltchainRadar",
      "servicePortfolio",
      "serviceAllowlistScan",
      "serviceOfferRadar",
    ]) {
      expect(operationIds).toContain(id);
    }
  });

  it("binds the document's server to the configured public origin, not the Host header", async () => {
    const res = await fetch(`${server.url}/openapi.json`, { headers: { host: "evil.example" } });
    const doc = await res.json();
    expect(doc.servers).toEqual([{ url: "https://tools.test" }]);
  });

  it("serves the API reference page with its script from this server", async () => {
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    const html = await res.text();
    const scripts = [...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).toEqual(["/reference/standalone.js"]);
    expect(html).toContain("/openapi.json");
    expect(html).not.toMatch(/https?:\/\/(cdn|fonts)\./);
    const script = await fetch(`${server.url}/reference/standalone.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/javascript/);
    const length = Number(script.headers.get("content-length"));
    expect(length).toBeGreaterThan(100_000);
    // Read to the end: a body left unread holds the connection busy, and closing the server waits for it.
    expect((await script.arrayBuffer()).byteLength).toBe(length);
  });
});

describe("errors are JSON", () => {
  it("answers an unknown route with a JSON 404", async () => {
    const res = await fetch(`${server.url}/no/such/route`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: "not_found", details: [] } });
  });

  it("answers malformed JSON with 400 malformed_json and no stack trace", async () => {
    const { res, body } = await postRaw("/intel", '{"tokenId": 7,');
    expect(res.status).toBe(400);
    expect(body.error.code).toBe("malformed_json");
    expect(body.error.message).toMatch(/not valid JSON/);
    expect(JSON.stringify(body)).not.toMatch(/at .*\.js:\d+/);
  });

  it("answers a body over 32 KiB with 413 before reading it", async () => {
    const big = JSON.stringify({ tokenId: 7, pad: "x".repeat(33 * 1024) });
    const { res, body } = await postRaw("/intel", big);
    expect(res.status).toBe(413);
    expect(body.error.code).toBe("payload_too_large");
  });

  it("accepts a body just under 32 KiB through the parser", async () => {
    const body = JSON.stringify({ tokenId: 7, pad: "x".repeat(31 * 1024) });
    const res = await fetch(`${server.url}/healthz-post-probe`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    // Parsed fine, then no route: 404 rather than 413.
    expect(res.status).toBe(404);
  });
});

describe("request ids", () => {
  it("echoes a sane X-Request-Id and makes one otherwise", async () => {
    const given = await fetch(`${server.url}/healthz`, { headers: { "x-request-id": "trace-42" } });
    expect(given.headers.get("x-request-id")).toBe("trace-42");
    const made = await fetch(`${server.url}/healthz`, { headers: { "x-request-id": "bad id with spaces" } });
    expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

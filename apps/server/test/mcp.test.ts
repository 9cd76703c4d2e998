import {
  MCP_PAYMENT_META,
  MCP_PAYMENT_RESPONSE_META,
  MCP_SIGN_IN_META,
  mcpPaidToolNames,
  mcpReadTools,
  paidRoutes,
  requestJsonSchema,
  responseJsonSchema,
  settlementResponseSchema,
} from "@agent-tools/schema";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { PaymentRequired } from "@x402/core/types";
import { extractDiscoveryInfo, validateDiscoveryExtension } from "@x402/extensions/bazaar";
import { Client as Client2025 } from "mcp-sdk-2025-06-18/client/index.js";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransport2025 } from "mcp-sdk-2025-06-18/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceError } from "../src/errors/service-error.js";
import { errorBodyIn, paymentRequiredIn, paymentRequiredOfExtension } from "./helpers/mcp-results.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";
import { rawPost } from "./helpers/raw-post.js";

let t: PaidTestServer;
let client: Client;
const address = (index: number) => t.devnet.deployment.accounts[index]!.address;

beforeAll(async () => {
  t = await startPaidTestServer({
    tools: {
      // A tool whose upstream is down: the call must cost nothing.
      portfolio: async () => {
        throw new ServiceError("upstream_unavailable", "The marketplace is unavailable.", [], { "Retry-After": "30" });
      },
    },
  });
  client = new Client({ name: "mcp-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.server.url}/mcp`)));
}, 120_000);
afterAll(async () => {
  await client?.close();
  await t?.close();
});

/**
 * A tools/call as a stock agent sends it: the official MCP SDK's plain `callTool`, which checks a result's
 * `structuredContent` against the tool's output schema (and throws when it does not match).
 */
function call(name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallToolResult> {
  return client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }) as Promise<CallToolResult>;
}

/** The x402 `PaymentPayload` object paying a PaymentRequired from devnet account `index`. */
async function paymentPayload(index: number, paymentRequired: PaymentRequired): Promise<Record<string, unknown>> {
  return JSON.parse(Buffer.from(await t.pay(index, paymentRequired), "base64").toString("utf8"));
}

describe("the MCP endpoint", () => {
  it("lists every paid tool and free read, with the contracts' schemas as input and output schemas", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual([...Object.values(mcpPaidToolNames), ...Object.keys(mcpReadTools)]);
    for (const [routeName, toolName] of Object.entries(mcpPaidToolNames)) {
      const tool = tools.find((candidate) => candidate.name === toolName)!;
      const route = paidRoutes[routeName as keyof typeof paidRoutes];
      const { $schema: _in, ...input } = requestJsonSchema(route);
      const { $schema: _out, ...output } = responseJsonSchema(route);
      expect(tool.inputSchema).toEqual(input);
      // The answer, or x402's PaymentRequired that a refusal carries as structuredContent.
      expect(tool.outputSchema).toMatchObject({ type: "object", anyOf: [output, { type: "object" }] });
      const [, paymentRequired] = (tool.outputSchema as unknown as { anyOf: { required: string[] }[] }).anyOf;
      expect(paymentRequired!.required).toEqual(expect.arrayContaining(["x402Version", "accepts"]));
    }
  });

  it("answers an unpaid call with an isError result holding a valid x402 v2 PaymentRequired, with MCP discovery", async () => {
    const paymentRequired = paymentRequiredIn(await call("intel", { tokenId: 7 }));
    expect(paymentRequired.accepts[0]!.amount).toBe("1000000");
    expect(paymentRequired.resource.url).toBe("mcp://tool/intel");
    expect(paymentRequired.error).toMatch(/^payment_required: /);
    const bazaar = (paymentRequired.extensions as Record<string, unknown>).bazaar as never;
    expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
    expect(extractDiscoveryInfo(paymentRequired as never, paymentRequired.accepts[0]! as never)).toMatchObject({
      discoveryInfo: { input: { type: "mcp", toolName: "intel", transport: "streamable-http" } },
    });
  });

  it("names MCP's own fields in a refusal, never HTTP's headers", async () => {
    const unpaid = paymentRequiredIn(await call("intel", { tokenId: 7 }));
    expect(unpaid.error).toBe(`payment_required: pay with x402 version 2 (_meta["${MCP_PAYMENT_META}"]).`);
    const badSignIn = paymentRequiredIn(await call("intel", { tokenId: 7 }, { [MCP_SIGN_IN_META]: "not a sign-in" }));
    expect(badSignIn.error).toMatch(
      new RegExp(`^invalid_siwx: _meta\\["${MCP_SIGN_IN_META}"\\] is not a valid sign-in`),
    );
    for (const refusal of [unpaid, badSignIn]) expect(refusal.error).not.toMatch(/PAYMENT-SIGNATURE|SIGN-IN-WITH-X/);
  });

  it("runs a paid call: the tool's structured result, the brief as text, the settlement in _meta, the price moved", async () => {
    const quote = paymentRequiredIn(await call("intel", { tokenId: 7 }));
    const before = await t.balance(address(3));
    const result = await call("intel", { tokenId: 7 }, { [MCP_PAYMENT_META]: await paymentPayload(3, quote) });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ tokenId: 7 });
    expect((result.content[0] as { text: string }).text).toBe((result.structuredContent as { brief: string }).brief);
    const settlement = settlementResponseSchema.parse(result._meta?.[MCP_PAYMENT_RESPONSE_META]);
    expect(settlement).toMatchObject({ success: true, payer: address(3) });
    expect(before - (await t.balance(address(3)))).toBe(1_000_000n);
    // callTool validated the paid result against the output schema listed for the tool, and a free read's too.
    const validated = await client.callTool({ name: "agent_info", arguments: { tokenId: 7 } });
    expect(validated.structuredContent).toMatchObject({ tokenId: 7, name: "Agent #7" });
  });

  it("quotes and charges a signed-in holder 10000, the sign-in in _meta as the header carries it", async () => {
    const signIn = () => t.signIn(1, "/mcp");
    const paymentRequired = paymentRequiredIn(
      await call("intel", { tokenId: 1 }, { [MCP_SIGN_IN_META]: await signIn() }),
    );
    expect(paymentRequired.accepts[0]!.amount).toBe("10000");
    const before = await t.balance(address(1));
    const result = await call(
      "intel",
      { tokenId: 1 },
      { [MCP_SIGN_IN_META]: await signIn(), [MCP_PAYMENT_META]: await paymentPayload(1, paymentRequired) },
    );
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ tokenId: 1, caller: address(1) });
    expect(before - (await t.balance(address(1)))).toBe(10_000n);
  });

  it("charges nothing for a replayed payment, an invalid input or an upstream failure", async () => {
    const quote = paymentRequiredIn(await call("intel", { tokenId: 8 }));
    const payment = await paymentPayload(4, quote);
    expect((await call("intel", { tokenId: 8 }, { [MCP_PAYMENT_META]: payment })).isError).toBeFalsy();
    const before = await t.balance(address(4));

    const replay = await call("intel", { tokenId: 8 }, { [MCP_PAYMENT_META]: payment });
    expect(paymentRequiredIn(replay).error).toMatch(/^payment_already_used: /);

    const invalid = await call("intel", { tokenId: 0 }, { [MCP_PAYMENT_META]: await paymentPayload(4, quote) });
    expect(errorBodyIn(invalid)).toMatchObject({ error: { code: "invalid_request", details: [{ field: "tokenId" }] } });

    const portfolioQuote = paymentRequiredIn(await call("portfolio", { tokenId: 8, walletAddress: address(4) }));
    const failed = await call(
      "portfolio",
      { tokenId: 8, walletAddress: address(4) },
      { [MCP_PAYMENT_META]: await paymentPayload(4, portfolioQuote) },
    );
    expect(errorBodyIn(failed)).toMatchObject({ error: { code: "upstream_unavailable" } });
    expect(await t.balance(address(4))).toBe(before);
  });

  it("answers the free reads, and names an unknown tool", async () => {
    const binding = await client.callTool({ name: "agent_binding", arguments: { tokenId: 7 } });
    expect(binding.structuredContent).toMatchObject({ tokenId: 7, standard: "ERC-8217" });
    const registration = await client.callTool({ name: "agent_registration", arguments: { tokenId: 7 } });
    expect((registration.structuredContent as { services: unknown[] }).services).toContainEqual({
      name: "MCP",
      endpoint: "http://127.0.0.1:8402/mcp",
      version: "2026-07-28",
    });
    expect(errorBodyIn(await call("no_such_tool", {}))).toMatchObject({ error: { code: "unknown_tool" } });
  });

  it("takes the names of JavaScript's object properties for unknown tools, and logs no error for them", async () => {
    const errorsBefore = t.logs().filter((line) => line.includes('"level":50')).length;
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]) {
      const result = await call(name, { tokenId: 1 });
      expect(errorBodyIn(result), name).toMatchObject({ error: { code: "unknown_tool" } });
    }
    expect(t.logs().filter((line) => line.includes('"level":50')).length).toBe(errorsBefore);
  });

  it("refuses a JSON-RPC batch: one message per request, each counted by the per-address limits", async () => {
    const batch = Array.from({ length: 100 }, (_, id) => ({ jsonrpc: "2.0", id, method: "tools/list" }));
    const res = await fetch(`${t.server.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(batch),
    });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text.length).toBeLessThan(1000);
    expect(JSON.parse(text)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
  });

  it.each([
    ["a Host of another site", { host: "evil.example.com" }],
    ["an Origin of another site", { origin: "http://evil.example.com" }],
  ])("refuses a request with %s (DNS rebinding): 403, nothing served", async (_, headers) => {
    const res = await rawPost(`${t.server.url}/mcp`, headers, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: "forbidden_origin" } });
  });

  it("refuses GET with 405: the endpoint is stateless", async () => {
    const res = await t.get("/mcp");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });
});

/** What a stock client does with a plain `listTools` and `callTool`, whichever SDK and protocol revision it speaks. */
interface StockClient {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallToolResult>;
}

/**
 * A stock client's session: it lists the tools, reads a free one, reads a price, pays it (the payer's balance moves by
 * exactly the price), and reads a replayed payment, an invalid input and an upstream failure, none of them charged.
 */
async function stockClientSession(mcp: StockClient, payer: number, tokenId: number): Promise<void> {
  const { tools } = await mcp.listTools();
  expect(tools.map((tool) => tool.name)).toEqual([...Object.values(mcpPaidToolNames), ...Object.keys(mcpReadTools)]);
  const free = await mcp.callTool("agent_binding", { tokenId });
  expect(free.structuredContent).toMatchObject({ tokenId, standard: "ERC-8217" });

  const quote = paymentRequiredIn(await mcp.callTool("intel", { tokenId }));
  expect(quote.error).toMatch(/^payment_required: /);
  const payment = await paymentPayload(payer, quote);
  const before = await t.balance(address(payer));
  const paid = await mcp.callTool("intel", { tokenId }, { [MCP_PAYMENT_META]: payment });
  expect(paid.isError).toBeFalsy();
  expect(paid.structuredContent).toMatchObject({ tokenId });
  expect(settlementResponseSchema.parse(paid._meta?.[MCP_PAYMENT_RESPONSE_META])).toMatchObject({ success: true });
  expect(before - (await t.balance(address(payer)))).toBe(1_000_000n);

  const replay = await mcp.callTool("intel", { tokenId }, { [MCP_PAYMENT_META]: payment });
  expect(paymentRequiredIn(replay).error).toMatch(/^payment_already_used: /);
  const invalid = await mcp.callTool(
    "intel",
    { tokenId: 0 },
    { [MCP_PAYMENT_META]: await paymentPayload(payer, quote) },
  );
  expect(errorBodyIn(invalid)).toMatchObject({ error: { code: "invalid_request", details: [{ field: "tokenId" }] } });
  const portfolio = { tokenId, walletAddress: address(payer) };
  const portfolioQuote = paymentRequiredIn(await mcp.callTool("portfolio", portfolio));
  const failed = await mcp.callTool("portfolio", portfolio, {
    [MCP_PAYMENT_META]: await paymentPayload(payer, portfolioQuote),
  });
  expect(errorBodyIn(failed)).toMatchObject({ error: { code: "upstream_unavailable" } });
  expect(before - (await t.balance(address(payer)))).toBe(1_000_000n);
}

/** The per-request envelope of MCP 2026-07-28, as a client sends it in every request's `_meta`. */
const envelope2026 = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

describe("stock clients of every protocol revision the endpoint serves", () => {
  it("a 2026-07-28 client (MCP SDK 2.x, @modelcontextprotocol/client): no handshake, and a whole session", async () => {
    const v2 = new ClientV2({ name: "mcp-test-v2", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await v2.connect(new StreamableHTTPClientTransportV2(new URL(`${t.server.url}/mcp`)));
    try {
      // The client probed with server/discover and found the current revision: no initialize was sent.
      expect(v2.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      await stockClientSession(
        {
          listTools: () => v2.listTools(),
          callTool: (name, args, meta) =>
            v2.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }) as Promise<CallToolResult>,
        },
        5,
        9,
      );
    } finally {
      await v2.close();
    }
  });

  it("a 2026-07-28 request names its revision on every message, and the answer says it is complete", async () => {
    const res = await fetch(`${t.server.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope2026 } }),
    });
    expect(res.status).toBe(200);
    const { result } = (await res.json()) as { result: Record<string, unknown> };
    // The tool list may be kept an hour by anyone: it is the same for every caller.
    expect(result).toMatchObject({ resultType: "complete", ttlMs: 3_600_000, cacheScope: "public" });
    expect(result._meta).toMatchObject({ "io.modelcontextprotocol/serverInfo": { name: "agent-tools" } });
  });

  it("refuses a payment spent at 2026-07-28 when it comes back at 2025-11-25, and charges it once", async () => {
    const v2 = new ClientV2({ name: "mcp-test-v2", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await v2.connect(new StreamableHTTPClientTransportV2(new URL(`${t.server.url}/mcp`)));
    try {
      const quote = paymentRequiredIn((await v2.callTool({ name: "intel", arguments: { tokenId: 12 } })) as never);
      const payment = await paymentPayload(8, quote);
      const before = await t.balance(address(8));
      const paid = await v2.callTool({
        name: "intel",
        arguments: { tokenId: 12 },
        _meta: { [MCP_PAYMENT_META]: payment },
      });
      expect(paid.isError).toBeFalsy();
      const replay = await call("intel", { tokenId: 12 }, { [MCP_PAYMENT_META]: payment });
      expect(paymentRequiredIn(replay).error).toMatch(/^payment_already_used: /);
      expect(before - (await t.balance(address(8)))).toBe(1_000_000n);
    } finally {
      await v2.close();
    }
  });

  it("acknowledges a 2026-07-28 subscriptions/listen and completes it at once: no stream is held open", async () => {
    const res = await fetch(`${t.server.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "subscriptions/listen",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "subscriptions/listen",
        params: { notifications: { toolsListChanged: true }, _meta: envelope2026 },
      }),
    });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    // The whole body arrives: the stream ends by itself.
    const events = (await res.text()).split("\n").filter((line) => line.startsWith("data: "));
    expect(events.map((line) => JSON.parse(line.slice(6)))).toMatchObject([
      { method: "notifications/subscriptions/acknowledged", params: { notifications: {} } },
      { id: 7, result: { resultType: "complete" } },
    ]);
  });

  it("a 2025-11-25 client (MCP SDK 2.x without negotiation): the handshake, and a whole session", async () => {
    const v2 = new ClientV2({ name: "mcp-test-v2-legacy", version: "1.0.0" });
    await v2.connect(new StreamableHTTPClientTransportV2(new URL(`${t.server.url}/mcp`)));
    try {
      expect(v2.getNegotiatedProtocolVersion()).toBe("2025-11-25");
      await stockClientSession(
        {
          listTools: () => v2.listTools(),
          callTool: (name, args, meta) =>
            v2.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }) as Promise<CallToolResult>,
        },
        6,
        10,
      );
    } finally {
      await v2.close();
    }
  });

  it("a 2025-06-18 client (MCP SDK 1.24.0, the last to ask for it): the handshake, and a whole session", async () => {
    const old = new Client2025({ name: "mcp-test-2025-06-18", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport2025(new URL(`${t.server.url}/mcp`));
    await old.connect(transport);
    try {
      expect(transport.protocolVersion).toBe("2025-06-18");
      await stockClientSession(
        {
          listTools: () => old.listTools(),
          callTool: (name, args, meta) =>
            old.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }) as Promise<CallToolResult>,
        },
        7,
        11,
      );
    } finally {
      await old.close();
    }
  });
});

/** One JSON-RPC request to the endpoint, as a client written to the texts sends it; its result (or error). */
async function rpc(
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<{ result?: Record<string, unknown>; error?: unknown }> {
  const res = await fetch(`${t.server.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const text = await res.text();
  // One JSON body, or the answer as the last event of a stream.
  const json = res.headers.get("content-type")?.startsWith("text/event-stream")
    ? text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => JSON.parse(line.slice(6)))
        .find((message) => message.id === 1)
    : JSON.parse(text);
  return json;
}

/** A request of MCP 2026-07-28: the revision's headers, and the envelope with these client capabilities. */
function rpc2026(method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = {}) {
  const name: Record<string, string> = typeof params.name === "string" ? { "mcp-name": params.name } : {};
  return rpc(
    method,
    {
      ...params,
      _meta: {
        ...(params._meta as Record<string, unknown> | undefined),
        ...envelope2026,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
      },
    },
    { "mcp-protocol-version": "2026-07-28", "mcp-method": method, ...name },
  );
}

/** What a client of x402's extension binding names in its per-request capabilities. */
const withX402Extension = { extensions: { "org.x402/payment": {} } };

describe("refusals as x402's MCP transport text defines them (specs/transports-v2/mcp.md)", () => {
  it("2025-11-25: the tool-result binding, and no extension offered at initialize, asked for or not", async () => {
    const init = await rpc(
      "initialize",
      {
        protocolVersion: "2025-11-25",
        capabilities: withX402Extension,
        clientInfo: { name: "x402-text-client", version: "1.0.0" },
      },
      {},
    );
    expect(init.result).toMatchObject({ protocolVersion: "2025-11-25", capabilities: { tools: {} } });
    expect((init.result!.capabilities as Record<string, unknown>).extensions).toBeUndefined();
    const { result } = await rpc(
      "tools/call",
      { name: "intel", arguments: { tokenId: 3 } },
      { "mcp-protocol-version": "2025-11-25" },
    );
    expect(result!.resultType).toBeUndefined();
    expect(paymentRequiredIn(result as CallToolResult).accepts[0]!.amount).toBe("1000000");
  });

  it("2026-07-28 without org.x402/payment: the tool-result binding, in a result that says it is complete", async () => {
    const { result } = await rpc2026("tools/call", { name: "intel", arguments: { tokenId: 3 } });
    expect(result!.resultType).toBe("complete");
    expect(paymentRequiredIn(result as CallToolResult).error).toMatch(/^payment_required: /);
  });

  it("2026-07-28 with org.x402/payment: discovered, payment_required, paid, and refused again on a replay", async () => {
    const discovered = await rpc2026("server/discover", {}, withX402Extension);
    expect(discovered.result).toMatchObject({ capabilities: { tools: {}, extensions: { "org.x402/payment": {} } } });

    const unpaid = await rpc2026("tools/call", { name: "intel", arguments: { tokenId: 3 } }, withX402Extension);
    const quote = paymentRequiredOfExtension(unpaid.result!);
    expect(quote.error).toMatch(/^payment_required: /);
    expect(quote.resource.url).toBe("mcp://tool/intel");

    const payment = await paymentPayload(2, quote);
    const before = await t.balance(address(2));
    const paid = await rpc2026(
      "tools/call",
      { name: "intel", arguments: { tokenId: 3 }, _meta: { [MCP_PAYMENT_META]: payment } },
      withX402Extension,
    );
    expect(paid.result).toMatchObject({ resultType: "complete", structuredContent: { tokenId: 3 } });
    expect(paid.result!.isError).toBeFalsy();
    const meta = paid.result!._meta as Record<string, unknown>;
    expect(settlementResponseSchema.parse(meta["x402/payment-response"])).toMatchObject({
      success: true,
      payer: address(2),
    });

    const replay = await rpc2026(
      "tools/call",
      { name: "intel", arguments: { tokenId: 3 }, _meta: { [MCP_PAYMENT_META]: payment } },
      withX402Extension,
    );
    expect(paymentRequiredOfExtension(replay.result!).error).toMatch(/^payment_already_used: /);
    expect(before - (await t.balance(address(2)))).toBe(1_000_000n);

    // An error no payment can make right is an error result still, not payment_required.
    const invalid = await rpc2026("tools/call", { name: "intel", arguments: { tokenId: 0 } }, withX402Extension);
    expect(errorBodyIn(invalid.result as CallToolResult)).toMatchObject({ error: { code: "invalid_request" } });
  });
});

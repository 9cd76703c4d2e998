/**
 * A broad sweep of the service's refusals, as a caller meets them: bad input on each tool route, bad payment and
 * sign-in headers, unknown routes, bodies that are not JSON, the operator's routes without a sign-in or with bad
 * fields, and the same refusals over MCP. Each message is a whole sentence (it ends with a full stop or a mark like
 * one, and is not cut), names the offending field, and carries no library's raw text (Zod's or viem's wording, a
 * stack trace).
 */
import {
  errorBodySchema,
  LEDGER_PATH,
  MCP_PAYMENT_META,
  MCP_SIGN_IN_META,
  mcpPaidToolNames,
  type PaidRouteName,
  paidRoutes,
  REFUNDS_PATH,
  requestFields,
} from "@agent-tools/schema";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type { PaymentRequired } from "@x402/core/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorBodyIn, paymentRequiredIn } from "./helpers/mcp-results.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";

/** A POST of `body` as it is written, with `contentType`. */
const postText = (url: string, body: string, contentType: string) =>
  fetch(url, { method: "POST", headers: { "content-type": contentType }, body });

/** What a library says in its own words, which a caller of this service must never read. */
const RAW_LIBRARY_TEXT = [
  /Invalid input/,
  /Invalid (option|string|number|key|element|enum value)/,
  /expected \w+, received/,
  /Too (big|small):/,
  /Unrecognized key/,
  /\bZod/i,
  /Version: viem@/,
  /Details: /,
  /Docs: https:\/\/viem\.sh/,
  /fetch failed/,
  /^\s{4}at /m,
  /\[object Object\]/,
];

/** A refusal's sentence: whole (ends with a full stop or a mark like one), and in the service's own words. */
function expectWholeSentence(message: string, what: string): void {
  expect(message.trim(), `${what}: a sentence`).toMatch(/^\S/);
  expect(message.trim(), `${what}: ends as a sentence, not cut`).toMatch(/[.!?]["')\]]?$/);
  for (const raw of RAW_LIBRARY_TEXT) expect(message, `${what}: no library text`).not.toMatch(raw);
}

let t: PaidTestServer;
let mcp: Client;

beforeAll(async () => {
  t = await startPaidTestServer();
  mcp = new Client({ name: "refusals-test", version: "1.0.0" });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${t.server.url}/mcp`)));
}, 120_000);
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

/** An error answer: its status, and a body of the contract's shape whose message and fields are checked. */
async function errorOf(res: Response, what: string) {
  const body = errorBodySchema.parse(await res.json());
  expectWholeSentence(body.error.message, what);
  return { status: res.status, ...body.error };
}

/** A 402's `error`: a refusal reason, then a whole sentence. */
async function refusalOf(res: Response, what: string): Promise<string> {
  expect(res.status, what).toBe(402);
  const required = (await res.json()) as PaymentRequired;
  expect(required.error, what).toMatch(/^[a-z0-9_]+: /);
  expectWholeSentence(required.error!.replace(/^[a-z0-9_]+: /, ""), what);
  return required.error!;
}

/** Bad values for a route's fields: a number field given text, an enum given a value it does not take. */
function badFieldsOf(name: PaidRouteName): [field: string, value: unknown][] {
  const cases: [string, unknown][] = [["tokenId", "abc"]];
  for (const field of requestFields(paidRoutes[name].request)) {
    if (field.name === "tokenId") continue;
    if (field.kind === "number") cases.push([field.name, "abc"]);
    else if (field.kind === "enum") cases.push([field.name, "not-a-value"]);
    else if (field.kind === "array") cases.push([field.name, "not-a-list"]);
    else if (field.kind === "boolean") cases.push([field.name, "maybe"]);
  }
  return cases;
}

describe("the HTTP API's refusals", () => {
  it.each(Object.keys(paidRoutes) as PaidRouteName[])(
    "%s: each bad field is refused in a whole sentence naming it, in the service's words",
    async (name) => {
      const route = paidRoutes[name];
      for (const [field, value] of badFieldsOf(name)) {
        const body = { ...route.sampleInput, [field]: value };
        const what = `${route.path} with ${field}=${JSON.stringify(value)}`;
        // A route with one method (the mission list is GET /dispatch) is called with it, its fields as a query.
        const res =
          "method" in route && route.method === "get"
            ? await t.get(`${route.path}?${new URLSearchParams(body as unknown as Record<string, string>)}`)
            : await t.post(route.path, body);
        const error = await errorOf(res, what);
        expect(error.status, what).toBe(400);
        expect(
          error.details.map((d) => d.field),
          what,
        ).toContain(field);
        expect(error.message, what).toContain(field);
        for (const detail of error.details) {
          for (const raw of RAW_LIBRARY_TEXT) expect(detail.message, what).not.toMatch(raw);
        }
      }
    },
  );

  it("a mission's params are refused in the service's words, naming the param", async () => {
    const error = await errorOf(
      await t.post("/dispatch", { tokenId: 5, mission: { tool: "allowlist-scan", params: { limit: "abc" } } }),
      "dispatch with limit=abc",
    );
    expect(error.status).toBe(400);
    expect(error.details).toEqual([{ field: "mission.params.limit", message: "must be a number" }]);
    expect(error.message).toContain("mission.params.limit: must be a number");
  });

  it("a body that is not JSON, not an object, or not sent as JSON is refused in a whole sentence", async () => {
    const malformed = await errorOf(
      await postText(`${t.server.url}/intel`, "{not json", "application/json"),
      "malformed JSON",
    );
    expect(malformed).toMatchObject({ status: 400, code: "malformed_json" });
    const notObject = await errorOf(await t.post("/intel", [1, 2]), "an array body");
    expect(notObject).toMatchObject({ status: 400, code: "invalid_request" });
    const notJson = await errorOf(
      await postText(`${t.server.url}/intel`, "tokenId=1", "application/x-www-form-urlencoded"),
      "a form body",
    );
    expect(notJson.status).toBe(400);
    expect(notJson.message).toMatch(/Content-Type: application\/json/);
  });

  it("an unknown route, or a token that does not exist, is refused in a whole sentence naming it", async () => {
    const unknown = await errorOf(await t.get("/nope"), "an unknown route");
    expect(unknown).toMatchObject({ status: 404, code: "not_found" });
    expect(unknown.message).toContain("GET /nope");
    const agent = await errorOf(await t.get("/agents/info/abc"), "an agent id that is not a number");
    expect(agent.status).toBe(400);
    const missing = await errorOf(await t.post("/intel", { tokenId: 6667 }), "a token out of range");
    expect(missing.details.map((d) => d.field)).toEqual(["tokenId"]);
  });

  it("bad payment headers are refused with a reason and a whole sentence naming the header", async () => {
    const intel = (headers: Record<string, string>) => t.post("/intel", { tokenId: 7 }, headers);
    expect(await refusalOf(await intel({}), "no payment")).toBe(
      "payment_required: pay with x402 version 2 (PAYMENT-SIGNATURE).",
    );
    expect(await refusalOf(await intel({ "PAYMENT-SIGNATURE": "not base64 at all!" }), "garbage payment")).toMatch(
      /^invalid_payment: the payment \(PAYMENT-SIGNATURE\) cannot be read/,
    );
    const notV2 = Buffer.from(JSON.stringify({ x402Version: 1, payload: {} })).toString("base64");
    expect(await refusalOf(await intel({ "PAYMENT-SIGNATURE": notV2 }), "a v1 payload")).toMatch(
      /^unsupported_x402_version: /,
    );
    expect(await refusalOf(await intel({ "X-PAYMENT": notV2 }), "x402 v1's header")).toMatch(/X-PAYMENT/);
    const quote = await t.quote({ path: "/intel", body: { tokenId: 7 } });
    const paid = JSON.parse(Buffer.from(await t.pay(3, quote), "base64").toString("utf8"));
    const wrongAmount = { ...paid, accepted: { ...paid.accepted, amount: "1" } };
    const encoded = Buffer.from(JSON.stringify(wrongAmount)).toString("base64");
    expect(await refusalOf(await intel({ "PAYMENT-SIGNATURE": encoded }), "another amount")).toMatch(
      /^invalid_payment: the payment's amount is 1, the price quoted has 1000000\.$/,
    );
    const broken = { ...paid, payload: { ...paid.payload, signature: "nope" } };
    const brokenHeader = Buffer.from(JSON.stringify(broken)).toString("base64");
    expect(await refusalOf(await intel({ "PAYMENT-SIGNATURE": brokenHeader }), "a broken signature")).toMatch(
      /payload\.signature/,
    );
  });

  it("a bad sign-in is refused with a reason and a whole sentence naming the header", async () => {
    const intel = (signIn: string) => t.post("/intel", { tokenId: 1 }, { "SIGN-IN-WITH-X": signIn });
    expect(await refusalOf(await intel("not a sign-in"), "a garbage sign-in")).toMatch(
      /^invalid_siwx: SIGN-IN-WITH-X is not a valid sign-in payload/,
    );
    const forAnotherRoute = await t.signIn(1, "/portfolio");
    expect(await refusalOf(await intel(forAnotherRoute), "a sign-in for another route")).toMatch(
      /^invalid_siwx: invalid_siwx_uri: the sign-in is for \/portfolio, not \/intel/,
    );
    const ledger = await errorOf(await t.get(LEDGER_PATH), "the ledger without a sign-in");
    expect(ledger).toMatchObject({ status: 401, code: "sign_in_required" });
    expect(ledger.details.map((d) => d.field)).toEqual(["SIGN-IN-WITH-X"]);
    const garbage = await errorOf(
      await t.get(LEDGER_PATH, { "SIGN-IN-WITH-X": "not a sign-in" }),
      "the ledger with a garbage sign-in",
    );
    expect(garbage.status).toBe(401);
  });

  it("the operator's routes refuse bad fields in whole sentences naming them", async () => {
    const operator = async (path: string) => ({ "SIGN-IN-WITH-X": await t.signIn(0, path) });
    const query = await errorOf(
      await t.get(`${LEDGER_PATH}?from=yesterday`, await operator(LEDGER_PATH)),
      "the ledger from yesterday",
    );
    expect(query.status).toBe(400);
    expect(query.details.map((d) => d.field)).toEqual(["from"]);
    const refund = await errorOf(
      await t.post(REFUNDS_PATH, { payer: "0x12", nonce: "0x34", transaction: "nope" }, await operator(REFUNDS_PATH)),
      "a refund of bad fields",
    );
    expect(refund.status).toBe(400);
    expect(refund.details.map((d) => d.field).sort()).toEqual(["nonce", "payer", "transaction"]);
  });
});

describe("the MCP endpoint's refusals", () => {
  const call = (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
    // The plain result: refusals are checked here, not by the SDK's output-schema check.
    mcp.request(
      { method: "tools/call", params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } },
      CallToolResultSchema,
    ) as Promise<CallToolResult>;

  it("bad input, an unknown tool, a bad payment and a bad sign-in: whole sentences naming MCP's own fields", async () => {
    const invalid = errorBodyIn(await call(mcpPaidToolNames.intel, { tokenId: "abc" }));
    expectWholeSentence(invalid.error.message, "MCP intel with tokenId abc");
    expect(invalid.error.details.map((d) => d.field)).toEqual(["tokenId"]);
    const unknown = errorBodyIn(await call("no_such_tool", {}));
    expectWholeSentence(unknown.error.message, "an unknown MCP tool");
    expect(unknown.error.message).toContain("no_such_tool");
    const garbage = paymentRequiredIn(await call(mcpPaidToolNames.intel, { tokenId: 7 }, { [MCP_PAYMENT_META]: 42 }));
    expect(garbage.error).toMatch(/^invalid_payment: the payment \(_meta\["x402\/payment"\]\) cannot be read/);
    expectWholeSentence(garbage.error!, "a payment that is a number");
    const badSignIn = paymentRequiredIn(
      await call(mcpPaidToolNames.intel, { tokenId: 7 }, { [MCP_SIGN_IN_META]: { nope: true } }),
    );
    expectWholeSentence(badSignIn.error!, "a sign-in that is not one");
    expect(badSignIn.error).toContain(`_meta["${MCP_SIGN_IN_META}"]`);
  });
});

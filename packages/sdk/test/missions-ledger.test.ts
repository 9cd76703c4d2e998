import { paidRoutes, paymentRequirementsFor, queryToInput } from "@agent-tools/schema";
import { decodePaymentSignatureHeader, encodePaymentResponseHeader } from "@x402/core/http";
import { parseSIWxHeader } from "@x402/extensions/sign-in-with-x";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import {
  createAgentToolsClient,
  type DispatchInput,
  ForbiddenError,
  inputToQuery,
  type LedgerReport,
  NetworkError,
  PaymentRequiredError,
  ServiceError,
  UnauthorizedError,
  UnexpectedResponseError,
  ValidationError,
} from "../src/index.js";

const BASE = "http://agent-tools.test";
/** Public test key of the standard mnemonic (devnet only). */
const account = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const PAY_TO = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const ASSET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

interface Seen {
  method: string;
  url: string;
  headers: Headers;
  body: string | undefined;
}

/** A fake `fetch`: records each request and answers with `answer(request, index)`. */
function fakeFetch(answer: (request: Seen, index: number) => Response | Promise<Response>) {
  const seen: Seen[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request: Seen = {
      method: init?.method ?? "GET",
      url: String(input),
      headers: new Headers(init?.headers),
      body: init?.body === undefined || init.body === null ? undefined : String(init.body),
    };
    seen.push(request);
    return answer(request, seen.length - 1);
  };
  return { fetch, seen };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
const errorBody = (code: string, message: string, details: { field: string; message: string }[] = []) => ({
  error: { code, message, details },
});

/** A 402 quoting `amount` on a local payment chain, with the sign-in extension. */
function challenge(amount: string) {
  const accepts = [
    paymentRequirementsFor(
      {
        network: "eip155:31338",
        asset: ASSET,
        payTo: PAY_TO,
        assetName: "USD Coin",
        assetVersion: "2",
        maxTimeoutSeconds: 60,
      },
      amount,
      "test",
    ),
  ];
  return json(402, {
    x402Version: 2,
    error: "payment_required",
    resource: { url: `${BASE}/dispatch`, description: "test", mimeType: "application/json" },
    accepts,
    extensions: { "sign-in-with-x": { supportedChains: [{ chainId: "eip155:31337", type: "eip191" }] } },
  });
}
const settled = (amount: string) => ({
  "payment-response": encodePaymentResponseHeader({
    success: true,
    transaction: `0x${"ab".repeat(32)}`,
    network: "eip155:31338",
    payer: account.address,
    amount,
  } as never),
});

/** One payment of 0.01 USD, nothing refunded. */
const paid = { payments: 1, amount: "10000", usd: "0.01", refunds: 0, refunded: "0", net: "10000", netUsd: "0.01" };
const ledgerReport: LedgerReport = {
  generatedAt: "2026-11-22T12:00:00.000Z",
  from: "2026-10-24",
  to: "2026-11-22",
  asset: ASSET,
  network: "eip155:31338",
  total: { ...paid },
  byRoute: [{ route: "/intel", ...paid }],
  byDay: [{ day: "2026-11-22", ...paid }],
  byDayAndRoute: [{ day: "2026-11-22", route: "/intel", ...paid }],
  byDayRouteAndPricePoint: [{ day: "2026-11-22", route: "/intel", pricePoint: "discounted", ...paid }],
  unconfirmed: 0,
  entries: [
    {
      kind: "payment",
      route: "/intel",
      method: "POST",
      tokenId: 1,
      payer: account.address,
      caller: account.address,
      pricePoint: "discounted",
      amount: "10000",
      asset: ASSET,
      network: "eip155:31338",
      nonce: `0x${"ef".repeat(32)}`,
      transaction: `0x${"cd".repeat(32)}`,
      cumulative: null,
      ceiling: "10000",
      work: null,
      settledAt: "2026-11-22T11:59:00.000Z",
      requestId: "req-1",
      note: null,
    },
  ],
  brief: "1 payment of 0.01 USD settled from 2026-10-24 to 2026-11-22.",
};

const OPERATOR_CHALLENGE = 'SIWX realm="agent-tools operator", chains="eip155:31337 eip155:31338"';

describe("refused payments", () => {
  it("carry the service's reason, typed, whatever the sentence says", async () => {
    const { fetch } = fakeFetch((request) =>
      request.headers.has("payment-signature")
        ? json(402, {
            x402Version: 2,
            error: "payment_in_use: another request holds this authorization",
            resource: { url: `${BASE}/intel` },
            accepts: [],
          })
        : challenge("1000000"),
    );
    const error = await createAgentToolsClient({ baseUrl: BASE, account, signIn: false, fetch })
      .intel({ tokenId: 1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentRequiredError);
    expect((error as PaymentRequiredError).reason).toBe("payment_in_use");
    expect((error as PaymentRequiredError).message).toBe(
      "The payment was refused: another request holds this authorization",
    );
  });

  it("say why the client itself stopped: a quote over the cap, or no account to pay with", async () => {
    const { fetch, seen } = fakeFetch(() => challenge("1000000"));
    const over = await createAgentToolsClient({
      baseUrl: BASE,
      account,
      signIn: false,
      fetch,
      maxPaymentPerCall: "0.5",
    })
      .intel({ tokenId: 1 })
      .catch((e: unknown) => e);
    expect((over as PaymentRequiredError).reason).toBe("over_max_payment");
    const none = await createAgentToolsClient({ baseUrl: BASE, fetch })
      .intel({ tokenId: 1 })
      .catch((e: unknown) => e);
    expect((none as PaymentRequiredError).reason).toBe("no_account");
    expect(seen.every((request) => !request.headers.has("payment-signature"))).toBe(true);
  });

  it("hold each call's price while it runs: ten calls at once under a day of 0.05 USD sign five payments", async () => {
    // The paid answers wait until every call has been decided, so that each decision sees the others only as held.
    let release = () => {};
    const allDecided = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { fetch, seen } = fakeFetch(async (request) => {
      if (!request.headers.has("payment-signature")) return challenge("10000");
      await allDecided;
      return json(200, paidRoutes.intel.sampleOutput, settled("10000"));
    });
    const client = createAgentToolsClient({ baseUrl: BASE, account, signIn: false, fetch, maxPerDay: "0.05" });
    const calls = Array.from({ length: 10 }, () => client.intel({ tokenId: 1 }).catch((error: unknown) => error));
    const refusals = calls.slice(5).map(async (call) => (await call) as PaymentRequiredError);
    // Five are refused while the first five are still held, before any of them is answered.
    for (const refusal of await Promise.all(refusals)) {
      expect(refusal.reason).toBe("over_daily_limit");
      expect(refusal.limit).toMatchObject({ spentUnits: 50_000n, overByUnits: 10_000n });
    }
    release();
    const paidCalls = await Promise.all(calls.slice(0, 5));
    expect(paidCalls.map((call) => (call as { payment: { amount: string } }).payment.amount)).toEqual(
      Array(5).fill("10000"),
    );
    expect(seen.filter((request) => request.headers.has("payment-signature"))).toHaveLength(5);
    // The day is spent: the next call is refused, and its message counts what was charged.
    const next = (await client.intel({ tokenId: 1 }).catch((error: unknown) => error)) as PaymentRequiredError;
    expect(next.message).toBe(
      "intel costs 0.01 USD and 0.05 USD was spent in the last 24 hours, against maxPerDay 0.05 USD (0.01 USD over); nothing was paid.",
    );
  });

  it("count against the day what a payment authorized, not a lower charge the service reports", async () => {
    const { fetch, seen } = fakeFetch((request) =>
      request.headers.has("payment-signature")
        ? json(200, paidRoutes.intel.sampleOutput, settled("1"))
        : challenge("10000"),
    );
    const client = createAgentToolsClient({ baseUrl: BASE, account, signIn: false, fetch, maxPerDay: "0.015" });
    await client.intel({ tokenId: 1 });
    const over = (await client.intel({ tokenId: 1 }).catch((error: unknown) => error)) as PaymentRequiredError;
    expect(over.reason).toBe("over_daily_limit");
    expect(over.limit).toMatchObject({ spentUnits: 10_000n, overByUnits: 5_000n });
    expect(seen.filter((request) => request.headers.has("payment-signature"))).toHaveLength(1);
  });

  it("keep to the client's budget, as the MCP client does: a quote that would pass it is refused before signing", async () => {
    const { fetch, seen } = fakeFetch((request) =>
      request.headers.has("payment-signature")
        ? json(200, paidRoutes.intel.sampleOutput, settled("1000000"))
        : challenge("1000000"),
    );
    const client = createAgentToolsClient({ baseUrl: BASE, account, signIn: false, fetch, budget: "1.50" });
    expect((await client.intel({ tokenId: 1 })).payment?.amount).toBe("1000000");
    const over = await client.intel({ tokenId: 1 }).catch((e: unknown) => e);
    expect(over).toBeInstanceOf(PaymentRequiredError);
    expect((over as PaymentRequiredError).reason).toBe("over_budget");
    expect((over as PaymentRequiredError).message).toBe(
      "intel costs 1.00 USD and 1.00 USD of budget 1.50 USD is spent (0.50 USD over); nothing was paid.",
    );
    expect(client.spentUsd()).toBe("1.00");
    expect(seen.filter((request) => request.headers.has("payment-signature"))).toHaveLength(1);
  });
});

describe("GET query parameters", () => {
  it("writes scalars as text and arrays as repeated parameters, leaving out undefined fields", () => {
    expect(inputToQuery({ tokenId: 3, status: "done", limit: undefined, slugs: ["a b", "c"], flag: false })).toBe(
      "?tokenId=3&status=done&slugs=a+b&slugs=c&flag=false",
    );
    expect(inputToQuery({})).toBe("");
    expect(() => inputToQuery({ mission: { tool: "intel" } })).toThrow(TypeError);
  });

  it("is the inverse of queryToInput", () => {
    const input = { tokenId: 7, slugs: ["night-owls", "tide-pool"] };
    const query = new URLSearchParams(inputToQuery(input));
    const back = queryToInput(paidRoutes.offerRadar.request, {
      tokenId: query.get("tokenId") ?? undefined,
      slugs: query.getAll("slugs"),
    });
    expect(back).toEqual(input);
  });

  it("missions() sends GET /dispatch with the query and no body, and validates the answer", async () => {
    const { fetch, seen } = fakeFetch(() => json(200, paidRoutes.missions.sampleOutput));
    const client = createAgentToolsClient({ baseUrl: `${BASE}/`, fetch });
    const { data, payment } = await client.missions({ tokenId: 3, status: "done", limit: 5 });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: "GET", url: `${BASE}/dispatch?tokenId=3&status=done&limit=5` });
    expect(seen[0]!.body).toBeUndefined();
    expect(seen[0]!.headers.has("content-type")).toBe(false);
    expect(data.counts.done).toBe(1);
    expect(payment).toBeNull();
  });

  it("a paid GET signs in, pays, and sends the same query again with the payment", async () => {
    const { fetch, seen } = fakeFetch((request) =>
      request.headers.has("payment-signature")
        ? json(200, paidRoutes.missions.sampleOutput, settled("10000"))
        : challenge("10000"),
    );
    const client = createAgentToolsClient({ baseUrl: BASE, account, fetch });
    const { data, payment } = await client.missions({ tokenId: 3 });
    expect(data.tokenId).toBe(3);
    expect(payment).toMatchObject({ amount: "10000", amountUsd: "0.01", payer: account.address });
    // Unsigned ask, signed ask, paid ask: all the same GET.
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(Array(3).fill(`GET ${BASE}/dispatch?tokenId=3`));
    expect(seen.every((r) => r.body === undefined)).toBe(true);
    const signIn = parseSIWxHeader(seen[2]!.headers.get("sign-in-with-x")!);
    expect(signIn.uri).toBe(`${BASE}/dispatch?tokenId=3`);
    expect(decodePaymentSignatureHeader(seen[2]!.headers.get("payment-signature")!).accepted.amount).toBe("10000");
  });

  it("refuses a missions query that fails the contract before sending", async () => {
    const { fetch, seen } = fakeFetch(() => json(500, {}));
    const error = await createAgentToolsClient({ baseUrl: BASE, fetch })
      .missions({ tokenId: 3, status: "lost" as never, limit: 500 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).fields.sort()).toEqual(["limit", "status"]);
    expect(seen).toHaveLength(0);
  });
});

describe("dispatch (202 Accepted)", () => {
  const input: DispatchInput = {
    tokenId: 3,
    mission: { tool: "allowlist-scan", params: { type: "upcoming", limit: 10 } },
    runAt: "2026-11-23T08:00:00.000Z",
  };

  it("POSTs the mission as JSON and takes 202 as success, with the payment", async () => {
    const { fetch, seen } = fakeFetch((request) =>
      request.headers.has("payment-signature")
        ? json(202, paidRoutes.dispatch.sampleOutput, settled("1000000"))
        : challenge("1000000"),
    );
    const client = createAgentToolsClient({ baseUrl: BASE, account, signIn: false, fetch });
    const { data, payment } = await client.dispatch({
      ...input,
      runAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(data.mission).toMatchObject({ tool: "allowlist-scan", status: "queued" });
    expect(payment).toMatchObject({ amount: "1000000", amountUsd: "1.00" });
    expect(seen).toHaveLength(2);
    expect(seen[1]).toMatchObject({ method: "POST", url: `${BASE}/dispatch` });
    expect(seen[1]!.headers.get("content-type")).toBe("application/json");
    expect(JSON.parse(seen[1]!.body!).mission).toEqual(input.mission);
    expect(seen[1]!.headers.has("sign-in-with-x")).toBe(false);
  });

  it("a 202 without payment is returned with payment null", async () => {
    const { fetch } = fakeFetch(() => json(202, paidRoutes.dispatch.sampleOutput));
    const { data, payment } = await createAgentToolsClient({ baseUrl: BASE, fetch }).dispatch({
      tokenId: 3,
      mission: { tool: "intel" },
    });
    expect(data.mission.id).toBe(paidRoutes.dispatch.sampleOutput.mission.id);
    expect(payment).toBeNull();
  });

  it("rejects a 202 whose mission breaks the contract", async () => {
    const { fetch } = fakeFetch(() => json(202, { ...paidRoutes.dispatch.sampleOutput, mission: { id: "x" } }));
    await expect(
      createAgentToolsClient({ baseUrl: BASE, fetch }).dispatch({ tokenId: 3, mission: { tool: "intel" } }),
    ).rejects.toBeInstanceOf(UnexpectedResponseError);
  });

  it("checks the mission's params against the tool's own request fields before sending", async () => {
    const { fetch, seen } = fakeFetch(() => json(500, {}));
    const error = await createAgentToolsClient({ baseUrl: BASE, fetch })
      .dispatch({ tokenId: 3, mission: { tool: "allowlist-scan", params: { limit: 999 } } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).fields).toEqual(["mission.params.limit"]);
    expect(seen).toHaveLength(0);
  });

  it("maps 403 agent_not_revealed to ForbiddenError", async () => {
    const { fetch } = fakeFetch(() => json(403, errorBody("agent_not_revealed", "Agent 6001 is not revealed yet.")));
    const error = await createAgentToolsClient({ baseUrl: BASE, fetch })
      .dispatch({ tokenId: 6001, mission: { tool: "intel" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as ForbiddenError).code).toBe("agent_not_revealed");
  });
});

describe("ledger", () => {
  it("without an account throws UnauthorizedError and sends nothing", async () => {
    const { fetch, seen } = fakeFetch(() => json(200, ledgerReport));
    const error = await createAgentToolsClient({ baseUrl: BASE, fetch })
      .ledger()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).code).toBe("sign_in_required");
    expect((error as UnauthorizedError).message).toMatch(/operator's account/);
    expect(seen).toHaveLength(0);
  });

  it("signs in on the first chain WWW-Authenticate names, bound to the URL, fresh each request", async () => {
    const { fetch, seen } = fakeFetch((request) =>
      request.headers.has("sign-in-with-x")
        ? json(200, ledgerReport)
        : json(401, errorBody("sign_in_required", "Sign in."), { "www-authenticate": OPERATOR_CHALLENGE }),
    );
    const client = createAgentToolsClient({ baseUrl: BASE, account, signIn: false, fetch });
    const report = await client.ledger({ from: "2026-11-01", to: "2026-11-22", limit: 5 });
    expect(report.total.usd).toBe("0.01");
    const url = `${BASE}/operator/ledger?from=2026-11-01&to=2026-11-22&limit=5`;
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([`GET ${url}`, `GET ${url}`]);
    const first = parseSIWxHeader(seen[1]!.headers.get("sign-in-with-x")!);
    expect(first).toMatchObject({ chainId: "eip155:31337", uri: url, address: account.address });
    // The chain is remembered: the next call signs in on its first request, with a new nonce.
    await client.ledger();
    expect(seen).toHaveLength(3);
    expect(seen[2]!.url).toBe(`${BASE}/operator/ledger`);
    const second = parseSIWxHeader(seen[2]!.headers.get("sign-in-with-x")!);
    expect(second.nonce).not.toBe(first.nonce);
  });

  it("maps 403 not_operator to ForbiddenError", async () => {
    const { fetch } = fakeFetch((request) =>
      request.headers.has("sign-in-with-x")
        ? json(403, errorBody("not_operator", "Only the operator may read the ledger."))
        : json(401, errorBody("sign_in_required", "Sign in."), { "www-authenticate": OPERATOR_CHALLENGE }),
    );
    const error = await createAgentToolsClient({ baseUrl: BASE, account, fetch })
      .ledger()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as ForbiddenError).code).toBe("not_operator");
    expect((error as ForbiddenError).status).toBe(403);
  });

  it("maps a 401 to a signed request (sign-in refused) to UnauthorizedError with the service's message", async () => {
    const { fetch, seen } = fakeFetch(() =>
      json(401, errorBody("sign_in_required", "The sign-in has expired; sign a new one."), {
        "www-authenticate": OPERATOR_CHALLENGE,
      }),
    );
    const error = await createAgentToolsClient({ baseUrl: BASE, account, fetch })
      .ledger()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).status).toBe(401);
    expect((error as UnauthorizedError).message).toBe("The sign-in has expired; sign a new one.");
    expect(seen).toHaveLength(2);
  });

  it("maps a 401 that names no chain to UnauthorizedError without signing", async () => {
    const { fetch, seen } = fakeFetch(() => json(401, errorBody("sign_in_required", "Sign in.")));
    const error = await createAgentToolsClient({ baseUrl: BASE, account, fetch })
      .ledger()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).message).toMatch(/names no EVM chain/);
    expect(seen).toHaveLength(1);
  });

  it("refuses a query that fails the contract before sending", async () => {
    const { fetch, seen } = fakeFetch(() => json(200, ledgerReport));
    const error = await createAgentToolsClient({ baseUrl: BASE, account, fetch })
      .ledger({ from: "2026-11-22", to: "2026-11-01" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).fields).toEqual(["from"]);
    expect(seen).toHaveLength(0);
  });

  it("retries on network errors with a fresh sign-in each time", async () => {
    const { fetch, seen } = fakeFetch((request, index) => {
      if (!request.headers.has("sign-in-with-x"))
        return json(401, errorBody("sign_in_required", "Sign in."), { "www-authenticate": OPERATOR_CHALLENGE });
      if (index < 3) throw new TypeError("fetch failed");
      return json(200, ledgerReport);
    });
    const report = await createAgentToolsClient({ baseUrl: BASE, account, fetch }).ledger();
    expect(report.entries).toHaveLength(1);
    const nonces = seen
      .filter((r) => r.headers.has("sign-in-with-x"))
      .map((r) => parseSIWxHeader(r.headers.get("sign-in-with-x")!).nonce);
    expect(nonces).toHaveLength(3);
    expect(new Set(nonces).size).toBe(3);
  });

  it("throws NetworkError after three failed attempts", async () => {
    const { fetch, seen } = fakeFetch(() => {
      throw new TypeError("fetch failed");
    });
    await expect(createAgentToolsClient({ baseUrl: BASE, account, fetch }).ledger()).rejects.toBeInstanceOf(
      NetworkError,
    );
    expect(seen).toHaveLength(3);
  });

  it("rejects a report that breaks the contract", async () => {
    const { fetch } = fakeFetch((request) =>
      request.headers.has("sign-in-with-x")
        ? json(200, { ...ledgerReport, total: null })
        : json(401, errorBody("sign_in_required", "Sign in."), { "www-authenticate": OPERATOR_CHALLENGE }),
    );
    await expect(createAgentToolsClient({ baseUrl: BASE, account, fetch }).ledger()).rejects.toBeInstanceOf(
      UnexpectedResponseError,
    );
  });
});

describe("recordRefund", () => {
  const refund = {
    payer: account.address,
    nonce: `0x${"ef".repeat(32)}`,
    transaction: `0x${"12".repeat(32)}`,
    note: "late answer",
  };
  const recorded = {
    refund: {
      ...ledgerReport.entries[0]!,
      kind: "refund",
      amount: "5000",
      transaction: refund.transaction,
      note: refund.note,
    },
    payment: { amount: "10000", refunded: "5000", remaining: "5000" },
    brief: "Recorded: a refund of 0.01 USD.",
  };

  it("POSTs the refund as JSON, signed in for the refunds URL, and takes 201 as success", async () => {
    const { fetch, seen } = fakeFetch((request) =>
      request.headers.has("sign-in-with-x")
        ? json(201, recorded)
        : json(401, errorBody("sign_in_required", "Sign in."), { "www-authenticate": OPERATOR_CHALLENGE }),
    );
    const answer = await createAgentToolsClient({ baseUrl: BASE, account, fetch }).recordRefund(refund);
    expect(answer.refund.kind).toBe("refund");
    expect(answer.payment.remaining).toBe("5000");
    const url = `${BASE}/operator/refunds`;
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([`POST ${url}`, `POST ${url}`]);
    expect(JSON.parse(seen[1]!.body!)).toEqual(refund);
    expect(parseSIWxHeader(seen[1]!.headers.get("sign-in-with-x")!)).toMatchObject({ uri: url });
  });

  it("passes a refusal on with its code and field, without sending it again", async () => {
    const { fetch, seen } = fakeFetch((request) =>
      request.headers.has("sign-in-with-x")
        ? json(422, errorBody("refund_exceeds_payment", "Too much.", [{ field: "transaction", message: "Too much." }]))
        : json(401, errorBody("sign_in_required", "Sign in."), { "www-authenticate": OPERATOR_CHALLENGE }),
    );
    const error = await createAgentToolsClient({ baseUrl: BASE, account, fetch })
      .recordRefund(refund)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 422, code: "refund_exceeds_payment" });
    expect((error as ServiceError).details.map((d) => d.field)).toEqual(["transaction"]);
    expect(seen).toHaveLength(2);
  });

  it("refuses a refund that fails the contract before sending", async () => {
    const { fetch, seen } = fakeFetch(() => json(201, recorded));
    const error = await createAgentToolsClient({ baseUrl: BASE, account, fetch })
      .recordRefund({ ...refund, nonce: "0x12" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).fields).toEqual(["nonce"]);
    expect(seen).toHaveLength(0);
  });
});

describe("consoleLink", () => {
  /** The service's public origin, not the address the client reaches it at (BASE). */
  const PUBLIC = "https://tools.example.com";
  const state = { session: null, signIn: { origin: PUBLIC, chains: ["eip155:31337"], maxAgeSeconds: 300 } };
  const page = { from: "2026-11-01", to: "2026-11-30", entries: [], next: null };

  it("signs in for the service's public origin, not baseUrl, after checking the account is the operator", async () => {
    const { fetch, seen } = fakeFetch((request) =>
      request.url.endsWith("/operator/session") ? json(200, state) : json(200, page),
    );
    const before = Date.now();
    const link = await createAgentToolsClient({ baseUrl: BASE, account, fetch }).consoleLink();
    // Both requests go to baseUrl: the session's state, then one ledger entry read signed in for the public origin.
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET ${BASE}/operator/session`,
      `GET ${BASE}/operator/ledger/entries?limit=1`,
    ]);
    expect(parseSIWxHeader(seen[1]!.headers.get("sign-in-with-x")!)).toMatchObject({
      domain: "tools.example.com",
      uri: `${PUBLIC}/operator/ledger/entries?limit=1`,
    });
    // The link: the public origin's console, the sign-in for /operator/session there in the fragment.
    const [where, fragment] = link.url.split("#sign-in=") as [string, string];
    expect(where).toBe(`${PUBLIC}/operator`);
    expect(parseSIWxHeader(decodeURIComponent(fragment))).toMatchObject({
      address: account.address,
      domain: "tools.example.com",
      uri: `${PUBLIC}/operator/session`,
      chainId: "eip155:31337",
    });
    expect(link.address).toBe(account.address);
    expect(Date.parse(link.expiresAt) - before).toBeGreaterThanOrEqual(300_000);
    expect(Date.parse(link.expiresAt) - Date.now()).toBeLessThanOrEqual(300_000);
  });

  it("makes no link for an account that is not the operator, nor without an account", async () => {
    const { fetch } = fakeFetch((request) =>
      request.url.endsWith("/operator/session")
        ? json(200, state)
        : json(403, errorBody("not_operator", `${account.address} is not the operator of this service.`)),
    );
    const error = await createAgentToolsClient({ baseUrl: BASE, account, fetch })
      .consoleLink()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).toMatchObject({ code: "not_operator" });

    const keyless = fakeFetch(() => json(200, state));
    await expect(createAgentToolsClient({ baseUrl: BASE, fetch: keyless.fetch }).consoleLink()).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(keyless.seen).toHaveLength(0);
  });
});

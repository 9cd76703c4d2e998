import { agentCollectionAbi, CLEARANCE_TRAIT_KEY, encodeClearance, usdTokenAbi } from "@agent-tools/contracts";
import {
  inputToQuery,
  intelResponseSchema,
  paidRoutes,
  parsePaymentRefusal,
  paymentRequiredSchema,
} from "@agent-tools/schema";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { PaymentPayloadV1Schema, PaymentRequiredV2Schema } from "@x402/core/schemas";
import type { PaymentRequired } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { type DiscoveryExtension, extractDiscoveryInfo, validateDiscoveryExtension } from "@x402/extensions/bazaar";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceError } from "../src/errors/service-error.js";
import type { PaymentService } from "../src/paid-call/payment-service.js";
import { transferWithAuthorizationTypes } from "../src/schemes/exact/authorization-signer.js";
import { isCountingSettlement } from "../src/schemes/exact/chain-settlements.js";
import { authorizationOf } from "./helpers/authorizations.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";
import { paymentHeader } from "./helpers/x402-client.js";

let t: PaidTestServer;
const address = (index: number) => t.devnet.deployment.accounts[index]!.address;
const payTo = () => address(0);
const asset = () => t.devnet.deployment.addresses.usdToken;

beforeAll(async () => {
  t = await startPaidTestServer({
    tools: {
      // A tool whose upstream is down: the call must cost nothing.
      portfolio: async () => {
        throw new ServiceError("upstream_unavailable", "The marketplace is unavailable.", [], { "Retry-After": "30" });
      },
    },
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

async function challenge(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await t.post(path, body, headers);
  const json = await res.json();
  return { res, json, paymentRequired: json as PaymentRequired };
}

describe("anonymous caller", () => {
  it("is quoted the standard price with the SIWX extension, pays it, and the money moves exactly", async () => {
    const { res, json } = await challenge("/intel", { tokenId: 7 });
    expect(res.status).toBe(402);
    const header = decodePaymentRequiredHeader(res.headers.get("payment-required")!);
    expect(header).toEqual(json);
    const quoted = paymentRequiredSchema.parse(json);
    // exact first, then the same price over a payment channel (channels.test.ts), then as an upto ceiling
    // (upto.test.ts).
    expect(quoted.accepts.map((accept) => accept.scheme)).toEqual(["exact", "batch-settlement", "upto"]);
    expect(quoted.accepts[0]).toMatchObject({
      scheme: "exact",
      network: "eip155:31338",
      amount: "1000000",
      asset: t.devnet.deployment.addresses.usdToken,
      currency: t.devnet.deployment.addresses.usdToken,
      payTo: payTo(),
      recipient: payTo(),
      mimeType: "application/json",
      extra: { name: "USD Coin", version: "2" },
    });
    expect(quoted.extensions?.["sign-in-with-x"]).toMatchObject({ info: { domain: "127.0.0.1:8402" } });
    expect(quoted.extensions?.bazaar).toBeDefined();

    const payer = address(3);
    const [payerBefore, payToBefore] = [await t.balance(payer), await t.balance(payTo())];
    const paid = await t.post("/intel", { tokenId: 7 }, { "PAYMENT-SIGNATURE": await t.pay(3, json) });
    expect(paid.status).toBe(200);
    const body = intelResponseSchema.parse(await paid.json());
    expect(body.tokenId).toBe(7);
    expect(body.caller).toBeUndefined();
    const settlement = decodePaymentResponseHeader(paid.headers.get("payment-response")!);
    expect(settlement.success).toBe(true);
    expect(settlement.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const steps = paid.headers
      .get("server-timing")!
      .split(", ")
      .map((entry) => entry.split(";")[0]);
    expect(steps).toEqual([
      "validate",
      "identify",
      "policy",
      "price",
      "signature",
      "claim",
      "verify",
      "tool",
      "settle",
    ]);
    expect(await t.balance(payer)).toBe(payerBefore - 1_000_000n);
    expect(await t.balance(payTo())).toBe(payToBefore + 1_000_000n);
  });

  it("answers the GET variant through the same path", async () => {
    const res = await fetch(`${t.server.url}/intel?tokenId=7`);
    expect(res.status).toBe(402);
    const json = await res.json();
    const paid = await fetch(`${t.server.url}/intel?tokenId=7`, {
      headers: { "PAYMENT-SIGNATURE": await t.pay(3, json) },
    });
    expect(paid.status).toBe(200);
    expect((await paid.json()).tokenId).toBe(7);
  });
});

describe("signed-in holder", () => {
  it("is quoted the discounted price and, paying it, gets caller = the holder", async () => {
    // Token 1 belongs to account 1; the same SIWX header is carried by the challenge and the paid retry.
    const signIn = await t.signIn(1, "/intel");
    const { res, json } = await challenge("/intel", { tokenId: 1 }, { "SIGN-IN-WITH-X": signIn });
    expect(res.status).toBe(402);
    expect(json.accepts[0].amount).toBe("10000");
    const before = await t.balance(address(1));
    const paid = await t.post(
      "/intel",
      { tokenId: 1 },
      { "SIGN-IN-WITH-X": signIn, "PAYMENT-SIGNATURE": await t.pay(1, json) },
    );
    expect(paid.status).toBe(200);
    expect((await paid.json()).caller).toBe(address(1));
    expect(await t.balance(address(1))).toBe(before - 10_000n);
  });

  it("gets 403 not_token_owner for a token it does not own", async () => {
    const res = await t.post("/intel", { tokenId: 2 }, { "SIGN-IN-WITH-X": await t.signIn(1, "/intel") });
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe("not_token_owner");
  });

  it("gets 403 insufficient_clearance with the clearance needed for a Holder token on /offer-radar", async () => {
    // Token 1 has Holder clearance (Uncommon).
    const res = await t.post(
      "/offer-radar",
      { tokenId: 1, slugs: ["night-owls"] },
      { "SIGN-IN-WITH-X": await t.signIn(1, "/offer-radar") },
    );
    expect(res.status).toBe(403);
    const body = await res.json();
    expect(body.error.code).toBe("insufficient_clearance");
    expect(body.error.details[0].requiredClearance).toBe("Elite");
  });

  it("is let through once the operator raises the token's clearance on chain (within the staleness bound)", async () => {
    const hash = await t.devnet.l1.walletClient(0).writeContract({
      address: t.devnet.deployment.addresses.collection,
      abi: agentCollectionAbi,
      functionName: "setTrait",
      args: [28n, CLEARANCE_TRAIT_KEY, encodeClearance("Elite")],
    });
    await t.devnet.l1.publicClient.waitForTransactionReceipt({ hash });
    t.outlastStaleness();
    const res = await t.post(
      "/offer-radar",
      { tokenId: 28, slugs: ["night-owls"] },
      { "SIGN-IN-WITH-X": await t.signIn(1, "/offer-radar") },
    );
    expect(res.status).toBe(402);
    expect((await res.json()).accepts[0].amount).toBe("10000");
  });
});

describe("invalid sign-in gets 402 with the reason", () => {
  const cases: [string, (path: string) => Promise<string>, RegExp][] = [
    [
      "for another origin",
      (p) => t.signIn(1, p, { domain: "evil.example", uri: `https://evil.example${p}` }),
      /invalid_siwx_domain_mismatch: the sign-in names the domain evil\.example, not this service's/,
    ],
    [
      "too old",
      (p) => t.signIn(1, p, { issuedAt: new Date(Date.now() - 6 * 60_000).toISOString() }),
      /invalid_siwx_issued_at_too_old: the sign-in was issued more than 5 minutes ago; sign in again/,
    ],
    [
      "from the future",
      (p) => t.signIn(1, p, { issuedAt: new Date(Date.now() + 60_000).toISOString() }),
      /invalid_siwx_issued_at_in_future: the sign-in's issuedAt is in the future/,
    ],
    ["on an unsupported chain", (p) => t.signIn(1, p, { chainId: "eip155:1" }), /not supported/],
  ];
  it.each(cases)("%s", async (_name, makeHeader, reason) => {
    const res = await t.post("/intel", { tokenId: 1 }, { "SIGN-IN-WITH-X": await makeHeader("/intel") });
    expect(res.status).toBe(402);
    const { error } = await res.json();
    expect(parsePaymentRefusal(error).reason).toBe("invalid_siwx");
    expect(error).toMatch(reason);
    // The service's words, not x402's sign-in check's ("Message too old: 360s exceeds 300s limit", ...).
    expect(error).not.toMatch(/Message (too old|expired|not yet valid)|(Domain|URI) mismatch|\d+s limit/);
  });

  it("signed by another key (another key's signature on this address's message)", async () => {
    const mine = JSON.parse(Buffer.from(await t.signIn(1, "/intel"), "base64").toString());
    const other = JSON.parse(Buffer.from(await t.signIn(2, "/intel"), "base64").toString());
    const forged = Buffer.from(JSON.stringify({ ...mine, signature: other.signature })).toString("base64");
    const res = await t.post("/intel", { tokenId: 1 }, { "SIGN-IN-WITH-X": forged });
    expect(res.status).toBe(402);
    expect((await res.json()).error).toMatch(/invalid_siwx/);
  });

  it("a nonce already spent on a paid call", async () => {
    const signIn = await t.signIn(1, "/intel");
    const first = await challenge("/intel", { tokenId: 1 }, { "SIGN-IN-WITH-X": signIn });
    const paid = await t.post(
      "/intel",
      { tokenId: 1 },
      { "SIGN-IN-WITH-X": signIn, "PAYMENT-SIGNATURE": await t.pay(1, first.json) },
    );
    expect(paid.status).toBe(200);
    const again = await t.post("/intel", { tokenId: 1 }, { "SIGN-IN-WITH-X": signIn });
    expect(again.status).toBe(402);
    const { error } = await again.json();
    expect(parsePaymentRefusal(error).reason).toBe("invalid_siwx");
    expect(error).toMatch(/nonce/);
  });
});

describe("nothing is charged for a failed call", () => {
  it("an invalid body gets 400 with no challenge and no charge", async () => {
    const before = await t.balance(address(3));
    const res = await t.post("/intel", { tokenId: 0 }, { "PAYMENT-SIGNATURE": "garbage" });
    expect(res.status).toBe(400);
    expect(res.headers.get("payment-required")).toBeNull();
    const body = await res.json();
    expect(body.error.details[0].field).toBe("tokenId");
    expect(await t.balance(address(3))).toBe(before);
  });

  it("intel about an agent not revealed yet is refused before any price is asked, even with a payment attached", async () => {
    // Token 6001 belongs to demo account ((6001 - 1) mod 9) + 1 = 7; its free record says it is not revealed.
    expect(t.chain.collection.token(6001)).toMatchObject({ revealed: false, owner: address(7) });
    const payment = await t.pay(7, (await challenge("/intel", { tokenId: 1 })).json);
    const before = await t.balance(address(7));
    const attempts: Record<string, string>[] = [
      {},
      { "SIGN-IN-WITH-X": await t.signIn(7, "/intel") },
      { "PAYMENT-SIGNATURE": payment },
    ];
    for (const headers of attempts) {
      const res = await t.post("/intel", { tokenId: 6001 }, headers);
      expect(res.status).toBe(403);
      expect(res.headers.get("payment-required")).toBeNull();
      expect(res.headers.get("payment-response")).toBeNull();
      const { error } = await res.json();
      expect(error.code).toBe("agent_not_revealed");
      expect(error.details).toEqual([{ field: "tokenId", message: "not revealed yet" }]);
    }
    expect(await t.balance(address(7))).toBe(before);
    // The payment was not spent: it still buys the call it was made for.
    expect((await t.post("/intel", { tokenId: 1 }, { "PAYMENT-SIGNATURE": payment })).status).toBe(200);
    expect(await t.balance(address(7))).toBe(before - 1_000_000n);
  });

  it("a tool that fails settles nothing and leaves balances unchanged; the payment can then buy another call", async () => {
    const { json } = await challenge("/portfolio", { tokenId: 5 });
    const header = await t.pay(4, json);
    const [payerBefore, payToBefore] = [await t.balance(address(4)), await t.balance(payTo())];
    const failed = await t.post("/portfolio", { tokenId: 5 }, { "PAYMENT-SIGNATURE": header });
    expect(failed.status).toBe(503);
    expect(failed.headers.get("retry-after")).toBe("30");
    expect(failed.headers.get("payment-response")).toBeNull();
    expect((await failed.json()).error.code).toBe("upstream_unavailable");
    expect(await t.balance(address(4))).toBe(payerBefore);
    expect(await t.balance(payTo())).toBe(payToBefore);
    // Nor is a settlement awaited from it: batches do not wait for a call that failed.
    expect(t.payments.settlementsAhead.count()).toBe(0);
    // The authorization was given back: it still buys one call.
    const retry = await t.post("/intel", { tokenId: 5 }, { "PAYMENT-SIGNATURE": header });
    expect(retry.status).toBe(200);
    expect(await t.balance(address(4))).toBe(payerBefore - 1_000_000n);
  });

  it("a payment for the wrong amount is refused before verification", async () => {
    const anonymous = await challenge("/intel", { tokenId: 1 });
    const cheap = { ...anonymous.json, accepts: [{ ...anonymous.json.accepts[0], amount: "10000" }] };
    const res = await t.post("/intel", { tokenId: 1 }, { "PAYMENT-SIGNATURE": await t.pay(3, cheap) });
    expect(res.status).toBe(402);
    const { error } = await res.json();
    expect(parsePaymentRefusal(error).reason).toBe("invalid_payment");
    expect(error).toMatch(/amount/);
  });
});

describe("x402 Bazaar discovery in every 402", () => {
  const calls = Object.values(paidRoutes).flatMap((route) => {
    const only = "method" in route ? route.method : undefined;
    return [
      ...(only !== "get" ? [{ route, method: "POST" as const }] : []),
      ...(only !== "post" ? [{ route, method: "GET" as const }] : []),
    ];
  });

  it.each(calls.map((c) => [`${c.method} ${c.route.path}`, c] as const))(
    "%s: passes @x402/extensions' validator, and a facilitator extracts its method and input",
    async (_name, { route, method }) => {
      const res =
        method === "GET"
          ? await t.get(`${route.path}${inputToQuery(route.sampleInput as Record<string, unknown>)}`)
          : await t.post(route.path, route.sampleInput);
      expect(res.status).toBe(402);
      const required = (await res.json()) as PaymentRequired;
      const bazaar = required.extensions?.bazaar as DiscoveryExtension;
      expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
      // As a facilitator finds it: the client echoes the extensions in its payment.
      const found = extractDiscoveryInfo(
        {
          x402Version: 2,
          resource: required.resource,
          accepted: required.accepts[0]!,
          payload: {},
          extensions: required.extensions,
        },
        required.accepts[0]!,
      );
      expect(found && "method" in found ? found.method : undefined).toBe(method);
      const input = found?.discoveryInfo.input as { queryParams?: unknown; body?: unknown; bodyType?: string };
      if (method === "GET") expect(input.queryParams).toEqual(route.sampleInput);
      else expect(input).toMatchObject({ bodyType: "json", body: route.sampleInput });
    },
  );
});

describe("x402 version 1 clients", () => {
  it("a v1 payment in X-PAYMENT gets a valid v2 402 saying, in words, that this service speaks version 2", async () => {
    // The v1 wire format x402-fetch 1.x sends: base64 JSON with scheme and network at the top and the EIP-3009
    // authorization in `payload`, in the X-PAYMENT header.
    const account = privateKeyToAccount(t.devnet.deployment.accounts[3]!.privateKey);
    const authorization = {
      from: account.address,
      to: payTo(),
      value: "1000000",
      validAfter: "0",
      validBefore: String(Math.floor(Date.now() / 1000) + 60),
      nonce: `0x${"5a".repeat(32)}`,
    } as const;
    const signature = await account.signTypedData({
      domain: {
        name: "USD Coin",
        version: "2",
        chainId: 84532,
        verifyingContract: t.config.payment.asset as `0x${string}`,
      },
      types: transferWithAuthorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: { ...authorization, value: 1_000_000n, validAfter: 0n, validBefore: BigInt(authorization.validBefore) },
    });
    const v1 = { x402Version: 1, scheme: "exact", network: "base-sepolia", payload: { signature, authorization } };
    expect(PaymentPayloadV1Schema.safeParse(v1).success).toBe(true);
    const before = await t.balance(account.address);

    const res = await t.post(
      "/intel",
      { tokenId: 3 },
      { "X-PAYMENT": Buffer.from(JSON.stringify(v1)).toString("base64") },
    );
    expect(res.status).toBe(402);
    const body = await res.json();
    expect(PaymentRequiredV2Schema.safeParse(body).success).toBe(true);
    expect(decodePaymentRequiredHeader(res.headers.get("payment-required")!)).toEqual(body);
    expect(parsePaymentRefusal(body.error).reason).toBe("unsupported_x402_version");
    expect(body.error).toMatch(/speaks x402 version 2/);
    expect(body.error).toMatch(/@x402\/fetch or @x402\/axios/);
    expect(await t.balance(account.address)).toBe(before);

    // The same v1 payload sent as PAYMENT-SIGNATURE is told the same.
    const retried = await t.post(
      "/intel",
      { tokenId: 3 },
      {
        "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(v1)).toString("base64"),
      },
    );
    const retriedBody = await retried.json();
    expect(parsePaymentRefusal(retriedBody.error).reason).toBe("unsupported_x402_version");
    expect(retriedBody.error).toMatch(/speaks x402 version 2 and the payment is version 1/);
  });
});

describe("replay", () => {
  it("the same PAYMENT-SIGNATURE sent 20 times at once buys exactly one call and one settlement", async () => {
    const { json } = await challenge("/intel", { tokenId: 7 });
    const header = await t.pay(6, json);
    const before = await t.balance(address(6));
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => t.post("/intel", { tokenId: 7 }, { "PAYMENT-SIGNATURE": header })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 402)).toHaveLength(19);
    expect(await t.balance(address(6))).toBe(before - 1_000_000n);
    const later = await t.post("/intel", { tokenId: 7 }, { "PAYMENT-SIGNATURE": header });
    expect(later.status).toBe(402);
    expect(parsePaymentRefusal((await later.json()).error).reason).toBe("payment_already_used");
  });
});

describe("concurrent paid calls", () => {
  it("ten distinct payments at once are all served and all settled, each exactly once", async () => {
    const payers = [1, 2, 3, 4, 5, 6, 7, 8, 9, 1];
    const quotes = await Promise.all(payers.map(() => challenge("/intel", { tokenId: 11 }).then((c) => c.json)));
    const headers = await Promise.all(payers.map((payer, i) => t.pay(payer, quotes[i])));
    const before = await Promise.all(payers.map((payer) => t.balance(address(payer))));
    const payToBefore = await t.balance(payTo());
    const answers = await Promise.all(
      headers.map((header) => t.post("/intel", { tokenId: 11 }, { "PAYMENT-SIGNATURE": header })),
    );
    expect(answers.map((a) => a.status)).toEqual(payers.map(() => 200));
    const transactions = answers.map(
      (a) => decodePaymentResponseHeader(a.headers.get("payment-response")!).transaction,
    );
    // Each answer names the transaction its own settlement is in (several may share one batch).
    for (const [i, header] of headers.entries()) {
      const { authorization } = authorizationOf(header);
      const receipt = await t.devnet.l2.publicClient.getTransactionReceipt({ hash: transactions[i] as Hex });
      const expected = { asset: asset(), payer: authorization.from, payTo: payTo(), amount: 1_000_000n };
      expect(isCountingSettlement(receipt, { ...expected, nonce: authorization.nonce }), `payment ${i}`).toBe(true);
    }
    expect(await t.balance(payTo())).toBe(payToBefore + BigInt(payers.length) * 1_000_000n);
    // Account 1 paid twice, the others once.
    expect(await t.balance(address(1))).toBe(before[0]! - 2_000_000n);
    expect(await t.balance(address(5))).toBe(before[4]! - 1_000_000n);
    // None is still awaited by a batch.
    expect(t.payments.settlementsAhead.count()).toBe(0);
  });
});

describe("a payer's payments in flight", () => {
  it("serves one of eight authorizations fired at once by a payer whose balance covers one; nothing else runs", async () => {
    // A fresh wallet holding exactly the price of one call.
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { json } = await challenge("/intel", { tokenId: 12 });
    const price = BigInt(json.accepts[0]!.amount);
    const hash = await t.devnet.l2.walletClient(8).writeContract({
      address: t.config.payment.asset as `0x${string}`,
      abi: usdTokenAbi,
      functionName: "transfer",
      args: [wallet.address, price],
    });
    await t.devnet.l2.publicClient.waitForTransactionReceipt({ hash });
    const headers = await Promise.all(
      Array.from({ length: 8 }, () =>
        paymentHeader(wallet, t.devnet.l2.publicClient as never, json, {
          network: t.config.payment.network,
          asset: t.config.payment.asset,
        }),
      ),
    );
    const answers = await Promise.all(
      headers.map((header) => t.post("/intel", { tokenId: 12 }, { "PAYMENT-SIGNATURE": header })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    const refusals = await Promise.all(
      answers.filter((a) => a.status === 402).map(async (a) => (await a.json()).error),
    );
    // Refused before the tool: each is told its balance does not cover its payments in flight, or has run out.
    expect(refusals).toHaveLength(7);
    for (const error of refusals) expect(parsePaymentRefusal(error).reason).toBe("insufficient_funds");
    expect(await t.balance(wallet.address)).toBe(0n);
    const rows = await t.db.query<{ status: string }>("SELECT status FROM settlements WHERE payer = $1", [
      wallet.address,
    ]);
    expect(rows).toEqual([{ status: "settled" }]);
  });
});

describe("what a facilitator says stays in the log", () => {
  // What facilitators built on viem put in their messages: an RPC URL with its key, the library's version, call data.
  const LEAK =
    "Details: execution reverted URL: https://base-mainnet.example/v2/SECRET-API-KEY Version: viem@2.57.20 " +
    "Contract Call: address: 0x5FbDB2315678afecb367f032d93F642f64180aa3 function: transferWithAuthorization";

  /** A second instance on the same store and chain, whose facilitator talks like that. */
  async function instanceWith(facilitator: PaymentService["facilitator"]) {
    const payments: PaymentService = { ...t.payments, facilitator };
    return t.instance(payments);
  }

  const send = (url: string, payment: string) =>
    fetch(`${url}/intel`, {
      method: "POST",
      headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": payment },
      body: JSON.stringify({ tokenId: 4 }),
    });

  it("answers a refused payment with a reason and a sentence of its own", async () => {
    const other = await instanceWith({
      verify: async (payload, requirements) => ({
        ...(await t.payments.facilitator.verify(payload, requirements)),
        isValid: false,
        invalidReason: "invalid_exact_evm_transaction_simulation_failed",
        invalidMessage: LEAK,
      }),
      settle: t.payments.facilitator.settle,
    });
    try {
      const res = await send(other.url, await t.pay(4, (await challenge("/intel", { tokenId: 4 })).json));
      expect(res.status).toBe(402);
      const text = await res.text();
      expect(text).not.toMatch(/SECRET-API-KEY|viem|base-mainnet|Contract Call/);
      const { error } = JSON.parse(text) as PaymentRequired;
      expect(parsePaymentRefusal(error).reason).toBe("invalid_payment");
      expect(error).toMatch(/would fail on chain \(invalid_exact_evm_transaction_simulation_failed\)/);
    } finally {
      await other.close();
    }
  });

  it("answers 503 without the cause when the facilitator cannot be asked, and charges nothing", async () => {
    const other = await instanceWith({
      verify: async () => {
        throw new Error(`fetch failed: ${LEAK}`);
      },
      settle: t.payments.facilitator.settle,
    });
    try {
      const before = await t.balance(address(4));
      const payment = await t.pay(4, (await challenge("/intel", { tokenId: 4 })).json);
      const res = await send(other.url, payment);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      const text = await res.text();
      expect(text).not.toMatch(/SECRET-API-KEY|viem|base-mainnet|fetch failed/);
      expect(JSON.parse(text).error.code).toBe("upstream_unavailable");
      // Given back: the same payment buys the call from an instance that can verify it.
      expect((await send(t.server.url, payment)).status).toBe(200);
      expect(await t.balance(address(4))).toBe(before - 1_000_000n);
    } finally {
      await other.close();
    }
  });

  it("answers a settlement the facilitator refused with its code only", async () => {
    const other = await instanceWith({
      verify: t.payments.facilitator.verify,
      settle: async () => ({
        success: false,
        errorReason: "invalid_exact_evm_transaction_failed",
        errorMessage: LEAK,
        transaction: "",
        network: t.config.payment.network as never,
      }),
    });
    try {
      const res = await send(other.url, await t.pay(4, (await challenge("/intel", { tokenId: 4 })).json));
      expect(res.status).toBe(402);
      const text = await res.text();
      expect(text).not.toMatch(/SECRET-API-KEY|viem|base-mainnet|Contract Call/);
      expect(parsePaymentRefusal((JSON.parse(text) as PaymentRequired).error).reason).toBe("settlement_failed");
    } finally {
      await other.close();
    }
  });
});

describe("crafted input gets its 4xx, never a 500", () => {
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");
  /** A payment as x402 v2 frames it, with `payload` as given. */
  const framed = async (payload: unknown) => {
    const { json } = await challenge("/intel", { tokenId: 1 });
    return b64({ x402Version: 2, accepted: json.accepts[0], payload });
  };
  const authorization = (overrides: Record<string, string>) => ({
    signature: `0x${"ab".repeat(65)}`,
    authorization: {
      from: address(1),
      to: payTo(),
      value: "1000000",
      validAfter: "0",
      validBefore: String(Math.floor(Date.now() / 1000) + 60),
      nonce: `0x${"11".repeat(32)}`,
      ...overrides,
    },
  });

  it.each([
    ["a repeated scalar query key", "/b20-radar?tokenId=1&limit=a&limit=b", "limit"],
    ["prototype-named query keys", "/dispatch?tokenId=1&__proto__=1&constructor=2&limit=x", "limit"],
    ["a path that is not valid percent-encoding", "/agents/info/%", "path"],
  ])("%s: 400 naming the field", async (_, path, field) => {
    const res = await t.get(path);
    expect(res.status).toBe(400);
    const { error } = await res.json();
    expect(error.code).toBe("invalid_request");
    expect(error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it("a Content-Encoding that does not match the body: 400, nothing read", async () => {
    for (const encoding of ["gzip", "deflate"]) {
      const res = await fetch(`${t.server.url}/intel`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-encoding": encoding },
        body: '{"tokenId":1}',
      });
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe("invalid_request");
    }
  });

  it.each([
    ["no payload", () => null, /payload/],
    ["a payload without its authorization", () => ({ signature: "0x00" }), /payload\.authorization/],
    ["a value that is not a number", () => authorization({ value: "1e6" }), /payload\.authorization\.value/],
    ["a validBefore past any date", () => authorization({ validBefore: "9000000000000" }), /too far ahead/],
    [
      "a validBefore days ahead",
      () => authorization({ validBefore: String(Math.floor(Date.now() / 1000) + 86_400 * 10) }),
      /too far ahead/,
    ],
    ["a signature that is not hex", () => ({ ...authorization({}), signature: "zz" }), /payload\.signature/],
  ])("a PAYMENT-SIGNATURE with %s: 402 invalid_payment saying what", async (_, payload, says) => {
    const before = await t.balance(address(1));
    const res = await t.post("/intel", { tokenId: 1 }, { "PAYMENT-SIGNATURE": await framed(payload()) });
    expect(res.status).toBe(402);
    const { error } = (await res.json()) as PaymentRequired;
    expect(parsePaymentRefusal(error).reason).toBe("invalid_payment");
    expect(error).toMatch(says);
    expect(await t.balance(address(1))).toBe(before);
  });

  it.each([
    ["a nonce of the wrong form", { nonce: "n0nce-with-dashes" }, /nonce/],
    ["an address that is not one", { address: "0x1234" }, /address/],
    ["version 2", { version: "2" }, /version/],
    ["a statement of two lines", { statement: "one\ntwo" }, /statement/],
  ])("a SIGN-IN-WITH-X with %s: 402 invalid_siwx naming it", async (_, overrides, says) => {
    const header = JSON.parse(Buffer.from(await t.signIn(1, "/intel"), "base64").toString());
    const res = await t.post("/intel", { tokenId: 1 }, { "SIGN-IN-WITH-X": b64({ ...header, ...overrides }) });
    expect(res.status).toBe(402);
    const { error } = (await res.json()) as PaymentRequired;
    expect(parsePaymentRefusal(error).reason).toBe("invalid_siwx");
    expect(error).toMatch(says);
  });
});

describe("any x402 v2 client", () => {
  it("a client built only from @x402/fetch and a viem account pays and gets 200", async () => {
    const account = privateKeyToAccount(t.devnet.deployment.accounts[8]!.privateKey);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: toClientEvmSigner(account) });
    client.setSpendControls({
      allowedAssets: [
        { network: "eip155:31338", asset: t.devnet.deployment.addresses.usdToken, maxAmountPerPayment: "1000000" },
      ],
    });
    const paidFetch = wrapFetchWithPayment(fetch, client);
    const before = await t.balance(account.address);
    const res = await paidFetch(`${t.server.url}/intel`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tokenId: 42 }),
    });
    expect(res.status).toBe(200);
    expect((await res.json()).name).toBe("Agent #42");
    expect(await t.balance(account.address)).toBe(before - 1_000_000n);
  });
});

describe("ANONYMOUS_ACCESS=false", () => {
  it("answers an anonymous caller 402 asking to sign in, and still serves a signed-in holder", async () => {
    const payments: PaymentService = { ...t.payments, anonymousAccess: false };
    const server = await t.instance(payments);
    try {
      const post = (headers: Record<string, string>) =>
        fetch(`${server.url}/intel`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ tokenId: 1 }),
        });
      const anonymous = await post({});
      expect(anonymous.status).toBe(402);
      const body = await anonymous.json();
      expect(body.error).toMatch(/sign_in_required/);
      // Only the holder price is quoted, in each scheme.
      expect(body.accepts.map((a: { scheme: string; amount: string }) => [a.scheme, a.amount])).toEqual([
        ["exact", "10000"],
        ["batch-settlement", "10000"],
        ["upto", "10000"],
      ]);
      // Paying the quote anonymously does not get around it.
      const paidAnonymously = await post({ "PAYMENT-SIGNATURE": await t.pay(3, body) });
      expect(paidAnonymously.status).toBe(402);
      const signedIn = await post({ "SIGN-IN-WITH-X": await t.signIn(1, "/intel") });
      expect(signedIn.status).toBe(402);
      expect((await signedIn.json()).accepts[0].amount).toBe("10000");
    } finally {
      await server.close();
    }
  });
});

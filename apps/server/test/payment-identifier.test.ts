import { MCP_PAYMENT_META } from "@agent-tools/schema";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import {
  appendPaymentIdentifierToExtensions,
  generatePaymentId,
  isPaymentIdentifierExtension,
  PAYMENT_IDENTIFIER,
} from "@x402/extensions/payment-identifier";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PaymentService } from "../src/paid-call/payment-service.js";
import { createMemoryReplayGuard } from "../src/paid-call/replay-guard.js";
import { signedPayment } from "./helpers/authorizations.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";

let t: PaidTestServer;
const account = (index: number) => t.devnet.deployment.accounts[index]!.address;

beforeAll(async () => {
  t = await startPaidTestServer();
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/** The 402 of a call, and a payment of it by account `payer` that names `id` (x402's own client helper adds it). */
async function identifiedPayment(path: string, body: Record<string, unknown>, payer: number, id = generatePaymentId()) {
  const quote = await t.quote({ path, body });
  const extensions = structuredClone(quote.extensions ?? {});
  appendPaymentIdentifierToExtensions(extensions, id);
  return { id, payment: await t.pay(payer, { ...quote, extensions } as PaymentRequired) };
}

const settlementRows = async (payer: `0x${string}`) =>
  t.db.query<{ status: string; transaction: string | null }>(
    "SELECT status, transaction FROM settlements WHERE payer = $1",
    [payer],
  );

async function errorOf(res: Response) {
  return ((await res.json()) as { error: { code: string; message: string; details: { field: string }[] } }).error;
}

describe("x402's payment-identifier extension", () => {
  it("is declared in every 402, not required", async () => {
    const quote = await t.quote({ path: "/intel", body: { tokenId: 1 } });
    const declared = quote.extensions?.[PAYMENT_IDENTIFIER];
    expect(isPaymentIdentifierExtension(declared)).toBe(true);
    expect((declared as { info: unknown }).info).toEqual({ required: false });
  });

  it("answers the same payment and request again without a second charge, on another instance too", async () => {
    const payer = 2;
    const { payment } = await identifiedPayment("/intel", { tokenId: 2 }, payer);
    const before = await t.balance(account(payer));
    const first = await t.post("/intel", { tokenId: 2 }, { "PAYMENT-SIGNATURE": payment });
    expect(first.status).toBe(200);
    const answer = await first.json();
    const settlement = decodePaymentResponseHeader(first.headers.get("payment-response")!);

    // The answer was lost on the way: the client sends the same payment again, here and at another instance.
    const second: PaymentService = { ...t.payments, payments: createMemoryReplayGuard(60_000) };
    const other = await t.instance(second);
    try {
      for (const url of [t.server.url, other.url]) {
        const again = await fetch(`${url}/intel`, {
          method: "POST",
          headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": payment },
          body: JSON.stringify({ tokenId: 2 }),
        });
        expect(again.status).toBe(200);
        expect(await again.json()).toEqual(answer);
        expect(decodePaymentResponseHeader(again.headers.get("payment-response")!)).toMatchObject({
          success: true,
          transaction: settlement.transaction,
        });
      }
    } finally {
      await other.close();
    }
    expect(await t.balance(account(payer))).toBe(before - 1_000_000n);
    expect(await settlementRows(account(payer))).toEqual([{ status: "settled", transaction: settlement.transaction }]);
  });

  it("refuses the same identifier with another request or another payment with 409, and charges nothing", async () => {
    const payer = 3;
    const { id, payment } = await identifiedPayment("/intel", { tokenId: 3 }, payer);
    expect((await t.post("/intel", { tokenId: 3 }, { "PAYMENT-SIGNATURE": payment })).status).toBe(200);
    const before = await t.balance(account(payer));

    const otherInput = await t.post("/intel", { tokenId: 4 }, { "PAYMENT-SIGNATURE": payment });
    expect(otherInput.status).toBe(409);
    const refusal = await errorOf(otherInput);
    expect(refusal.code).toBe("payment_identifier_conflict");
    expect(refusal.message).toMatch(/used with another request.* Nothing was charged\.$/);
    expect(refusal.details.map((d) => d.field)).toEqual(["extensions.payment-identifier.info.id"]);

    const { payment: otherPayment } = await identifiedPayment("/intel", { tokenId: 3 }, payer, id);
    const reused = await t.post("/intel", { tokenId: 3 }, { "PAYMENT-SIGNATURE": otherPayment });
    expect(reused.status).toBe(409);
    expect((await errorOf(reused)).message).toMatch(/used with another payment/);

    expect(await t.balance(account(payer))).toBe(before);
    expect(await settlementRows(account(payer))).toHaveLength(1);
  });

  it("gives a holder its answer again with the same sign-in, which served the call already", async () => {
    const payer = 5;
    const signIn = await t.signIn(payer, "/intel");
    const quote = await t.quote({ path: "/intel", body: { tokenId: 5 }, headers: { "SIGN-IN-WITH-X": signIn } });
    const extensions = structuredClone(quote.extensions ?? {});
    appendPaymentIdentifierToExtensions(extensions);
    const payment = await t.pay(payer, { ...quote, extensions } as PaymentRequired);
    const headers = { "SIGN-IN-WITH-X": signIn, "PAYMENT-SIGNATURE": payment };
    const first = await t.post("/intel", { tokenId: 5 }, headers);
    expect(first.status).toBe(200);
    const again = await t.post("/intel", { tokenId: 5 }, headers);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(await first.json());
    // A spent sign-in buys nothing new: with a new payment it is refused, as before.
    const fresh = await t.pay(payer, quote);
    const refused = await t.post("/intel", { tokenId: 5 }, { "SIGN-IN-WITH-X": signIn, "PAYMENT-SIGNATURE": fresh });
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as PaymentRequired).error).toMatch(/^invalid_siwx: invalid_siwx_nonce/);
  });

  it("runs a call cut after its settlement again at no charge, then keeps its answer", async () => {
    const payer = 6;
    const { payment } = await identifiedPayment("/intel", { tokenId: 6 }, payer);
    const first = await t.post("/intel", { tokenId: 6 }, { "PAYMENT-SIGNATURE": payment });
    expect(first.status).toBe(200);
    const transaction = decodePaymentResponseHeader(first.headers.get("payment-response")!).transaction;
    const before = await t.balance(account(payer));
    // What a process killed between the settlement and the answer leaves, once the reconciler recorded it.
    await t.db.query("UPDATE settlements SET answer = NULL, answered_at = NULL WHERE transaction = $1", [transaction]);

    const again = await t.post("/intel", { tokenId: 6 }, { "PAYMENT-SIGNATURE": payment });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(await first.json());
    expect(decodePaymentResponseHeader(again.headers.get("payment-response")!).transaction).toBe(transaction);
    expect(await t.balance(account(payer))).toBe(before);
    const [kept] = await t.db.query<{ answered: boolean }>(
      "SELECT answer IS NOT NULL AS answered FROM settlements WHERE transaction = $1",
      [transaction],
    );
    expect(kept).toEqual({ answered: true });
  });

  it("forgets an answer after an hour: the identifier then answers 410 answer_expired, and nothing is charged", async () => {
    const payer = 7;
    const { payment } = await identifiedPayment("/intel", { tokenId: 7 }, payer);
    const first = await t.post("/intel", { tokenId: 7 }, { "PAYMENT-SIGNATURE": payment });
    expect(first.status).toBe(200);
    const transaction = decodePaymentResponseHeader(first.headers.get("payment-response")!).transaction;
    await t.db.query("UPDATE settlements SET answered_at = now() - interval '61 minutes' WHERE transaction = $1", [
      transaction,
    ]);
    expect((await t.reconcile()).forgotten).toBeGreaterThanOrEqual(1);
    const before = await t.balance(account(payer));

    const late = await t.post("/intel", { tokenId: 7 }, { "PAYMENT-SIGNATURE": payment });
    expect(late.status).toBe(410);
    const refusal = await errorOf(late);
    expect(refusal.code).toBe("answer_expired");
    expect(refusal.message).toMatch(/no longer kept; the payment was settled once and is not taken again/);
    expect(await t.balance(account(payer))).toBe(before);
  });

  it("refuses a malformed identifier with 400, before anything is claimed", async () => {
    const payer = 8;
    // x402's helper refuses to add such an identifier: this one is written in by hand.
    const quote = await t.quote({ path: "/intel", body: { tokenId: 8 } });
    const extensions = { ...quote.extensions, [PAYMENT_IDENTIFIER]: { info: { required: false, id: "short" } } };
    const payment = await t.pay(payer, { ...quote, extensions });
    const res = await t.post("/intel", { tokenId: 8 }, { "PAYMENT-SIGNATURE": payment });
    expect(res.status).toBe(400);
    const refusal = await errorOf(res);
    expect(refusal.code).toBe("invalid_request");
    expect(refusal.details).toEqual([
      {
        field: "extensions.payment-identifier.info.id",
        message: "must be 16 to 128 letters, digits, hyphens or underscores",
      },
    ]);
    expect(await settlementRows(account(payer))).toEqual([]);
  });

  it("reads the identifier by x402's rules, not by a JSON schema the payment carries", async () => {
    const payer = 9;
    const quote = await t.quote({ path: "/intel", body: { tokenId: 9 } });
    const id = generatePaymentId();
    // Clients echo the declaration's schema; a payer may send any: one that no id passes, one Ajv cannot compile.
    for (const schema of [{ properties: { id: { maxLength: 3 } } }, { type: 12 }]) {
      const extensions = structuredClone(quote.extensions ?? {});
      appendPaymentIdentifierToExtensions(extensions, id);
      (extensions[PAYMENT_IDENTIFIER] as { schema: unknown }).schema = schema;
      const payment = await t.pay(payer, { ...quote, extensions } as PaymentRequired);
      const res = await t.post("/intel", { tokenId: 9 }, { "PAYMENT-SIGNATURE": payment });
      // The first payment is served; the second names the same identifier with another payment: 409, as any.
      expect(res.status).toBe(schema.type === 12 ? 409 : 200);
      if (res.status === 409) expect((await errorOf(res)).code).toBe("payment_identifier_conflict");
    }
    expect(await settlementRows(account(payer))).toHaveLength(1);
  });

  it("answers a queued mission again without queuing it twice", async () => {
    const payer = 5;
    const signIn = await t.signIn(payer, "/dispatch");
    const body = { tokenId: 5, mission: { tool: "intel" }, runAt: new Date(Date.now() + 3_600_000).toISOString() };
    const quote = await t.quote({ path: "/dispatch", body, headers: { "SIGN-IN-WITH-X": signIn } });
    const extensions = structuredClone(quote.extensions ?? {});
    appendPaymentIdentifierToExtensions(extensions);
    const headers = { "SIGN-IN-WITH-X": signIn, "PAYMENT-SIGNATURE": await t.pay(payer, { ...quote, extensions }) };
    const first = await t.post("/dispatch", body, headers);
    expect(first.status).toBe(202);
    const queued = ((await first.json()) as { mission: { id: string } }).mission.id;
    const transaction = decodePaymentResponseHeader(first.headers.get("payment-response")!).transaction;
    for (const cut of [false, true]) {
      if (cut)
        await t.db.query("UPDATE settlements SET answer = NULL, answered_at = NULL WHERE transaction = $1", [
          transaction,
        ]);
      const again = await t.post("/dispatch", body, headers);
      expect(again.status).toBe(202);
      expect(((await again.json()) as { mission: { id: string } }).mission.id).toBe(queued);
    }
    const missions = await t.db.query(
      "SELECT id FROM missions WHERE id = $1 OR payment_key IN (SELECT payment_key FROM settlements WHERE transaction = $2)",
      [queued, transaction],
    );
    expect(missions).toHaveLength(1);
  });
});

describe("an attacker and a payer's identifier", () => {
  it("a stranger naming the payer, with the payer's identifier, learns nothing of it and gets nothing", async () => {
    const victim = 2;
    const { id, payment } = await identifiedPayment("/intel", { tokenId: 12 }, victim);
    expect((await t.post("/intel", { tokenId: 12 }, { "PAYMENT-SIGNATURE": payment })).status).toBe(200);
    // The stranger's own signature on an authorization that names the victim as payer, the victim's identifier added.
    const quote = await t.quote({ path: "/intel", body: { tokenId: 12 } });
    const stranger = privateKeyToAccount(generatePrivateKey());
    const forged = JSON.parse(
      Buffer.from(
        await signedPayment(stranger, quote.accepts[0]!, t.devnet.l2.chainId, { from: account(victim) }),
        "base64",
      ).toString(),
    );
    forged.extensions = { [PAYMENT_IDENTIFIER]: { info: { required: false, id } } };
    const res = await t.post(
      "/intel",
      { tokenId: 12 },
      { "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(forged)).toString("base64") },
    );
    expect(res.status).toBe(402);
    expect(((await res.json()) as PaymentRequired).error).toMatch(/^invalid_payment: .*not signed by its payer/);
  });

  it("a payment answered over HTTP is answered again over MCP, not charged again", async () => {
    const payer = 4;
    const { payment } = await identifiedPayment("/intel", { tokenId: 4 }, payer);
    const first = await t.post("/intel", { tokenId: 4 }, { "PAYMENT-SIGNATURE": payment });
    expect(first.status).toBe(200);
    const answer = await first.json();
    const before = await t.balance(account(payer));
    const mcp = new Client({ name: "identifier-test", version: "1.0.0" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${t.server.url}/mcp`)));
    try {
      const result = (await mcp.request(
        {
          method: "tools/call",
          params: {
            name: "intel",
            arguments: { tokenId: 4 },
            _meta: { [MCP_PAYMENT_META]: JSON.parse(Buffer.from(payment, "base64").toString()) },
          },
        },
        CallToolResultSchema,
      )) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual(answer);
    } finally {
      await mcp.close();
    }
    expect(await t.balance(account(payer))).toBe(before);
  });
});

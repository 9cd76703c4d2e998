import { ledgerReportSchema } from "@agent-tools/schema";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { type Address, getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PaymentService } from "../src/paid-call/payment-service.js";
import { createMemoryReplayGuard } from "../src/paid-call/replay-guard.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";

let t: PaidTestServer;
const account = (index: number): Address => t.devnet.deployment.accounts[index]!.address;
const tokenOf = (index: number) => index; // token i is held by account i for i in 1..9

beforeAll(async () => {
  t = await startPaidTestServer();
}, 120_000);
afterAll(async () => {
  await t?.close();
});

interface Row {
  payment_key: string;
  settled_at: Date | string;
  status: string;
  route: string;
  method: string;
  token_id: number;
  payer: string;
  caller: string | null;
  price_point: string;
  amount: string;
  asset: string;
  network: string;
  transaction: string | null;
  request_id: string;
}

const rows = (where = "TRUE", params: unknown[] = []) =>
  t.db.query<Row>(`SELECT *, amount::text AS amount FROM settlements WHERE ${where} ORDER BY claimed_at`, params);

/** 402 -> a signed payment header for it. */
async function paymentFor(
  path: string,
  body: Record<string, unknown>,
  payer: number,
  headers: Record<string, string> = {},
) {
  return t.pay(payer, await t.quote({ path, body, headers }));
}

describe("settlement ledger", () => {
  it("records each settled payment once, with who paid, for what, how much and the transaction", async () => {
    const signIn = { "SIGN-IN-WITH-X": await t.signIn(2, "/intel") };
    const payment = await paymentFor("/intel", { tokenId: tokenOf(2) }, 2, signIn);
    const res = await t.post(
      "/intel",
      { tokenId: tokenOf(2) },
      { ...signIn, "PAYMENT-SIGNATURE": payment, "X-Request-Id": "ledger-test-1" },
    );
    expect(res.status).toBe(200);
    const settled = decodePaymentResponseHeader(res.headers.get("payment-response")!);

    const recorded = await rows("request_id = $1", ["ledger-test-1"]);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      status: "settled",
      route: "/intel",
      method: "POST",
      token_id: tokenOf(2),
      payer: account(2),
      caller: account(2),
      price_point: "discounted",
      amount: "10000",
      network: t.config.payment.network,
      transaction: settled.transaction,
    });
    expect(getAddress(recorded[0]!.asset)).toBe(getAddress(t.config.payment.asset));

    // An anonymous call is recorded with its payer and no caller, at the standard price.
    const anonymous = await paymentFor("/intel", { tokenId: 5 }, 4);
    const res2 = await t.post("/intel", { tokenId: 5 }, { "PAYMENT-SIGNATURE": anonymous, "X-Request-Id": "ledger-2" });
    expect(res2.status).toBe(200);
    expect((await rows("request_id = $1", ["ledger-2"]))[0]).toMatchObject({
      payer: account(4),
      caller: null,
      price_point: "standard",
      amount: "1000000",
    });
  });

  it("lets one payment buy one call across instances sharing the store", async () => {
    const payment = await paymentFor("/intel", { tokenId: 3 }, 3);
    const before = await rows();
    const balance = await t.balance(account(3));

    // A second instance on the same store, with its own in-memory guard (as another process would have).
    const second: PaymentService = { ...t.payments, payments: createMemoryReplayGuard(60_000) };
    const other = await t.instance(second);
    try {
      const send = (url: string) =>
        fetch(`${url}/intel`, {
          method: "POST",
          headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": payment },
          body: JSON.stringify({ tokenId: 3 }),
        });
      const answers = await Promise.all([send(t.server.url), send(other.url), send(t.server.url), send(other.url)]);
      const statuses = answers.map((res) => res.status).sort();
      expect(statuses).toEqual([200, 402, 402, 402]);
      for (const res of answers.filter((r) => r.status === 402)) {
        expect(((await res.json()) as PaymentRequired).error).toMatch(
          /^(payment_in_use|payment_already_used|invalid_payment: invalid_exact_evm_nonce)/,
        );
      }
      expect(await t.balance(account(3))).toBe(balance - 1_000_000n);
      expect((await rows()).length).toBe(before.length + 1);
    } finally {
      await other.close();
    }
  });

  it("lets one sign-in serve one call across instances sharing the store", async () => {
    const second: PaymentService = { ...t.payments, payments: createMemoryReplayGuard(60_000) };
    const other = await t.instance(second);
    try {
      const body = { tokenId: tokenOf(6) };
      const signIn = { "SIGN-IN-WITH-X": await t.signIn(6, "/intel") };
      // Two payments at the holder's price, each good for a call, sent with the one sign-in to both instances.
      const payments = [await paymentFor("/intel", body, 6, signIn), await paymentFor("/intel", body, 6, signIn)];
      const balance = await t.balance(account(6));
      const send = (url: string, payment: string) =>
        fetch(`${url}/intel`, {
          method: "POST",
          headers: { "content-type": "application/json", ...signIn, "PAYMENT-SIGNATURE": payment },
          body: JSON.stringify(body),
        });
      const answers = await Promise.all([send(t.server.url, payments[0]!), send(other.url, payments[1]!)]);
      expect(answers.map((res) => res.status).sort()).toEqual([200, 402]);
      const refused = answers.find((res) => res.status === 402)!;
      expect(((await refused.json()) as PaymentRequired).error).toMatch(/^invalid_siwx: invalid_siwx_nonce: /);
      expect(await t.balance(account(6))).toBe(balance - 10_000n);

      // Later, at either instance: already used.
      for (const url of [t.server.url, other.url]) {
        const again = await send(url, payments[1]!);
        expect(again.status).toBe(402);
        expect(((await again.json()) as PaymentRequired).error).toMatch(/^invalid_siwx: .*already used/);
      }
      expect(await t.balance(account(6))).toBe(balance - 10_000n);
    } finally {
      await other.close();
    }
  });

  it("keeps no row for a call that failed (the payment was given back)", async () => {
    t.sims.marketplace.faults.set("/api/v2/drops", { status: 500 });
    try {
      const body = { tokenId: 3, type: "featured", scanChains: false };
      const payment = await paymentFor("/drop-radar", body, 3);
      const res = await t.post("/drop-radar", body, { "PAYMENT-SIGNATURE": payment, "X-Request-Id": "ledger-fail" });
      expect(res.status).toBe(502);
      expect(await rows("request_id = $1", ["ledger-fail"])).toEqual([]);
    } finally {
      await t.resetUpstream();
    }
  });
});

describe("reconciliation of calls cut short", () => {
  it("records a payment found settled on chain, and gives back an expired one that never settled", async () => {
    // A call cut short after settlement: the claim is pending, the chain has the transfer.
    const payment = await paymentFor("/intel", { tokenId: 6 }, 6);
    const payload = JSON.parse(Buffer.from(payment, "base64").toString());
    const requirements = payload.accepted;
    const from = payload.payload.authorization.from as string;
    const nonce = payload.payload.authorization.nonce as string;
    const key = `eip3009:${requirements.network}:${requirements.asset}:${from}:${nonce}`.toLowerCase();
    const claim = {
      paymentKey: key,
      route: "/intel",
      method: "POST" as const,
      tokenId: 6,
      payer: from,
      nonce,
      caller: null,
      pricePoint: "standard" as const,
      amount: requirements.amount,
      asset: requirements.asset,
      network: requirements.network,
      payTo: requirements.payTo,
      validBefore: new Date(Number(payload.payload.authorization.validBefore) * 1000),
      requestId: "cut-short",
    };
    expect((await t.ledger.claim(claim)).outcome).toBe("claimed");
    const settled = await t.payments.facilitator.settle(payload, requirements);
    expect(settled.success).toBe(true);

    // Another claim that never settled and whose authorization has expired.
    const expired = { ...claim, paymentKey: `${key}-expired`, nonce: `0x${"ab".repeat(32)}`, validBefore: new Date(0) };
    expect((await t.ledger.claim(expired)).outcome).toBe("claimed");

    const result = await t.reconcile();
    expect(result).toMatchObject({ settled: 1, dropped: 1 });
    const [row] = await rows("payment_key = $1", [key]);
    expect(row).toMatchObject({ status: "settled", transaction: settled.transaction });
    expect(await rows("payment_key = $1", [expired.paymentKey])).toEqual([]);
    // The payment cannot buy a call now.
    expect((await t.ledger.claim(claim)).outcome).toBe("used");
  });
});

describe("GET /operator/ledger", () => {
  const path = "/operator/ledger";

  it("asks for the operator's sign-in: 401 with the chains it takes, 403 for anyone else", async () => {
    const anonymous = await t.get(path);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^SIWX realm="agent-tools operator", chains="eip155:/);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe("sign_in_required");

    const holder = await t.get(path, { "SIGN-IN-WITH-X": await t.signIn(2, path) });
    expect(holder.status).toBe(403);
    expect(((await holder.json()) as { error: { code: string } }).error.code).toBe("not_operator");
  });

  it("gives the operator totals per route and per day that match the ledger, and spends the sign-in", async () => {
    const signIn = await t.signIn(0, path);
    const res = await t.get(`${path}?limit=5`, { "SIGN-IN-WITH-X": signIn });
    expect(res.status).toBe(200);
    const report = ledgerReportSchema.parse(await res.json());
    const settled = await rows("status = 'settled'");
    const sum = settled.reduce((n, row) => n + BigInt(row.amount), 0n);
    expect(report.total).toMatchObject({ payments: settled.length, amount: sum.toString() });
    const intel = settled.filter((row) => row.route === "/intel");
    expect(report.byRoute.find((r) => r.route === "/intel")).toMatchObject({
      payments: intel.length,
      amount: intel.reduce((n, row) => n + BigInt(row.amount), 0n).toString(),
    });
    // Per UTC day of settlement, as the rows say (a run across midnight has two days).
    const days = new Map<string, number>();
    for (const row of settled) {
      const day = new Date(row.settled_at).toISOString().slice(0, 10);
      days.set(day, (days.get(day) ?? 0) + 1);
    }
    expect(report.byDay.map((d) => [d.day, d.payments]).sort()).toEqual([...days].sort());
    expect(report.entries.length).toBe(Math.min(5, settled.length));
    expect(report.entries[0]?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    // Headlined by the days the payments were made on, not by the 30-day window asked for.
    const paidDays = [...days.keys()].sort();
    const when =
      paidDays.length === 1 ? `on ${paidDays[0]}` : `from ${paidDays[0]} to ${paidDays[paidDays.length - 1]}`;
    expect(report.brief).toMatch(new RegExp(`^${settled.length} settled payments ${when}, `));
    expect(report.brief).not.toContain(report.from);

    const again = await t.get(path, { "SIGN-IN-WITH-X": signIn });
    expect(again.status).toBe(401);
  });

  it("answers 400 naming a bad query field", async () => {
    const res = await t.get(`${path}?from=2026-13-01`, { "SIGN-IN-WITH-X": await t.signIn(0, path) });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { details: { field: string }[] } };
    expect(body.error.details.map((d) => d.field)).toEqual(["from"]);
  });
});

/**
 * The paid path against a payer with two signatures and a stranger with a key of their own: payments in someone
 * else's name, authorizations spent or cancelled on chain while the call runs, windows that cannot settle, sign-ins
 * handed to others. Each attack must buy nothing, book nothing that did not pay, cost the facilitator no more than
 * one transaction, and lock out no one else (docs/threat-model.md).
 */
import { paidRoutes, parsePaymentRefusal, type PaymentRequirements as QuotedRequirements } from "@agent-tools/schema";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { type Address, createPublicClient, custom, type Hex, type PublicClient, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readPayment } from "../src/schemes/exact/exact-scheme.js";
import { createSettlementFinder } from "../src/schemes/exact/reconcile-settlements.js";
import { createDispatchTool } from "../src/tools/dispatch.js";
import type { ToolSet } from "../src/tools/types.js";
import { cancelAuthorization, signedPayment, submitAuthorization } from "./helpers/authorizations.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";

let t: PaidTestServer;
/** Run inside the tools below while the call is between verification and settlement. */
let duringTool: (() => Promise<void>) | undefined;
let toolRuns = 0;

const account = (index: number) => privateKeyToAccount(t.devnet.deployment.accounts[index]!.privateKey);
const chainId = () => t.devnet.l2.chainId;
const l2 = () => t.devnet.l2.publicClient as unknown as PublicClient;
const asset = () => t.devnet.deployment.addresses.usdToken as Address;
const facilitator = () => t.devnet.deployment.accounts[0]!.address as Address;
/** Transactions the facilitator's key has sent. */
const facilitatorSent = () => l2().getTransactionCount({ address: facilitator(), blockTag: "pending" });

beforeAll(async () => {
  const hooked =
    <T>(answer: () => Promise<T>) =>
    async () => {
      toolRuns++;
      await duringTool?.();
      return answer();
    };
  const tools: ToolSet = {
    offerRadar: hooked(async () => paidRoutes.offerRadar.sampleOutput) as never,
    dispatch: (async (input: never, context: never) => {
      toolRuns++;
      await duringTool?.();
      return createDispatchTool({ missions: t.queue, wake: () => void t.worker.wake() })(input, context);
    }) as never,
  };
  t = await startPaidTestServer({ tools, env: { PAID_RATE_PER_PAYER: "5", PAYER_FAILED_SETTLEMENTS_PER_HOUR: "2" } });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const OFFER_RADAR = { path: "/offer-radar", body: { tokenId: 5, slugs: ["base-bloomers"] } };

async function quote(path = OFFER_RADAR.path, body: unknown = OFFER_RADAR.body, signIn?: string) {
  const res = await t.post(path, body, signIn ? { "SIGN-IN-WITH-X": signIn } : {});
  expect(res.status).toBe(402);
  return (await res.json()) as PaymentRequired;
}

async function send(payment: string, path = OFFER_RADAR.path, body: unknown = OFFER_RADAR.body, signIn?: string) {
  const res = await t.post(path, body, {
    "PAYMENT-SIGNATURE": payment,
    ...(signIn ? { "SIGN-IN-WITH-X": signIn } : {}),
  });
  const json = await res.json();
  return {
    status: res.status,
    reason: res.status === 402 ? parsePaymentRefusal(json.error).reason : undefined,
    error: json.error as unknown,
    json,
  };
}

/** The ledger's row for a payment's nonce, if any. */
async function rowOf(payment: string) {
  const nonce = JSON.parse(Buffer.from(payment, "base64").toString()).payload.authorization.nonce as string;
  const [row] = await t.db.query<{ status: string; transaction: string | null; payment_key: string }>(
    "SELECT status, transaction, payment_key FROM settlements WHERE nonce = $1",
    [nonce],
  );
  return row;
}

/** The claim's authorization expires in the store (time written, not waited for). */
async function expire(payment: string) {
  const row = await rowOf(payment);
  await t.db.query("UPDATE settlements SET valid_before = now() - interval '1 hour' WHERE payment_key = $1", [
    row!.payment_key,
  ]);
}

describe("a stranger naming someone else's wallet", () => {
  it("takes none of the victim's limits: its forged payments are refused, and the victim's own call is served", async () => {
    const victim = account(2);
    const stranger = privateKeyToAccount(generatePrivateKey());
    const requirement = (await quote()).accepts[0] as PaymentRequirements;
    // Twice the victim's rate of payments signed by the stranger's key, naming the victim as payer.
    const forged = await Promise.all(
      Array.from({ length: 10 }, () => signedPayment(stranger, requirement, chainId(), { from: victim.address })),
    );
    const outcomes = await Promise.all(forged.map((payment) => send(payment)));
    const own = await send(await t.pay(2, await quote()));
    expect(own.status, JSON.stringify(own.json)).toBe(200);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe(402);
      expect(outcome.reason).toBe("invalid_payment");
      expect(outcome.error).toMatch(/not signed by its payer/);
    }
    // Nothing was claimed in the victim's name but its own call.
    const claims = await t.db.query("SELECT 1 FROM settlements WHERE payer = $1 AND route = '/offer-radar'", [
      victim.address,
    ]);
    expect(claims).toHaveLength(1);
  });
});

describe("windows that cannot settle", () => {
  it("an authorization not valid yet, or closing within seconds, is refused before the tool runs; nothing is sent", async () => {
    const requirement = (await quote()).accepts[0] as PaymentRequirements;
    const [runs, sent] = [toolRuns, await facilitatorSent()];
    // An hour either way of what the machine's speed could move: the outcome is the same on a fast or a slow one.
    const now = Math.floor(Date.now() / 1000);
    const later = await send(await signedPayment(account(3), requirement, chainId(), { validAfter: now + 3600 }));
    expect(later).toMatchObject({ status: 402, reason: "invalid_payment" });
    expect(later.error).toMatch(/not valid yet/);
    const closing = await send(await signedPayment(account(3), requirement, chainId(), { validBefore: now + 3 }));
    expect(closing).toMatchObject({ status: 402, reason: "invalid_payment" });
    expect(toolRuns).toBe(runs);
    expect(await facilitatorSent()).toBe(sent);
  });

  it("takes an authorization valid from the second before the current one, not from the current one", async () => {
    const requirement = (await quote()).accepts[0] as PaymentRequirements;
    const quoted = requirement as unknown as QuotedRequirements;
    // The service's reading of the window, at a fixed instant: the chain settles only after validAfter.
    const now = Math.floor(Date.now() / 1000);
    const at = new Date(now * 1000 + 500);
    const fromThisSecond = readPayment(
      await signedPayment(account(3), requirement, chainId(), { validAfter: now }),
      quoted,
      at,
    );
    expect(fromThisSecond).toMatchObject({ ok: false, reason: "invalid_payment" });
    expect(!fromThisSecond.ok && fromThisSecond.sentence).toMatch(/not valid yet/);
    const fromTheSecondBefore = readPayment(
      await signedPayment(account(3), requirement, chainId(), { validAfter: now - 1 }),
      quoted,
      at,
    );
    expect(fromTheSecondBefore).toMatchObject({ ok: true });
  });
});

describe("a payer with two signatures", () => {
  it("spending the nonce with a second authorization while the call runs buys nothing and books nothing", async () => {
    const payer = account(4);
    const payee = t.devnet.deployment.accounts[0]!.address as Address;
    const requirement = (await quote()).accepts[0] as PaymentRequirements;
    const nonce = toHex(crypto.getRandomValues(new Uint8Array(32)));
    const quoted = await signedPayment(payer, requirement, chainId(), { nonce });
    // The second: the same nonce, nothing paid, to the payer itself; sent on chain while the tool runs.
    const decoy = await signedPayment(payer, requirement, chainId(), { nonce, to: payer.address, value: "0" });
    const [payeeBefore, payerBefore, sentBefore] = [
      await t.balance(payee),
      await t.balance(payer.address),
      await facilitatorSent(),
    ];
    duringTool = async () => {
      await submitAuthorization(t.devnet.l2.walletClient(4), l2(), asset(), decoy);
    };
    const outcome = await send(quoted).finally(() => {
      duringTool = undefined;
    });
    expect(outcome.status).toBe(502);
    // One settlement transaction was sent, and it reverted: it is not sent again.
    expect(await facilitatorSent()).toBe(sentBefore + 1);
    // The reconciler does not take the decoy for a settlement: open while the authorization is valid, given back
    // once it expires; never booked.
    expect(await t.reconcile()).toMatchObject({ settled: 0 });
    expect(await rowOf(quoted)).toMatchObject({ status: "pending" });
    await expire(quoted);
    expect(await t.reconcile()).toMatchObject({ settled: 0, dropped: 1 });
    expect(await rowOf(quoted)).toBeUndefined();
    expect(await t.balance(payee)).toBe(payeeBefore);
    expect(await t.balance(payer.address)).toBe(payerBefore);
  });

  it("a mission bought that way never runs", async () => {
    const payer = account(5);
    const mission = { tokenId: 5, mission: { tool: "intel" } };
    const requirement = (await quote("/dispatch", mission)).accepts[0] as PaymentRequirements;
    const nonce = toHex(crypto.getRandomValues(new Uint8Array(32)));
    const quoted = await signedPayment(payer, requirement, chainId(), { nonce });
    const decoy = await signedPayment(payer, requirement, chainId(), { nonce, to: payer.address, value: "0" });
    const ran: string[] = [];
    const stop = t.worker.onOutcome((outcome) => ran.push(outcome.id));
    let missionId: string | undefined;
    duringTool = async () => {
      await submitAuthorization(t.devnet.l2.walletClient(5), l2(), asset(), decoy);
    };
    try {
      const outcome = await send(quoted, "/dispatch", mission);
      expect(outcome.status).toBe(502);
      const [row] = await t.db.query<{ id: string }>(
        "SELECT m.id FROM missions m JOIN settlements s ON s.payment_key = m.payment_key WHERE s.nonce = $1",
        [nonce],
      );
      missionId = row?.id;
      expect(missionId).toBeDefined();
      await t.reconcile();
      await t.worker.wake();
      await expire(quoted);
      expect(await t.reconcile()).toMatchObject({ settled: 0, dropped: 1 });
      await t.worker.wake();
    } finally {
      duringTool = undefined;
      stop();
    }
    expect(ran).not.toContain(missionId);
    expect(await t.queue.get(missionId!)).toBeUndefined();
  });

  it("cancelling the authorization while the call runs leaves a claim that is given back once expired", async () => {
    const payer = account(6);
    const requirement = (await quote()).accepts[0] as PaymentRequirements;
    const nonce = toHex(crypto.getRandomValues(new Uint8Array(32)));
    const quoted = await signedPayment(payer, requirement, chainId(), { nonce });
    duringTool = async () => {
      await cancelAuthorization(payer, t.devnet.l2.walletClient(6), l2(), requirement, chainId(), nonce as Hex);
    };
    const outcome = await send(quoted).finally(() => {
      duringTool = undefined;
    });
    expect(outcome.status).toBe(502);
    expect(await t.reconcile()).toMatchObject({ settled: 0 });
    await expire(quoted);
    expect(await t.reconcile()).toMatchObject({ settled: 0, dropped: 1 });
    expect(await rowOf(quoted)).toBeUndefined();
  });

  it("whose settlements keep failing is refused before anything runs once its budget is spent", async () => {
    const payer = account(7);
    const requirement = (await quote()).accepts[0] as PaymentRequirements;
    // The budget is two failed settlements an hour (PAYER_FAILED_SETTLEMENTS_PER_HOUR=2).
    for (let i = 0; i < 2; i++) {
      const nonce = toHex(crypto.getRandomValues(new Uint8Array(32)));
      const quoted = await signedPayment(payer, requirement, chainId(), { nonce });
      duringTool = async () => {
        await cancelAuthorization(payer, t.devnet.l2.walletClient(7), l2(), requirement, chainId(), nonce as Hex);
      };
      expect((await send(quoted).finally(() => (duringTool = undefined))).status).toBe(502);
    }
    const [runs, sent] = [toolRuns, await facilitatorSent()];
    const refused = await t.post(OFFER_RADAR.path, OFFER_RADAR.body, {
      "PAYMENT-SIGNATURE": await signedPayment(payer, requirement, chainId()),
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const { error } = await refused.json();
    expect(error.code).toBe("rate_limited");
    expect(error.message).toMatch(/failed to settle/);
    expect(toolRuns).toBe(runs);
    expect(await facilitatorSent()).toBe(sent);
    // Another payer is not held back.
    expect((await send(await t.pay(8, await quote()))).status).toBe(200);
  });
});

describe("a holder's sign-in", () => {
  it("buys the holder's price only when the holder pays: handed to another payer, it is refused and costs nothing", async () => {
    const signIn = await t.signIn(5, "/offer-radar");
    const holderQuote = await quote(OFFER_RADAR.path, OFFER_RADAR.body, signIn);
    expect(holderQuote.accepts[0]!.amount).toBe("10000");
    const other = account(9);
    const before = await t.balance(other.address);
    const outcome = await send(await t.pay(9, holderQuote), OFFER_RADAR.path, OFFER_RADAR.body, signIn);
    expect(outcome).toMatchObject({ status: 402, reason: "invalid_payment" });
    expect(outcome.error).toMatch(/paid by the holder who signed in/);
    expect(await t.balance(other.address)).toBe(before);
    // The holder itself, with the same sign-in (not spent by the refusal), is served.
    expect((await send(await t.pay(5, holderQuote), OFFER_RADAR.path, OFFER_RADAR.body, signIn)).status).toBe(200);
  });

  it("made for one route is refused on another", async () => {
    const signIn = await t.signIn(5, "/intel");
    const res = await t.post(OFFER_RADAR.path, OFFER_RADAR.body, { "SIGN-IN-WITH-X": signIn });
    expect(res.status).toBe(402);
    const { error } = await res.json();
    expect(parsePaymentRefusal(error).reason).toBe("invalid_siwx");
    expect(error).toMatch(/for \/intel, not \/offer-radar/);
  });

  it("does not show the holder's missions to another payer", async () => {
    const path = "/dispatch?tokenId=5&limit=5";
    const signIn = await t.signIn(5, path);
    const required = await (await t.get(path, { "SIGN-IN-WITH-X": signIn })).json();
    const res = await t.get(path, { "SIGN-IN-WITH-X": signIn, "PAYMENT-SIGNATURE": await t.pay(9, required) });
    expect(res.status).toBe(402);
    expect(parsePaymentRefusal((await res.json()).error).reason).toBe("invalid_payment");
  });
});

describe("the reconciler", () => {
  it("is not held back by claims that can never settle: every claim is read, the chain in bounded batches", async () => {
    const requirement = (await quote()).accepts[0] as PaymentRequirements;
    const claimOf = (payer: Address, nonce: Hex, requestId: string) => ({
      paymentKey: `eip3009:${requirement.network}:${requirement.asset}:${payer}:${nonce}`.toLowerCase(),
      route: "/offer-radar",
      method: "POST" as const,
      tokenId: 5,
      payer,
      nonce,
      caller: null,
      pricePoint: "standard" as const,
      amount: requirement.amount,
      asset: requirement.asset,
      network: requirement.network,
      payTo: requirement.payTo,
      validBefore: new Date(Date.now() + 60_000),
      requestId,
    });
    // 101 calls cut short whose payer then cancelled the authorization (used on chain, with no AuthorizationUsed).
    const canceller = privateKeyToAccount(generatePrivateKey());
    const stuck: string[] = [];
    for (let i = 0; i < 101; i++) {
      const nonce = toHex(crypto.getRandomValues(new Uint8Array(32)));
      const claim = claimOf(canceller.address, nonce, `stuck-${i}`);
      expect((await t.ledger.claim(claim)).outcome).toBe("claimed");
      await cancelAuthorization(canceller, t.devnet.l2.walletClient(9), l2(), requirement, chainId(), nonce);
      stuck.push(claim.paymentKey);
    }
    // Then a genuine call cut short after its settlement was mined.
    const payee = requirement.payTo as Address;
    const payeeBefore = await t.balance(payee);
    const genuine = await signedPayment(account(8), requirement, chainId());
    const { nonce } = JSON.parse(Buffer.from(genuine, "base64").toString()).payload.authorization;
    const genuineClaim = claimOf(account(8).address, nonce, "genuine");
    expect((await t.ledger.claim(genuineClaim)).outcome).toBe("claimed");
    const transaction = await submitAuthorization(t.devnet.l2.walletClient(8), l2(), asset(), genuine);
    expect(await t.balance(payee)).toBe(payeeBefore + BigInt(requirement.amount));

    // Read as the reconciler reads them, on a client that counts the JSON-RPC methods called: one state read per
    // claim, and the logs of the claims in one query per range of blocks (a pass reads its claims a page at a time).
    const calls: Record<string, number> = {};
    const counting = createPublicClient({
      transport: custom({
        request: (args: { method: string; params?: unknown }) => {
          calls[args.method] = (calls[args.method] ?? 0) + 1;
          return t.devnet.l2.provider.request(args as never);
        },
      }),
    });
    const page = (await t.ledger.pending({ limit: 500 })).filter((claim) =>
      [...stuck, genuineClaim.paymentKey].includes(claim.paymentKey),
    );
    expect(page).toHaveLength(102);
    const verdicts = await createSettlementFinder({ client: counting as unknown as PublicClient }).find(page);
    expect(verdicts.get(genuineClaim.paymentKey)).toMatchObject({ used: true, settlement: { transaction } });
    for (const key of stuck) expect(verdicts.get(key)).toEqual({ used: true });
    expect(calls.eth_call).toBe(102);
    expect(calls.eth_getLogs).toBe(1);
    expect(calls.eth_getTransactionReceipt).toBe(1);

    // The reconciler records the genuine one, though a hundred claims that cannot settle came before it.
    expect((await t.reconcile()).settled).toBeGreaterThanOrEqual(1);
    expect(await rowOf(genuine)).toMatchObject({ status: "settled", transaction });
    // The cancelled ones stay open while they could still settle, and are given back once expired.
    const open = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM settlements WHERE status = 'pending' AND payment_key = ANY($1::text[])",
      [stuck],
    );
    expect(open[0]!.n).toBe(101);
    await t.db.query(
      "UPDATE settlements SET valid_before = now() - interval '1 hour' WHERE payment_key = ANY($1::text[])",
      [stuck],
    );
    expect((await t.reconcile()).dropped).toBeGreaterThanOrEqual(101);
    const left = await t.db.query("SELECT 1 FROM settlements WHERE payment_key = ANY($1::text[])", [stuck]);
    expect(left).toEqual([]);
  }, 120_000);
});

/**
 * The reliability suite (`pnpm test:reliability`): the built server under hostile input, payment abuse with real
 * signatures, upstream faults, SIGKILL under paid load and a soak, against real processes. `RELIABILITY=full` runs
 * the long version (10,000 fuzz requests, a 60 s soak); the default is sized for CI. One summary line at the end.
 */

import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { usdTokenAbi } from "@agent-tools/contracts";
import { errorBodySchema, inputToQuery, parsePaymentRefusal, paymentRequiredSchema } from "@agent-tools/schema";
import type { ProxyFault } from "@agent-tools/upstream-sim";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier";
import { type Address, createWalletClient, type Hex, http, type PrivateKeyAccount, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../src/config.js";
import { waitForOutput } from "../src/embedded-process.js";
import { type AuthorizationFields, authorizationOf, signedPayment } from "../test/helpers/authorizations.js";
import { createPace } from "../test/helpers/pace.js";
import { bookOfLedger, settlementsSince } from "../test/helpers/settlements-since.js";
import { type Environment, type MemoryFigures, startEnvironment, UPSTREAM_TIMEOUT_MS } from "./environment.js";
import { fuzzCases } from "./fuzz-cases.js";
import { eachLimit, rawRequest } from "./raw-request.js";

const FULL = process.env.RELIABILITY === "full";
const SCALE = {
  fuzz: FULL ? 10_000 : 2_000,
  soakSeconds: FULL ? 60 : 15,
  kills: FULL ? 4 : 2,
};
const SEED = Number(process.env.RELIABILITY_SEED ?? 20261123);

let env: Environment;
const summary: Record<string, string> = {};

beforeAll(async () => {
  env = await startEnvironment();
}, 180_000);
afterAll(async () => {
  await env?.close();
  const line = ["fuzz", "payment", "faults", "crash", "soak"]
    .map((phase) => summary[phase] ?? `${phase} not run`)
    .join(", ");
  console.log(`reliability: ${line}`);
});

describe("fuzz", () => {
  it(`answers ${SCALE.fuzz} hostile requests without a 5xx, each in the documented shape, and stays healthy`, async () => {
    const doc = await (await fetch(`${env.server.url}/openapi.json`)).json();
    const cases = fuzzCases(doc, SCALE.fuzz, SEED);
    const serverErrors: string[] = [];
    const badShapes: string[] = [];
    const dropped: string[] = [];
    const seen = new Map<string, number>();
    await eachLimit(cases, 16, async (c) => {
      const answer = await rawRequest(env.server.url, c).catch((error: Error) => {
        dropped.push(`${c.kind}: ${c.method} ${c.path.slice(0, 120)} -> ${error.message}`);
        return undefined;
      });
      if (!answer) return;
      const reason = answer.status === 402 ? (/"error":"([a-z_0-9]+)/.exec(answer.text)?.[1] ?? "") : "";
      const code = /"code":"([a-z_]+)"/.exec(answer.text)?.[1] ?? "";
      const key = `${answer.status} ${reason || code}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      const what = `${c.kind}: ${c.method} ${c.path.slice(0, 120)} -> ${answer.status} ${answer.text.slice(0, 200)}`;
      if (answer.status >= 500) serverErrors.push(what);
      if (answer.status >= 400) {
        let body: unknown;
        try {
          body = JSON.parse(answer.text);
        } catch {
          body = undefined;
        }
        const shaped =
          answer.status === 402
            ? paymentRequiredSchema.safeParse(body).success
            : errorBodySchema.safeParse(body).success;
        if (!shaped) badShapes.push(what);
      }
    });
    summary.fuzz = `fuzz ${serverErrors.length}/${cases.length} 5xx`;
    const report = join(tmpdir(), `agent-tools-fuzz-${SEED}.txt`);
    // What the server logged of its failures, one line per distinct message.
    const logged = [
      ...new Set(
        env.server
          .output()
          .split("\n")
          .filter((line) => line.includes('"level":50'))
          .map((line) => /"message":"([^"]*)"/.exec(line)?.[1] ?? line.slice(0, 300)),
      ),
    ];
    const answers = [...seen].sort((a, b) => b[1] - a[1]).map(([key, n]) => `${n} ${key}`);
    writeFileSync(
      report,
      [...serverErrors, ...dropped, ...badShapes, "--- logged", ...logged, "--- answers", ...answers].join("\n"),
    );
    expect(serverErrors.slice(0, 20), `${serverErrors.length} answers 5xx (seed ${SEED}; all in ${report})`).toEqual(
      [],
    );
    expect(dropped.slice(0, 20), `${dropped.length} requests got no answer (seed ${SEED})`).toEqual([]);
    expect(badShapes.slice(0, 20), `${badShapes.length} answers not in the documented shape (seed ${SEED})`).toEqual(
      [],
    );
    expect((await fetch(`${env.server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${env.server.url}/agents/info/1`)).status).toBe(200);
  });
});

/** What a paid call got: its status, the 402's refusal reason, the settlement transaction of a 200. */
interface CallOutcome {
  status: number;
  reason?: string;
  transaction?: string;
}

/** A request of a paid route: POST with a JSON body (default), or GET with the input as query parameters. */
function send(
  path: string,
  input: unknown,
  headers: Record<string, string>,
  method: "GET" | "POST" = "POST",
  signal?: AbortSignal,
): Promise<Response> {
  if (method === "GET") {
    return fetch(`${env.server.url}${path}${inputToQuery(input as Record<string, unknown>)}`, { headers, signal });
  }
  return fetch(`${env.server.url}${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(input),
    signal,
  });
}

/** The 402 a paid route answers without a payment (signed in when `signIn` is given). */
async function quote(path: string, body: unknown, signIn?: string, method: "GET" | "POST" = "POST") {
  const res = await send(path, body, signIn ? { "SIGN-IN-WITH-X": signIn } : {}, method);
  expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBe(402);
  return paymentRequiredSchema.parse(await res.json()) as PaymentRequired;
}

/** A paid request with `payment` (and a sign-in when given): its status, refusal reason or settlement, and body. */
async function paidCall(
  path: string,
  body: unknown,
  payment: string,
  signIn?: string,
  method: "GET" | "POST" = "POST",
): Promise<CallOutcome & { ms: number; body: unknown }> {
  const headers = { "PAYMENT-SIGNATURE": payment, ...(signIn ? { "SIGN-IN-WITH-X": signIn } : {}) };
  const started = performance.now();
  const res = await send(path, body, headers, method, AbortSignal.timeout(60_000));
  const text = await res.text();
  const ms = performance.now() - started;
  const answer = text ? JSON.parse(text) : undefined;
  const receipt = res.headers.get("PAYMENT-RESPONSE");
  return {
    status: res.status,
    ...(res.status === 402 ? { reason: parsePaymentRefusal(answer.error).reason } : {}),
    ...(receipt ? { transaction: JSON.parse(Buffer.from(receipt, "base64").toString("utf8")).transaction } : {}),
    ms,
    body: answer,
  };
}

describe("payment abuse", () => {
  it("refuses every forged, misdirected, stale, unfunded or replayed payment; the payee gains exactly what the ledger records", async () => {
    const path = "/intel";
    const body = { tokenId: 1 };
    const chainId = Number(env.network.split(":")[1]);
    const payer = env.account(2);
    const now = () => Math.floor(Date.now() / 1000);
    const payeeBefore = await env.balance(env.payTo);
    const ledgerBefore = await env.ledger();
    const anonymous = await quote(path, body);
    const requirement = anonymous.accepts[0]!;
    const stranger = privateKeyToAccount(generatePrivateKey());

    // Each forged payment is signed for real; none may buy a call.
    const forged: [string, PrivateKeyAccount, AuthorizationFields, string[]][] = [
      ["one unit short", payer, { value: String(BigInt(requirement.amount) - 1n) }, ["invalid_payment"]],
      ["paid to another address", payer, { to: env.account(5).address }, ["invalid_payment"]],
      [
        "in another asset",
        payer,
        { verifyingContract: env.account(6).address, accepted: { asset: env.account(6).address } },
        ["invalid_payment"],
      ],
      ["on another network", payer, { chainId: 1, accepted: { network: "eip155:1" } }, ["invalid_payment"]],
      ["expired", payer, { validAfter: now() - 3600, validBefore: now() - 10 }, ["invalid_payment"]],
      ["not yet valid", payer, { validAfter: now() + 600 }, ["invalid_payment"]],
      ["valid for ten days", payer, { validBefore: now() + 10 * 86_400 }, ["invalid_payment"]],
      ["from a wallet without funds", stranger, {}, ["invalid_payment", "insufficient_funds"]],
      ["naming a payer who did not sign", env.account(3), { from: payer.address }, ["invalid_payment"]],
    ];
    const wrongful: string[] = [];
    let attempts = 0;
    for (const [name, signer, fields, reasons] of forged) {
      const outcome = await paidCall(path, body, await signedPayment(signer, requirement, chainId, fields));
      attempts++;
      if (outcome.status === 200) wrongful.push(`${name}: served`);
      expect(outcome.status, name).toBe(402);
      expect(reasons, `${name}: ${outcome.reason}`).toContain(outcome.reason);
    }

    // A payment signed at the holder's price, sent without the sign-in that earned it.
    const holder = env.account(1);
    const holderQuote = await quote(path, body, await env.signIn(holder, path));
    expect(BigInt(holderQuote.accepts[0]!.amount)).toBeLessThan(BigInt(requirement.amount));
    const atHolderPrice = await paidCall(path, body, await env.pay(holder, holderQuote));
    attempts++;
    if (atHolderPrice.status === 200) wrongful.push("holder price without sign-in: served");
    expect(atHolderPrice).toMatchObject({ status: 402, reason: "invalid_payment" });

    // One payment sent twenty times at once, then again, then after a restart: one call.
    const payment = await env.pay(payer, anonymous);
    const burst = await Promise.all(Array.from({ length: 20 }, () => paidCall(path, body, payment)));
    attempts += burst.length;
    const served = burst.filter((o) => o.status === 200);
    if (served.length > 1) wrongful.push(`replayed at once: ${served.length} served`);
    expect(served).toHaveLength(1);
    for (const o of burst.filter((o) => o.status !== 200)) {
      expect(["payment_in_use", "payment_already_used"]).toContain(o.reason);
    }
    const again = await paidCall(path, body, payment);
    attempts++;
    expect(again).toMatchObject({ status: 402, reason: "payment_already_used" });
    // A holder's sign-in buys one call at the holder price; after a restart it buys nothing more.
    const signIn = await env.signIn(holder, path);
    const holderCall = await paidCall(path, body, await env.pay(holder, holderQuote), signIn);
    attempts++;
    expect(holderCall.status).toBe(200);
    await env.stop();
    await env.start();
    const afterRestart = await paidCall(path, body, payment);
    attempts++;
    if (afterRestart.status === 200) wrongful.push("replayed after a restart: served");
    expect(afterRestart).toMatchObject({ status: 402, reason: "payment_already_used" });
    const signInAgain = await paidCall(path, body, await env.pay(holder, holderQuote), signIn);
    attempts++;
    if (signInAgain.status === 200) wrongful.push("sign-in reused after a restart: served");
    expect(signInAgain).toMatchObject({ status: 402, reason: "invalid_siwx" });

    // A fresh wallet funded with one call's price signs eight payments and sends them at once: one is served.
    const fresh = privateKeyToAccount(generatePrivateKey());
    const funder = createWalletClient({ account: env.account(9), transport: http(env.devnet.deployment.l2.rpcUrl!) });
    const funding = await funder.writeContract({
      chain: null,
      address: env.asset,
      abi: usdTokenAbi,
      functionName: "transfer",
      args: [fresh.address, BigInt(requirement.amount)],
    });
    await env.l2.waitForTransactionReceipt({ hash: funding });
    const overdrawn = await Promise.all(
      await Promise.all(Array.from({ length: 8 }, () => signedPayment(fresh, requirement, chainId))).then((payments) =>
        payments.map((p) => paidCall(path, body, p)),
      ),
    );
    attempts += overdrawn.length;
    const overServed = overdrawn.filter((o) => o.status === 200);
    if (overServed.length > 1) wrongful.push(`overdrawn: ${overServed.length} served`);
    expect(overServed).toHaveLength(1);
    for (const o of overdrawn.filter((o) => o.status !== 200)) {
      expect(["insufficient_funds", "invalid_payment"]).toContain(o.reason);
    }
    expect(await env.balance(fresh.address)).toBe(0n);

    // Money: the payee gained what the ledger gained, which is what the three served calls paid.
    const payeeGain = (await env.balance(env.payTo)) - payeeBefore;
    const ledgerAfter = await env.ledger();
    const ledgerGain = BigInt(ledgerAfter.total.amount) - BigInt(ledgerBefore.total.amount);
    expect(ledgerAfter.total.payments - ledgerBefore.total.payments).toBe(3);
    expect(payeeGain).toBe(ledgerGain);
    expect(ledgerGain).toBe(2n * BigInt(requirement.amount) + BigInt(holderQuote.accepts[0]!.amount));
    expect(wrongful).toEqual([]);
    summary.payment = `payment ${wrongful.length} wrongful of ${attempts} attempts (payee +${payeeGain} = ledger +${ledgerGain})`;
  });

  it("on a chain that mines every second, an attacker with two signatures or someone else's wallet gets nothing", async () => {
    const chainId = Number(env.network.split(":")[1]);
    const facilitator = env.account(0).address;
    const facilitatorSent = () => env.l2.getTransactionCount({ address: facilitator, blockTag: "pending" });
    const rpc = env.devnet.deployment.l2.rpcUrl!;
    const submitter = createWalletClient({ account: env.account(9), transport: http(rpc) });
    // A block every second, as on a real chain: between the verification of a payment and its settlement, another
    // transaction can take the authorization's nonce.
    await setMining(rpc, 1000);
    const wrongful: string[] = [];
    const seen: Record<string, number> = {};
    const note = (what: string) => {
      seen[what] = (seen[what] ?? 0) + 1;
    };
    let attempts = 0;
    let failedSettlements = 0;
    const payeeBefore = await env.balance(env.payTo);
    const ledgerBefore = await env.ledger();
    const sentBefore = await facilitatorSent();
    let served = 0n;
    let bought = 0;
    const logFrom = env.server.output().length;
    try {
      /** A fresh payer holding `units` of USD (sent by account 9, which pays the attackers' gas too). */
      const fundedPayer = async (units: bigint) => {
        const payer = privateKeyToAccount(generatePrivateKey());
        const hash = await submitter.writeContract({
          chain: null,
          address: env.asset,
          abi: usdTokenAbi,
          functionName: "transfer",
          args: [payer.address, units],
        });
        await env.l2.waitForTransactionReceipt({ hash });
        return payer;
      };
      const elite = { tokenId: 5, slugs: ["base-bloomers"] };
      const standard = (await quote("/offer-radar", elite)).accepts[0] as PaymentRequirements;

      // 1. A second authorization on the same nonce (nothing paid, to the payer itself), sent just before the
      // mission is bought: whichever lands first, no mission runs and nothing is booked unless the payee was paid.
      const mission = { tokenId: 5, mission: { tool: "offer-radar", params: { slugs: ["base-bloomers"] } } };
      const missionPrice = (await quote("/dispatch", mission)).accepts[0] as PaymentRequirements;
      for (let i = 0; i < 3; i++) {
        const payer = await fundedPayer(BigInt(missionPrice.amount));
        const nonce = toHex(crypto.getRandomValues(new Uint8Array(32)));
        const quoted = await signedPayment(payer, missionPrice, chainId, { nonce });
        const decoy = await signedPayment(payer, missionPrice, chainId, { nonce, to: payer.address, value: "0" });
        const { authorization: a, signature } = authorizationOf(decoy);
        await submitter.writeContract({
          chain: null,
          address: env.asset,
          abi: usdTokenAbi,
          functionName: "transferWithAuthorization",
          args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, signature],
          maxPriorityFeePerGas: 100_000_000_000n,
          maxFeePerGas: 200_000_000_000n,
        });
        const outcome = await paidCall("/dispatch", mission, quoted);
        attempts++;
        note(`front-run ${outcome.status}`);
        if (outcome.status === 202) {
          served += BigInt(missionPrice.amount);
          bought++;
        } else if (outcome.status === 502) failedSettlements++;
      }

      // 2. The payer cancels its authorization just before the call: the same.
      for (let i = 0; i < 3; i++) {
        const payer = await fundedPayer(BigInt(standard.amount));
        const nonce = toHex(crypto.getRandomValues(new Uint8Array(32)));
        const quoted = await signedPayment(payer, standard, chainId, { nonce });
        await submitCancel(submitter, payer, standard, chainId, nonce);
        const outcome = await paidCall("/offer-radar", elite, quoted);
        attempts++;
        note(`cancel ${outcome.status}`);
        if (outcome.status === 200) served += BigInt(standard.amount);
        else if (outcome.status === 502) failedSettlements++;
      }

      // 3. A payer whose settlements keep failing stops costing gas: past its budget (3 an hour, as shipped), its
      // payments are refused before anything is verified or sent.
      const griefer = await fundedPayer(10n * BigInt(standard.amount));
      let griefed = 0;
      for (let i = 0; i < 20 && griefed < 3; i++) {
        const nonce = toHex(crypto.getRandomValues(new Uint8Array(32)));
        const quoted = await signedPayment(griefer, standard, chainId, { nonce });
        await submitCancel(submitter, griefer, standard, chainId, nonce);
        const outcome = await paidCall("/offer-radar", elite, quoted);
        attempts++;
        if (outcome.status === 502) griefed++;
        if (outcome.status === 200) served += BigInt(standard.amount);
      }
      failedSettlements += griefed;
      expect(griefed, "settlements of the griefer that failed").toBe(3);
      const sentBeforeRefusal = await facilitatorSent();
      const barred = await paidCall("/offer-radar", elite, await signedPayment(griefer, standard, chainId));
      attempts++;
      note(`griefer ${barred.status}`);
      if (barred.status === 200) wrongful.push("griefer past its budget: served");
      expect(barred.status).toBe(429);
      expect(await facilitatorSent(), "no transaction for a barred payer").toBe(sentBeforeRefusal);

      // 4. An authorization valid from this very second cannot settle: refused, nothing sent.
      const now = Math.floor(Date.now() / 1000);
      const early = await paidCall(
        "/offer-radar",
        elite,
        await signedPayment(env.account(2), standard, chainId, { validAfter: now }),
      );
      attempts++;
      if (early.status !== 402) wrongful.push(`validAfter now: ${early.status}`);

      // 5. A stranger names a victim as payer, twice the victim's rate at once: the victim is still served.
      const victim = await fundedPayer(BigInt(standard.amount));
      const stranger = privateKeyToAccount(generatePrivateKey());
      const forged = await Promise.all(
        Array.from({ length: 2 * DEFAULT_LIMITS.perPayer.ratePerSecond }, () =>
          signedPayment(stranger, standard, chainId, { from: victim.address }),
        ),
      );
      const forgedOutcomes = await Promise.all(forged.map((payment) => paidCall("/offer-radar", elite, payment)));
      attempts += forgedOutcomes.length;
      for (const o of forgedOutcomes) if (o.status === 200) wrongful.push("forged in another's name: served");
      const victimCall = await paidCall("/offer-radar", elite, await signedPayment(victim, standard, chainId));
      note(`victim ${victimCall.status}`);
      if (victimCall.status === 200) served += BigInt(standard.amount);
      else wrongful.push(`victim locked out: ${victimCall.status} ${JSON.stringify(victimCall.body).slice(0, 120)}`);

      // 6. A holder's sign-in handed to another payer buys nothing at the holder's price.
      const holder = env.account(5);
      const signIn = await env.signIn(holder, "/offer-radar");
      const holderQuote = await quote("/offer-radar", elite, signIn);
      const borrowed = await paidCall("/offer-radar", elite, await env.pay(env.account(6), holderQuote), signIn);
      attempts++;
      if (borrowed.status === 200) wrongful.push("a holder's sign-in used by another payer: served");

      // 7. A JSON-RPC batch over MCP: refused whole, nothing run or booked.
      const batch = await fetch(`${env.server.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(
          Array.from({ length: 30 }, (_, id) => ({
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: { name: "offer_radar", arguments: elite },
          })),
        ),
      });
      attempts++;
      if (batch.status !== 400) wrongful.push(`MCP batch: ${batch.status}`);
    } finally {
      await setMining(rpc, 0);
    }
    // A restart reconciles every pending claim at once: the claims whose nonce an attacker took stay unpaid.
    const beforeRestart = env.server.output().slice(logFrom);
    await env.stop();
    await env.start();

    // Each failed settlement cost the facilitator one transaction; everything refused cost none.
    const sent = (await facilitatorSent()) - sentBefore;
    const payeeGain = (await env.balance(env.payTo)) - payeeBefore;
    const ledgerAfter = await env.ledger();
    const ledgerGain = BigInt(ledgerAfter.total.amount) - BigInt(ledgerBefore.total.amount);
    expect(payeeGain, "the payee gained what the ledger records").toBe(ledgerGain);
    expect(ledgerGain, "the ledger records what was served").toBe(served);
    // Only the missions whose payment reached the payee ever start.
    const started = `${beforeRestart}${env.server.output()}`.match(/"msg":"mission started"/g)?.length ?? 0;
    if (started > bought) wrongful.push(`${started - bought} missions started that nobody paid for`);
    expect(wrongful).toEqual([]);
    const servedCalls = ledgerAfter.total.payments - ledgerBefore.total.payments;
    expect(sent, "one transaction per settlement sent, none sent again").toBe(servedCalls + failedSettlements);
    summary.payment += `; on 1 s blocks 0 wrongful of ${attempts} attacks (${Object.entries(seen)
      .map(([k, n]) => `${k}: ${n}`)
      .join(
        ", ",
      )}; ${failedSettlements} settlements reverted, 1 transaction each; payee +${payeeGain} = ledger +${ledgerGain})`;
  }, 300_000);
});

/** Mines a block every `intervalMs` (0: as transactions arrive, the devnet's default). */
async function setMining(rpcUrl: string, intervalMs: number): Promise<void> {
  const call = async (method: string, params: unknown[]) => {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const answer = (await res.json()) as { error?: { message: string } };
    if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
  };
  await call("evm_setAutomine", [intervalMs === 0]);
  await call("evm_setIntervalMining", [intervalMs]);
}

/** The payer's cancellation of `nonce`, signed by the payer and sent by `submitter` (to the mempool, not waited). */
async function submitCancel(
  submitter: ReturnType<typeof createWalletClient>,
  payer: PrivateKeyAccount,
  requirements: PaymentRequirements,
  chainId: number,
  nonce: Hex,
): Promise<void> {
  const extra = requirements.extra as { name: string; version: string };
  const signature = await payer.signTypedData({
    domain: { name: extra.name, version: extra.version, chainId, verifyingContract: requirements.asset as Address },
    types: {
      CancelAuthorization: [
        { name: "authorizer", type: "address" },
        { name: "nonce", type: "bytes32" },
      ],
    },
    primaryType: "CancelAuthorization",
    message: { authorizer: payer.address, nonce },
  });
  await submitter.writeContract({
    chain: null,
    account: submitter.account!,
    address: requirements.asset as Address,
    abi: usdTokenAbi,
    functionName: "cancelAuthorization",
    args: [payer.address, nonce, signature],
    maxPriorityFeePerGas: 100_000_000_000n,
    maxFeePerGas: 200_000_000_000n,
  });
}

/** A paid call made as a client does: ask, pay the quote, send again. Answers the outcome and the price paid. */
async function payAndCall(
  payer: PrivateKeyAccount,
  method: "GET" | "POST",
  path: string,
  input: Record<string, unknown>,
): Promise<CallOutcome & { amount: bigint; ms: number; body: unknown }> {
  const required = await quote(path, input, undefined, method);
  const outcome = await paidCall(path, input, await env.pay(payer, required), undefined, method);
  return { ...outcome, amount: BigInt(required.accepts[0]!.amount) };
}

describe("upstream faults", () => {
  it("never answers 500 and never charges for an upstream's errors, hangs, cut or slow bodies and wrong shapes", async () => {
    // Token 5 has Elite clearance, which every tool accepts; each tool has a payer of its own.
    const wallet = env.account(2).address;
    // The status each answers without a fault. Outside the embedded default no wallet has authorized the service with
    // the marketplace, so the allowlist scan reaches it and is told the wallet's eligibility cannot be read (400).
    const tools: [string, Record<string, unknown>, number][] = [
      ["/drop-radar", { tokenId: 5, limit: 5 }, 200],
      ["/b20-radar", { tokenId: 5, limit: 5 }, 200],
      ["/altchain-radar", { tokenId: 5, limit: 5 }, 200],
      ["/portfolio", { tokenId: 5, walletAddress: wallet }, 200],
      ["/allowlist-scan", { tokenId: 5, walletAddress: wallet, limit: 5 }, 400],
      ["/offer-radar", { tokenId: 5, slugs: ["base-bloomers"] }, 200],
    ];
    const payerOf = (i: number) => env.account(2 + i);
    const missionPayer = env.account(9);
    const faults: ProxyFault[] = [
      { kind: "status", status: 429, retryAfterSeconds: 1 },
      { kind: "status", status: 429 },
      { kind: "status", status: 500 },
      { kind: "status", status: 502, html: true },
      { kind: "status", status: 503 },
      { kind: "status", status: 504 },
      { kind: "reset" },
      { kind: "hang" },
      { kind: "truncate" },
      { kind: "wrong-shape" },
      { kind: "slow-body", totalMs: 4 * UPSTREAM_TIMEOUT_MS },
    ];
    const label = (f: ProxyFault) =>
      f.kind === "status" ? `${f.status}${f.html ? " html" : ""}${f.retryAfterSeconds ? " retry-after" : ""}` : f.kind;
    const payeeBefore = await env.balance(env.payTo);
    let paid = 0n;
    const problems: string[] = [];
    const answers = new Map<string, number>();
    let slowest = 0;

    for (const fault of faults) {
      // A fresh process for each fault: the previous round opened the upstream circuit breakers, which would answer
      // 503 without asking the upstream (the breaker has tests of its own).
      await env.stop();
      await env.start();
      const seenBefore = {
        marketplace: env.proxies.marketplace.requests().length,
        marketData: env.proxies.marketData.requests().length,
      };
      env.proxies.marketplace.inject(fault);
      env.proxies.marketData.inject(fault);
      try {
        const queued = await payAndCall(missionPayer, "POST", "/dispatch", {
          tokenId: 5,
          mission: { tool: "offer-radar", params: { slugs: ["base-bloomers"] } },
        });
        expect(queued.status, JSON.stringify(queued.body)).toBe(202);
        paid += queued.amount;
        const missionId = (queued.body as { mission: { id: string } }).mission.id;
        const outcomes = await Promise.all(
          tools.map(([path, input], i) => payAndCall(payerOf(i), "POST", path, input).then((o) => ({ path, ...o }))),
        );
        for (const o of outcomes) {
          const key = `${o.status} ${(o.body as { code?: string })?.code ?? ""}`.trim();
          answers.set(key, (answers.get(key) ?? 0) + 1);
          slowest = Math.max(slowest, o.ms);
          const what = `${label(fault)} ${o.path}: ${o.status} ${JSON.stringify(o.body).slice(0, 200)}`;
          if (o.status === 200) paid += o.amount;
          else if (o.transaction) problems.push(`${what} (charged)`);
          if (o.status >= 500 && ![502, 503, 504].includes(o.status)) problems.push(what);
          if (o.status !== 200 && !errorBodySchema.safeParse(o.body).success) problems.push(`${what} (shape)`);
        }
        // The mission meets the same fault, is retried, and ends failed with an error of ours.
        await waitForOutput(
          env.server,
          new RegExp(`"mission":"${missionId}"[^\\n]*"msg":"mission (failed|done)"`),
          60_000,
          `mission ${missionId}`,
        );
        // Both upstreams were asked and answered with the fault (no answer came from a cache).
        for (const name of ["marketplace", "marketData"] as const) {
          const met = env.proxies[name].requests().slice(seenBefore[name]);
          expect(
            met.some((r) => r.fate === fault.kind),
            `${label(fault)}: the ${name} upstream was asked`,
          ).toBe(true);
        }
      } finally {
        env.proxies.marketplace.clearFaults();
        env.proxies.marketData.clearFaults();
      }
    }
    const listing = await payAndCall(missionPayer, "GET", "/dispatch", { tokenId: 5, limit: 50 });
    expect(listing.status).toBe(200);
    paid += listing.amount;
    const missions = (listing.body as { missions: { status: string; error?: unknown }[] }).missions;
    expect(missions).toHaveLength(faults.length);
    for (const mission of missions) {
      expect(mission.status).toBe("failed");
      expect(JSON.stringify(mission.error)).not.toMatch(/127\.0\.0\.1|ECONN|at .*\.js|Unexpected token/);
    }

    // Once the faults are cleared each tool answers as it should: the calls above met the faults, not an error of
    // their own. (Run last: an answer from before the faults would be cached and hide them.)
    await env.stop();
    await env.start();
    for (const [i, [path, input, status]] of tools.entries()) {
      const outcome = await payAndCall(payerOf(i), "POST", path, input);
      expect(outcome.status, `${path} ${JSON.stringify(outcome.body).slice(0, 300)}`).toBe(status);
      if (outcome.status === 200) paid += outcome.amount;
    }

    const payeeGain = (await env.balance(env.payTo)) - payeeBefore;
    expect(problems).toEqual([]);
    expect(payeeGain, "the payee gained exactly the price of the answers given").toBe(paid);
    // A hung or trickling upstream is given up after UPSTREAM_TIMEOUT_MS per upstream call; a tool makes its calls in
    // at most a few rounds, so no answer waits for the upstream indefinitely.
    expect(slowest).toBeLessThan(10 * UPSTREAM_TIMEOUT_MS);
    const histogram = [...answers].map(([k, n]) => `${n}x ${k}`).join(", ");
    const charged = problems.filter((p) => p.endsWith("(charged)")).length;
    summary.faults = `faults ${charged} charged, ${problems.length} wrong of ${faults.length * tools.length} (${histogram}; slowest ${Math.round(slowest)} ms; ${missions.length} missions failed cleanly)`;
  });
});

/**
 * How fast one payer's calls may come in the suite's loads: half the per-payer rate the server ships with, so that
 * a machine fast enough to answer quicker never meets the limit (the payment phase tests the limit itself).
 */
const PAYER_PACE = DEFAULT_LIMITS.perPayer.ratePerSecond / 2;

/**
 * Paid `/intel` calls from `workers` payers at once, each paced, until stopped; each outcome is kept. Each payment
 * names an x402 payment identifier: a paid call cut by a kill is sent again, as it was, once the server is back, as
 * the SDK does; what that retry got is kept in `retries`.
 */
function steadyPaidLoad(workers: number, firstAccount: number) {
  const outcomes: (CallOutcome | { status: 0 | -1; error: string })[] = [];
  const retries: CallOutcome[] = [];
  let stopped = false;
  let served = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const count = (outcome: CallOutcome) => {
    if (outcome.status === 200) served++;
    for (const w of waiters.filter((w) => served >= w.count)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  const run = async (payer: PrivateKeyAccount, tokenId: number) => {
    const pace = createPace(PAYER_PACE);
    while (!stopped) {
      await pace();
      let payment: string;
      try {
        const quoted = await quote("/intel", { tokenId });
        const extensions = structuredClone(quoted.extensions ?? {});
        appendPaymentIdentifierToExtensions(extensions);
        payment = await env.pay(payer, { ...quoted, extensions });
      } catch (error) {
        // An answer other than the 402 asked for is wrong; no answer means the server is down: nothing was paid.
        if ((error as Error).name === "AssertionError") outcomes.push({ status: -1, error: (error as Error).message });
        await env.serverUp();
        continue;
      }
      try {
        const outcome = await paidCall("/intel", { tokenId }, payment);
        outcomes.push(outcome);
        count(outcome);
      } catch (error) {
        // No answer: the server was killed under the call. Sent again as it was once the server is back (again, if
        // it is killed under the retry too).
        outcomes.push({ status: 0, error: (error as Error).message });
        for (;;) {
          await env.serverUp();
          try {
            const retried = await paidCall("/intel", { tokenId }, payment);
            retries.push(retried);
            count(retried);
            break;
          } catch {
            // Killed again meanwhile.
          }
        }
      }
    }
  };
  const running = Array.from({ length: workers }, (_, i) => run(env.account(firstAccount + i), 10 + i));
  return {
    outcomes,
    retries,
    /** Resolves once `count` more calls have been served. */
    servedMore(count: number): Promise<void> {
      return new Promise((resolve) => waiters.push({ count: served + count, resolve }));
    },
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}

describe("crash", () => {
  it(`SIGKILLed ${SCALE.kills} times under paid load, loses no settlement and records none twice`, async () => {
    const startBlock = (await env.l2.getBlockNumber({ cacheTime: 0 })) + 1n;
    const bookBefore = bookOfLedger(await env.ledger());
    const load = steadyPaidLoad(6, 2);
    for (let kill = 0; kill < SCALE.kills; kill++) {
      await load.servedMore(20);
      await env.kill();
      await env.start();
    }
    await load.servedMore(10);
    await load.stop();

    // What the chain shows (every settlement is a Transfer to the payee), and the ledger once it has caught up.
    const {
      transfers,
      onChain,
      book,
      recorded: recordedTx,
    } = await settlementsSince({
      l2: env.l2,
      asset: env.asset,
      payTo: env.payTo,
      fromBlock: startBlock,
      readBook: async () => bookOfLedger(await env.ledger()),
      before: bookBefore,
    });
    expect(onChain.size).toBe(transfers);
    expect(recordedTx.length, "the ledger's total grew by the rows it lists").toBe(book.payments - bookBefore.payments);
    const answered = load.outcomes.filter((o) => o.status === 200) as CallOutcome[];
    const unanswered = load.outcomes.filter((o) => o.status === 0).length;
    const wrong = load.outcomes.filter((o) => o.status !== 0 && o.status !== 200);
    // A call cut by a kill, sent again with its payment: answered (its answer kept, or the call run again at no
    // charge when it was cut after its settlement, or run for the first time when it was cut before its claim), or
    // still held when its claim was cut before its settlement was known (given back once the authorization expires).
    const recovered = load.retries.filter((o) => o.status === 200);
    const held = load.retries.filter((o) => o.status === 402 && o.reason === "payment_in_use");
    const served = [...answered, ...recovered];

    expect(wrong.map((o) => JSON.stringify(o)).slice(0, 10), "answers other than 200 under load").toEqual([]);
    expect(load.retries).toHaveLength(unanswered);
    expect(
      load.retries.filter((o) => !recovered.includes(o) && !held.includes(o)).map((o) => JSON.stringify(o)),
      "a retry of a cut call is answered, or told its payment is held",
    ).toEqual([]);
    // Each answer is one settlement: no call answered twice was charged twice.
    expect(new Set(served.map((o) => o.transaction)).size, "one settlement per answer").toBe(served.length);
    expect(new Set(recordedTx).size, "no settlement recorded twice").toBe(recordedTx.length);
    expect([...recordedTx].sort(), "the ledger's rows are the chain's settlements").toEqual([...onChain].sort());
    for (const o of served) expect(onChain.has(o.transaction as `0x${string}`), `${o.transaction} on chain`).toBe(true);
    const lost = [...onChain].filter((tx) => !recordedTx.includes(tx)).length;
    const double = recordedTx.length - new Set(recordedTx).size;
    summary.crash =
      `crash ${lost} lost ${double} double (${SCALE.kills} kills: ${onChain.size} settled on chain = ${recordedTx.length} ledger rows, ` +
      `${served.length} served, ${unanswered} cut off by a kill: ${recovered.length} answered on the retry with the ` +
      `same payment, ${held.length} held until it expires)`;
  });
});

describe("soak", () => {
  it(`serves ${SCALE.soakSeconds} s of mixed load without an error, its memory flat after warm-up`, async () => {
    const errors: string[] = [];
    const counts = { public: 0, challenge: 0 };
    let stopped = false;
    // The public reads and challenges come at a steady rate, as a service's traffic does, not as fast as one machine
    // can send them: 500 a second between them all. Each payer's calls are paced below its rate (PAYER_PACE).
    const pace = createPace(500);
    const publicPaths = (i: number) => {
      const id = 1 + ((i * 97) % 6000);
      return ["/healthz", `/agents/info/${id}`, `/agents/${id}/binding`, "/openapi.json", "/.well-known/x402"][i % 5]!;
    };
    const publicReader = async (worker: number) => {
      for (let i = worker; !stopped; i += 4) {
        const path = publicPaths(i);
        await pace();
        const res = await fetch(`${env.server.url}${path}`).catch((e: Error) => ({ status: 0, text: () => e.message }));
        await res.text();
        if (res.status !== 200) errors.push(`GET ${path}: ${res.status}`);
        counts.public++;
      }
    };
    const challenger = async () => {
      while (!stopped) {
        await pace();
        const res = await fetch(`${env.server.url}/drop-radar`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ tokenId: 5, limit: 5 }),
        }).catch((e: Error) => ({ status: 0, text: () => e.message }));
        await res.text();
        if (res.status !== 402) errors.push(`POST /drop-radar without payment: ${res.status}`);
        counts.challenge++;
      }
    };
    const readers = [...Array.from({ length: 4 }, (_, i) => publicReader(i)), challenger(), challenger()];
    const paid = steadyPaidLoad(3, 2);
    const tools = (async () => {
      const bodies: [string, Record<string, unknown>][] = [
        ["/drop-radar", { tokenId: 5, limit: 5 }],
        ["/offer-radar", { tokenId: 5, slugs: ["base-bloomers", "static-kittens"] }],
        ["/altchain-radar", { tokenId: 5, limit: 5 }],
        ["/portfolio", { tokenId: 5, walletAddress: env.account(2).address }],
      ];
      let served = 0;
      const toolPace = createPace(PAYER_PACE);
      for (let i = 0; !stopped; i++) {
        await toolPace();
        const [path, input] = bodies[i % bodies.length]!;
        const outcome = await payAndCall(env.account(8), "POST", path, input).catch((e: Error) => ({
          status: 0,
          body: e.message,
        }));
        if (outcome.status === 200) served++;
        else errors.push(`${path}: ${outcome.status} ${JSON.stringify(outcome.body).slice(0, 200)}`);
      }
      return served;
    })();

    // The warm-up lasts until resident memory holds (code tiering up, caches and pools filling, V8 and PGlite growing
    // to the load, slower on a busy machine; V8's young generation grows with the allocation rate; the native memory
    // of a fresh process can rest for ten seconds and then step up once): seven reads 2.5 s apart (15 s) within 1%,
    // or 60 s at most, so a leak, which never holds, is still measured. Read after a full GC.
    const warmUpStarted = performance.now();
    const reads = [await env.memory()];
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 2500));
      reads.push(await env.memory());
      const last = reads.slice(-7).map((m) => m.rss);
      const held = last.length === 7 && Math.max(...last) / Math.min(...last) - 1 < 0.01;
      if (held || performance.now() - warmUpStarted > 60_000) break;
    }
    const previous = reads.at(-1)!;
    const warmUpSeconds = (performance.now() - warmUpStarted) / 1000;
    const samples = [previous];
    const started = performance.now();
    while (performance.now() - started < SCALE.soakSeconds * 1000) {
      await new Promise((resolve) => setTimeout(resolve, 5000));
      samples.push(await env.memory());
    }
    const [before, after] = [samples[0]!, samples.at(-1)!];
    stopped = true;
    await Promise.all(readers);
    await paid.stop();
    const toolCalls = await tools;

    const paidErrors = paid.outcomes.filter((o) => o.status !== 200);
    const all = counts.public + counts.challenge + paid.outcomes.length + toolCalls + errors.length;
    const allErrors = errors.length + paidErrors.length;
    const mb = (bytes: number) => Math.round(bytes / 1_048_576);
    const growth = (key: keyof MemoryFigures) => after[key] / before[key] - 1;
    const percent = (key: keyof MemoryFigures) => `${growth(key) >= 0 ? "+" : ""}${(growth(key) * 100).toFixed(1)}%`;
    summary.soak =
      `soak ${SCALE.soakSeconds} s (after ${warmUpSeconds.toFixed(1)} s of warm-up): ${allErrors} errors in ${all} ` +
      `requests, rss ${mb(before.rss)} -> ${mb(after.rss)} MB (${percent("rss")}), live heap ${mb(before.heapUsed)} -> ` +
      `${mb(after.heapUsed)} MB (${percent("heapUsed")})`;
    expect([...errors, ...paidErrors.map((o) => JSON.stringify(o))].slice(0, 20)).toEqual([]);
    // A leak grows the live heap, and resident memory with it.
    const series = [...reads, ...samples.slice(1)]
      .map((m) => `${Math.round(m.uptime)}s:${mb(m.rss)}/${mb(m.heapTotal)}/${mb(m.heapUsed)}/${mb(m.external)}`)
      .join(" ");
    expect(
      growth("rss"),
      `${summary.soak}; at server uptime: rss/heap total/heap used/external MB: ${series}`,
    ).toBeLessThan(0.1);
    expect(growth("heapUsed"), summary.soak).toBeLessThan(0.1);
  });
});

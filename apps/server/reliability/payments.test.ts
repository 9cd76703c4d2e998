/**
 * The reliability suite, money side (`pnpm test:reliability`): payment abuse with real signatures, on instant blocks
 * and on a chain that mines every second, and upstream faults, against the built server in a process of its own.
 * Nothing is charged wrongfully, whatever the attack or the fault. One summary line at the end.
 */

import { PERMIT2_ADDRESS, permit2Abi, usdTokenAbi } from "@agent-tools/contracts";
import { errorBodySchema, MCP_PAYMENT_META, parsePaymentRefusal } from "@agent-tools/schema";
import type { ProxyFault } from "@agent-tools/upstream-sim";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toClientEvmSigner, uptoPermit2WitnessTypes } from "@x402/evm";
import { UptoEvmScheme as UptoClient } from "@x402/evm/upto/client";
import {
  type Address,
  createWalletClient,
  type Hex,
  http,
  maxUint256,
  type PrivateKeyAccount,
  parseEther,
  toHex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../src/config/config.js";
import { waitForOutput } from "../src/startup/embedded-process.js";
import { type AuthorizationFields, authorizationOf, signedPayment } from "../test/helpers/authorizations.js";
import { a2aRequests } from "./a2a-requests.js";
import { reliabilityCalls, setMining, submitCancel } from "./calls.js";
import { type Environment, startEnvironment, UPSTREAM_TIMEOUT_MS } from "./environment.js";

let env: Environment;
const summary: Record<string, string> = {};
const { quote, paidCall, payAndCall } = reliabilityCalls(() => env);
const a2a = a2aRequests(() => env);

beforeAll(async () => {
  env = await startEnvironment({ upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS });
}, 180_000);
afterAll(async () => {
  await env?.close();
  const line = ["payment", "faults"].map((phase) => summary[phase] ?? `${phase} not run`).join(", ");
  console.log(`reliability: ${line}`);
});

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
        note(`griefing ${outcome.status}`);
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

      // 4. An authorization valid from this very second cannot settle yet: refused, nothing sent. Which second the
      // server reads it in is the machine's pace (a slow one receives it in the next, when it is valid), so the check
      // is that the server and the chain agree: refused with nothing sent, or served and settled, never sent to revert.
      // The edge itself, at a fixed instant, is test/payment-abuse.test.ts's.
      const now = Math.floor(Date.now() / 1000);
      const sentBeforeEarly = await facilitatorSent();
      const early = await paidCall(
        "/offer-radar",
        elite,
        await signedPayment(env.account(2), standard, chainId, { validAfter: now }),
      );
      attempts++;
      note(`validAfter now ${early.status}`);
      if (early.status === 200) served += BigInt(standard.amount);
      else if (early.status !== 402) wrongful.push(`validAfter now: ${early.status}`);
      else if ((await facilitatorSent()) !== sentBeforeEarly) wrongful.push("validAfter now: refused after sending");

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
    const { payeeGain, ledgerGain, ledgerAfter } = await expectMoneyAsServed(
      { payee: payeeBefore, ledger: ledgerBefore },
      served,
      { seen, wrongful },
    );
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

  it("upto, on a chain that mines every second: one permit buys one call across HTTP, MCP and A2A; a nonce burned or an approval taken back buys nothing", async () => {
    const path = "/intel";
    const body = { tokenId: 1 };
    const rpc = env.devnet.deployment.l2.rpcUrl!;
    const submitter = createWalletClient({ account: env.account(9), transport: http(rpc) });
    const wrongful: string[] = [];
    const seen: Record<string, number> = {};
    const note = (what: string) => {
      seen[what] = (seen[what] ?? 0) + 1;
    };
    let attempts = 0;
    let served = 0n;
    let servedCalls = 0;
    const payeeBefore = await env.balance(env.payTo);
    const ledgerBefore = await env.ledger();
    const quoted = await quote(path, body);
    const requirement = quoted.accepts.find((accept) => accept.scheme === "upto") as PaymentRequirements;
    expect(requirement, "the 402 offers upto").toBeDefined();
    const mcp = new McpClient({ name: "reliability-upto", version: "1.0.0" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${env.server.url}/mcp`)));
    await setMining(rpc, 1000);
    try {
      const mined = async (hash: Promise<Hex>) => env.l2.waitForTransactionReceipt({ hash: await hash });
      /** A fresh payer with 2 USD, gas and Permit2 approved: its nonces and its approval are its own to spoil. */
      const permitPayer = async () => {
        const payer = privateKeyToAccount(generatePrivateKey());
        await mined(submitter.sendTransaction({ chain: null, to: payer.address, value: parseEther("1") }));
        await mined(
          submitter.writeContract({
            chain: null,
            address: env.asset,
            abi: usdTokenAbi,
            functionName: "transfer",
            args: [payer.address, 2_000_000n],
          }),
        );
        const wallet = createWalletClient({ account: payer, transport: http(rpc) });
        await mined(
          wallet.writeContract({
            chain: null,
            address: env.asset,
            abi: usdTokenAbi,
            functionName: "approve",
            args: [PERMIT2_ADDRESS, maxUint256],
          }),
        );
        return { payer, wallet };
      };
      /** A permit of x402's own upto client for the quote, as it sends it. */
      const permitOf = async (payer: PrivateKeyAccount) => {
        const created = await new UptoClient(toClientEvmSigner(payer, env.l2 as never)).createPaymentPayload(
          2,
          requirement,
        );
        const payload = {
          x402Version: 2,
          accepted: requirement,
          resource: quoted.resource,
          payload: created.payload,
        } as PaymentPayload;
        return { payload, header: encodePaymentSignatureHeader(payload) };
      };
      /** The call's outcome over each transport: "served", or the refusal's reason. */
      const overHttp = async (header: string) => {
        const outcome = await paidCall(path, body, header);
        return outcome.status === 200 ? "served" : (outcome.reason ?? `status ${outcome.status}`);
      };
      const overMcp = async (payload: PaymentPayload) => {
        const result = (await mcp.callTool({
          name: "intel",
          arguments: body,
          _meta: { [MCP_PAYMENT_META]: payload },
        })) as CallToolResult;
        if (!result.isError) return "served";
        const error = (result.structuredContent as { error?: string } | undefined)?.error;
        return error ? parsePaymentRefusal(error).reason : "mcp error";
      };
      const overA2a = async (payload: PaymentPayload) => {
        const { result, error } = await a2a.sendPaid("intel", body, payload);
        const status = (result?.task ?? result)?.status;
        if (status?.state === "TASK_STATE_COMPLETED") return "served";
        return String(status?.message?.metadata?.["x402.payment.error"] ?? error?.message ?? status?.state);
      };
      const lost = async (payer: Address, before: bigint) => before - (await env.balance(payer));

      // 1. One permit sent at once: six times over HTTP, twice over MCP (its stock client), twice over A2A.
      const { payer: once } = await permitPayer();
      const permit = await permitOf(once);
      const onceBefore = await env.balance(once.address);
      const outcomes = await Promise.all([
        ...Array.from({ length: 6 }, () => overHttp(permit.header)),
        ...Array.from({ length: 2 }, () => overMcp(permit.payload)),
        ...Array.from({ length: 2 }, () => overA2a(permit.payload)),
      ]);
      attempts += outcomes.length;
      for (const outcome of outcomes) note(`one permit: ${outcome}`);
      const servedOnce = outcomes.filter((outcome) => outcome === "served").length;
      if (servedOnce > 1) wrongful.push(`one permit: ${servedOnce} served`);
      expect(servedOnce, JSON.stringify(outcomes)).toBe(1);
      for (const outcome of outcomes.filter((o) => o !== "served")) {
        expect(["payment_in_use", "payment_already_used"], JSON.stringify(outcomes)).toContain(outcome);
      }
      const charge = await lost(once.address, onceBefore);
      expect(charge, "an anonymous /intel is charged 0.012 of its 1.00").toBe(12_000n);
      served += charge;
      servedCalls += 1;

      // 2. Two signatures on one nonce (the second with an earlier deadline), sent at once: one call.
      const { payer: twice } = await permitPayer();
      const first = await permitOf(twice);
      const authorization = (first.payload.payload as { permit2Authorization: Record<string, never> })
        .permit2Authorization as unknown as {
        permitted: { token: Address; amount: string };
        spender: Address;
        nonce: string;
        deadline: string;
        witness: { to: Address; facilitator: Address; validAfter: string };
      };
      const earlier = { ...authorization, deadline: String(BigInt(authorization.deadline) - 5n) };
      const signature = await twice.signTypedData({
        domain: {
          name: "Permit2",
          chainId: Number(env.network.split(":")[1]),
          verifyingContract: PERMIT2_ADDRESS,
        },
        types: uptoPermit2WitnessTypes,
        primaryType: "PermitWitnessTransferFrom",
        message: {
          permitted: { token: earlier.permitted.token, amount: BigInt(earlier.permitted.amount) },
          spender: earlier.spender,
          nonce: BigInt(earlier.nonce),
          deadline: BigInt(earlier.deadline),
          witness: { ...earlier.witness, validAfter: BigInt(earlier.witness.validAfter) },
        },
      });
      const second = {
        ...first.payload,
        payload: { signature, permit2Authorization: { ...earlier, from: twice.address } },
      } as PaymentPayload;
      const twiceBefore = await env.balance(twice.address);
      const pair = await Promise.all([overHttp(first.header), overHttp(encodePaymentSignatureHeader(second))]);
      attempts += pair.length;
      for (const outcome of pair) note(`one nonce, two signatures: ${outcome}`);
      if (pair.filter((o) => o === "served").length !== 1) wrongful.push(`one nonce, two signatures: ${pair}`);
      expect(pair.filter((o) => o === "served")).toHaveLength(1);
      expect(await lost(twice.address, twiceBefore)).toBe(12_000n);
      served += 12_000n;
      servedCalls += 1;

      // 3. The payer burns the permit's nonce, and 4. takes its Permit2 approval back, each sent just before the
      // call: served only if the settlement came first (and then paid), else refused and nothing taken.
      const spoilers: [string, (wallet: ReturnType<typeof createWalletClient>, nonce: bigint) => Promise<Hex>][] = [
        [
          "nonce burned",
          (wallet, nonce) =>
            wallet.writeContract({
              chain: null,
              account: wallet.account!,
              address: PERMIT2_ADDRESS,
              abi: permit2Abi,
              functionName: "invalidateUnorderedNonces",
              args: [nonce >> 8n, 1n << (nonce & 0xffn)],
            }),
        ],
        [
          "approval taken back",
          (wallet) =>
            wallet.writeContract({
              chain: null,
              account: wallet.account!,
              address: env.asset,
              abi: usdTokenAbi,
              functionName: "approve",
              args: [PERMIT2_ADDRESS, 0n],
            }),
        ],
      ];
      for (const [name, spoil] of spoilers) {
        const { payer, wallet } = await permitPayer();
        const spoiled = await permitOf(payer);
        const nonce = BigInt(
          (spoiled.payload.payload as { permit2Authorization: { nonce: string } }).permit2Authorization.nonce,
        );
        const before = await env.balance(payer.address);
        const sent = spoil(wallet, nonce);
        const outcome = await overHttp(spoiled.header);
        await mined(sent);
        attempts++;
        note(`${name}: ${outcome}`);
        const taken = await lost(payer.address, before);
        if (outcome === "served") {
          expect(taken, name).toBe(12_000n);
          served += taken;
          servedCalls += 1;
        } else {
          if (taken !== 0n) wrongful.push(`${name}: refused (${outcome}) and charged ${taken}`);
          expect(taken, `${name}: ${outcome}`).toBe(0n);
          // Refused with a reason, whether before the settlement was sent or once it reverted: never left pending.
          expect(["settlement_failed", "invalid_payment"], name).toContain(outcome);
        }
      }

      // The permit used at once above, sent again after a restart: still used.
      await mcp.close();
      await env.stop();
      await env.start();
      const afterRestart = await overHttp(permit.header);
      attempts++;
      if (afterRestart === "served") wrongful.push("one permit after a restart: served");
      expect(afterRestart).toBe("payment_already_used");
    } finally {
      await mcp.close().catch(() => {});
      await setMining(rpc, 0);
    }
    const { payeeGain, ledgerGain, ledgerAfter } = await expectMoneyAsServed(
      { payee: payeeBefore, ledger: ledgerBefore },
      served,
      { seen, wrongful },
    );
    expect(ledgerAfter.total.payments - ledgerBefore.total.payments).toBe(servedCalls);
    expect(wrongful).toEqual([]);
    summary.payment += `; upto on 1 s blocks 0 wrongful of ${attempts} attacks (${Object.entries(seen)
      .map(([k, n]) => `${k}: ${n}`)
      .join(", ")}; payee +${payeeGain} = ledger +${ledgerGain})`;
  }, 300_000);
});

/**
 * The payee gained on chain what the ledger gained since `before`, and that is what was `served`; the outcomes and
 * anything wrongful go with a mismatch, so that a failure says which call it was.
 */
async function expectMoneyAsServed(
  before: { payee: bigint; ledger: Awaited<ReturnType<Environment["ledger"]>> },
  served: bigint,
  tally: { seen: Record<string, number>; wrongful: string[] },
) {
  const payeeGain = (await env.balance(env.payTo)) - before.payee;
  const ledgerAfter = await env.ledger();
  const ledgerGain = BigInt(ledgerAfter.total.amount) - BigInt(before.ledger.total.amount);
  const outcomes = `outcomes ${JSON.stringify(tally.seen)}, wrongful ${JSON.stringify(tally.wrongful)}`;
  expect(payeeGain, `the payee gained what the ledger records (${outcomes})`).toBe(ledgerGain);
  expect(ledgerGain, `the ledger records what was served (${outcomes})`).toBe(served);
  return { payeeGain, ledgerGain, ledgerAfter };
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

/**
 * What the reliability suite's files share: its size (CI, or the long version with `RELIABILITY=full`), and paid
 * calls made as a client makes them against the server of a file's environment (./environment.ts).
 */
import { usdTokenAbi } from "@agent-tools/contracts";
import { inputToQuery, parsePaymentRefusal, paymentRequiredSchema } from "@agent-tools/schema";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier";
import type { Address, createWalletClient, Hex, PrivateKeyAccount } from "viem";
import { expect } from "vitest";
import { DEFAULT_LIMITS } from "../src/config/config.js";
import { createPace } from "../test/helpers/pace.js";
import { paymentSettlementKey } from "../test/helpers/settlements-since.js";
import type { Environment } from "./environment.js";

const FULL = process.env.RELIABILITY === "full";
export const SCALE = {
  fuzz: FULL ? 10_000 : 2_000,
  soakSeconds: FULL ? 60 : 15,
  kills: FULL ? 4 : 2,
};
export const SEED = Number(process.env.RELIABILITY_SEED ?? 20261123);

export interface CallOutcome {
  status: number;
  reason?: string;
  transaction?: string;
  /** The settlement key of the payment sent (its payer and nonce). */
  key?: string;
}

/**
 * How fast one payer's calls may come in the suite's loads: half the per-payer rate the server ships with, so that
 * a machine fast enough to answer quicker never meets the limit (the payment phase tests the limit itself).
 */
export const PAYER_PACE = DEFAULT_LIMITS.perPayer.ratePerSecond / 2;

export async function setMining(rpcUrl: string, intervalMs: number): Promise<void> {
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
export async function submitCancel(
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

/** The paid calls of a test file, against the server of its environment (`env`, set once it has started). */
export function reliabilityCalls(env: () => Environment) {
  /** A request of a paid route: POST with a JSON body (default), or GET with the input as query parameters. */
  function send(
    path: string,
    input: unknown,
    headers: Record<string, string>,
    method: "GET" | "POST" = "POST",
    signal?: AbortSignal,
  ): Promise<Response> {
    if (method === "GET") {
      return fetch(`${env().server.url}${path}${inputToQuery(input as Record<string, unknown>)}`, { headers, signal });
    }
    return fetch(`${env().server.url}${path}`, {
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
      key: paymentSettlementKey(payment),
      ms,
      body: answer,
    };
  }

  /** A paid call made as a client does: ask, pay the quote, send again. Answers the outcome and the price paid. */
  async function payAndCall(
    payer: PrivateKeyAccount,
    method: "GET" | "POST",
    path: string,
    input: Record<string, unknown>,
  ): Promise<CallOutcome & { amount: bigint; ms: number; body: unknown }> {
    const required = await quote(path, input, undefined, method);
    const outcome = await paidCall(path, input, await env().pay(payer, required), undefined, method);
    return { ...outcome, amount: BigInt(required.accepts[0]!.amount) };
  }

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
          payment = await env().pay(payer, { ...quoted, extensions });
        } catch (error) {
          // An answer other than the 402 asked for is wrong; no answer means the server is down: nothing was paid.
          if ((error as Error).name === "AssertionError")
            outcomes.push({ status: -1, error: (error as Error).message });
          await env().serverUp();
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
            await env().serverUp();
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
    const running = Array.from({ length: workers }, (_, i) => run(env().account(firstAccount + i), 10 + i));
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

  return { send, quote, paidCall, payAndCall, steadyPaidLoad };
}

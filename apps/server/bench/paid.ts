/**
 * Full paid calls, each request with its own pre-signed PAYMENT-SIGNATURE (and, for the signed-in holder, its own
 * SIGN-IN-WITH-X), verified and settled on the devnet's payment chain. A short warm-up run of each
 * side sizes its measured rounds to a few seconds in all; the sides then run in alternating rounds. Each round's
 * payments are signed right before it starts, so none nears its `validBefore` (the challenge's
 * maxTimeoutSeconds) while the round lasts.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { alternate, combine, type LoadResult, load, type ServerCpu } from "./load.js";
import type { Signers } from "./payments.js";
import { challenge } from "./payments.js";

const WARM_UP_CALLS = 100;
const TARGET_SECONDS = 8;
const ROUNDS = 2;
/** Calls per round. */
const MIN_CALLS = 100;
const MAX_CALLS = 2000;
/** Payers in turn (account 0 is the facilitator and payee). */
const PAYERS = [2, 3, 4, 5, 6, 7, 8, 9];

export interface PaidRun {
  result: LoadResult;
  /** `Server-Timing` of every 200 answer of the measured run. */
  serverTimings: string[];
  /** Why answers were not 200 (the x402 error of the answer), with their counts. */
  failures: Record<string, number>;
  /** The settlement transaction of every 200 answer of the measured run (a batch's is shared). */
  transactions: string[];
  /** Seconds spent signing the measured run's payments, and the oldest payment's age when the run ended. */
  signSeconds: number;
  oldestPaymentAgeSeconds: number;
}

export interface PaidOptions {
  url: string;
  body: string;
  signers: Signers;
  /** Sign in as this devnet account on every call (the holder's discounted price), naming `origin` + `path`. */
  signIn?: { index: number; origin: string; path: string };
  serverCpu: ServerCpu;
  /** Connections kept busy at once (default 10). */
  connections?: number;
  /** Paid calls per second, at even intervals (default: as fast as answers come). */
  rate?: number;
  /** Seconds all rounds of a side last together (default {@link TARGET_SECONDS}). */
  seconds?: number;
  /**
   * Call the tool over MCP instead (`url` is then the `/mcp` endpoint and `body` the tool's arguments): each request
   * a `tools/call` with its payment in `_meta["x402/payment"]`; `challengeUrl` is the HTTP route quoting the price.
   */
  mcp?: { tool: string; challengeUrl: string };
}

/** The error an x402 answer gives: PaymentRequired's `error`, else the settlement's `errorReason`. */
function failureReason(paymentRequired: string | undefined, paymentResponse: string | undefined): string {
  try {
    if (paymentRequired) return decodePaymentRequiredHeader(paymentRequired).error ?? "payment required";
    if (paymentResponse) return decodePaymentResponseHeader(paymentResponse).errorReason ?? "settlement failed";
  } catch {}
  return "(no x402 header)";
}

async function run(options: PaidOptions, count: number, measured: boolean): Promise<PaidRun> {
  const { url, body, signers, signIn } = options;
  const signStart = performance.now();
  const signInHeaders = signIn ? await signers.signIns(signIn.index, signIn.origin, signIn.path, count + 1) : [];
  const { mcp } = options;
  const quoted = await challenge(
    mcp?.challengeUrl ?? url,
    body,
    signIn ? { "sign-in-with-x": signInHeaders.pop()! } : {},
  );
  const payments = await signers.payments(quoted, count, signIn ? [signIn.index] : PAYERS);
  const signed = performance.now();
  // Over MCP the payment is the PaymentPayload object inside the JSON-RPC request (the header's decoded value).
  const mcpBodies = mcp
    ? payments.map((payment, id) =>
        JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: {
            name: mcp.tool,
            arguments: JSON.parse(body),
            _meta: { "x402/payment": JSON.parse(Buffer.from(payment, "base64").toString("utf8")) },
          },
        }),
      )
    : [];

  let next = 0;
  const serverTimings: string[] = [];
  const transactions: string[] = [];
  const failures: Record<string, number> = {};
  const result = await load({
    url,
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(mcp ? { accept: "application/json, text/event-stream" } : {}),
    },
    body,
    expect: 200,
    amount: count,
    ...(options.connections ? { connections: options.connections } : {}),
    ...(options.rate ? { overallRate: options.rate } : {}),
    ...(measured ? { serverCpu: options.serverCpu } : {}),
    ...(mcp
      ? { perRequestBody: () => mcpBodies[next++] ?? "" }
      : {
          perRequest: () => {
            const i = next++;
            return {
              "payment-signature": payments[i] ?? "",
              ...(signIn ? { "sign-in-with-x": signInHeaders[i] ?? "" } : {}),
            };
          },
        }),
    onAnswer: (status, headers, answer) => {
      if (mcp) {
        // A JSON-RPC answer is 200 whatever the call's fate: a refused or failed call is an isError result.
        if (status === 200 && !answer.includes('"isError":true')) return;
        const reason = /"error":"([a-z_]+)/.exec(answer)?.[1] ?? /"code":"([a-z_]+)"/.exec(answer)?.[1] ?? "?";
        failures[`${status} ${reason}`] = (failures[`${status} ${reason}`] ?? 0) + 1;
        return;
      }
      const header = (name: string) => {
        const value = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
        return typeof value === "string" ? value : undefined;
      };
      if (status === 200) {
        const timing = header("server-timing");
        if (timing) serverTimings.push(timing);
        const settlement = header("payment-response");
        if (settlement) transactions.push(decodePaymentResponseHeader(settlement).transaction);
        return;
      }
      const reason = `${status} ${failureReason(header("payment-required"), header("payment-response"))}`;
      failures[reason] = (failures[reason] ?? 0) + 1;
    },
  });
  return {
    result,
    serverTimings,
    transactions,
    failures,
    signSeconds: (signed - signStart) / 1000,
    oldestPaymentAgeSeconds: (performance.now() - signStart) / 1000,
  };
}

function combinePaid(runs: PaidRun[]): PaidRun {
  const failures: Record<string, number> = {};
  for (const run of runs) {
    for (const [reason, count] of Object.entries(run.failures)) failures[reason] = (failures[reason] ?? 0) + count;
  }
  return {
    result: combine(runs.map((r) => r.result)),
    serverTimings: runs.flatMap((r) => r.serverTimings),
    transactions: runs.flatMap((r) => r.transactions),
    failures,
    signSeconds: runs.reduce((sum, r) => sum + r.signSeconds, 0),
    oldestPaymentAgeSeconds: Math.max(...runs.map((r) => r.oldestPaymentAgeSeconds)),
  };
}

/** Warms each side up, then measures them in alternating rounds of pre-signed paid calls. */
export async function benchPaid<K extends string>(sides: Record<K, PaidOptions>): Promise<Record<K, PaidRun>> {
  const callsPerRound = {} as Record<K, number>;
  for (const key of Object.keys(sides) as K[]) {
    const warm = await run(sides[key], WARM_UP_CALLS, false);
    const calls = ((sides[key].rate ?? warm.result.rps) * (sides[key].seconds ?? TARGET_SECONDS)) / ROUNDS;
    callsPerRound[key] = Math.round(Math.min(MAX_CALLS, Math.max(MIN_CALLS, calls)));
  }
  const rounds = await alternate(
    ROUNDS,
    Object.fromEntries(
      (Object.keys(sides) as K[]).map((key) => [key, () => run(sides[key], callsPerRound[key], true)]),
    ) as Record<K, () => Promise<PaidRun>>,
  );
  return Object.fromEntries((Object.keys(sides) as K[]).map((key) => [key, combinePaid(rounds[key])])) as Record<
    K,
    PaidRun
  >;
}

/**
 * The second half of a paid call, for every transport (HTTP routes, MCP): the admitted call's tool runs; its answer
 * is settled, or, when the tool fails, the payment is given back and the failure goes on to the caller.
 */
import type { PaidRouteName } from "@agent-tools/schema";
import type { SettleResponse } from "@x402/core/types";
import type { CollectionIndex } from "../chain/collection-index.js";
import { HttpError, uncharged } from "../http/errors.js";
import type { AdmittedCall, PaidCalls, Refusal } from "../payment/paid-call-types.js";
import { runTool } from "./run-tool.js";
import type { Tool, ToolSet } from "./types.js";

export interface RunPaidCallDeps {
  paidCalls: PaidCalls;
  collection: CollectionIndex;
  now: () => Date;
}

export type PaidCallOutcome =
  | { settled: true; output: unknown; settlement: SettleResponse }
  | { settled: false; refusal: Refusal };

/** Runs the tool of an admitted call and settles it; a tool that throws releases the payment, then rethrows. */
export async function runPaidCall(
  call: AdmittedCall,
  tool: Tool<never>,
  deps: RunPaidCallDeps,
): Promise<PaidCallOutcome> {
  let output: unknown;
  const started = performance.now();
  try {
    output = await runTool(call.route, tool, call.params, {
      ...(call.caller ? { caller: call.caller } : {}),
      token: call.token,
      collection: deps.collection,
      now: deps.now,
      payment: { key: call.payment.key, payer: call.payment.payer },
    });
  } catch (error) {
    await deps.paidCalls.release(call);
    throw error;
  } finally {
    call.timings.push(["tool", performance.now() - started]);
  }
  const status = ("successStatus" in call.route && call.route.successStatus) || 200;
  const outcome = await deps.paidCalls.settle(call, { status, output });
  return outcome.settled
    ? { settled: true, output, settlement: outcome.settlement }
    : { settled: false, refusal: outcome.refusal };
}

/** The route's tool, or a stand-in for one not built: 501 after the payment was verified, which gives it back. */
export function toolFor(tools: ToolSet, name: PaidRouteName): Tool<never> {
  return (
    (tools[name] as Tool<never> | undefined) ??
    (async () => {
      throw new HttpError("not_implemented", uncharged(`The ${name} tool is not available yet.`));
    })
  );
}

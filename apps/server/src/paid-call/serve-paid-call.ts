/**
 * A paid call from request to result, the same for every transport: admit, run the tool, settle (or release when
 * the tool failed). HTTP, MCP and A2A only render the result (docs/architecture.md, "A paid call").
 */
import { type PaidRouteName, paidRoutes } from "@agent-tools/schema";
import type { SettleResponse } from "@x402/core/types";
import type { CollectionIndex } from "../chain/collection-index.js";
import { ServiceError, uncharged } from "../errors/service-error.js";
import { meterWork, WorkMeter } from "../metering/work-meter.js";
import { runTool } from "../tools/run-tool.js";
import type { Tool, ToolSet } from "../tools/types.js";
import type { AdmittedCall, PaidCallRequest, PaidCalls, Refusal, StepTimings } from "./paid-call-types.js";

export interface ServePaidCallDeps {
  paidCalls: PaidCalls;
  tools: ToolSet;
  collection: CollectionIndex;
  now: () => Date;
}

/** What a transport renders: the paid answer, or a refusal with the x402 `PaymentRequired` to answer with. */
export type PaidCallResult =
  | {
      kind: "answer";
      status: number;
      output: unknown;
      settlement: SettleResponse;
      /** The steps' timings of a call run now; absent for an answer given again under its payment identifier. */
      timings?: StepTimings;
    }
  | {
      kind: "payment_required";
      refusal: Refusal;
      /** The failed settlement of a payment that was verified and then did not settle. */
      failedSettlement?: SettleResponse;
    };

/**
 * Serves one paid call of the route `name`. Throws a `ServiceError` for a request no payment can make right (bad
 * input, unknown token, a tool's failure after its payment was given back).
 */
export async function servePaidCall(
  deps: ServePaidCallDeps,
  name: PaidRouteName,
  request: Omit<PaidCallRequest, "route">,
): Promise<PaidCallResult> {
  const route = paidRoutes[name];
  const admission = await deps.paidCalls.admit({ ...request, route });
  if (!admission.admitted) {
    if ("refusal" in admission) return { kind: "payment_required", refusal: admission.refusal };
    // The same payment and request under a payment identifier: the answer it was paid for, again.
    const { status, output, settlement } = admission.answered;
    return { kind: "answer", status, output, settlement };
  }
  const { call } = admission;
  const meter = new WorkMeter();
  const output = await meterWork(meter, () => runAdmitted(deps, call, toolFor(deps.tools, name)));
  const status = successStatus(call);
  const settled = await deps.paidCalls.settle(call, { status, output, work: meter.counted() });
  if (!settled.settled) {
    return {
      kind: "payment_required",
      refusal: settled.refusal,
      failedSettlement: {
        success: false,
        errorReason: settled.refusal.reason,
        transaction: "",
        network: call.price.requirements.network as SettleResponse["network"],
      },
    };
  }
  return { kind: "answer", status, output, settlement: settled.settlement, timings: call.timings };
}

/** Runs the tool of an admitted call; a tool that throws gives the payment back, then the error goes on. */
async function runAdmitted(deps: ServePaidCallDeps, call: AdmittedCall, tool: Tool<never>): Promise<unknown> {
  const started = performance.now();
  try {
    return await runTool(call.route, tool, call.params, {
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
}

function successStatus(call: AdmittedCall): number {
  return ("successStatus" in call.route && call.route.successStatus) || 200;
}

/** The route's tool, or a stand-in for one not built: 501 after the payment was verified, which gives it back. */
function toolFor(tools: ToolSet, name: PaidRouteName): Tool<never> {
  return (
    (tools[name] as Tool<never> | undefined) ??
    (async () => {
      throw new ServiceError("not_implemented", uncharged(`The ${name} tool is not available yet.`));
    })
  );
}

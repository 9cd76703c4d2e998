/**
 * The paid call, free of any transport: `admit` takes a request through validate, identify, policy, price, and
 * recall or pay (./admit-call.ts); the caller runs the tool; `settle` takes the payment, or `release` gives
 * everything back when the tool failed (./settle-call.ts). ./serve-paid-call.ts runs the three in order.
 */
import { admitCall } from "./admit-call.js";
import type { PaidCallContext, PaidCallDeps, PaidCalls } from "./paid-call-types.js";
import { createRefuser } from "./refuse.js";
import { releaseCall, settleCall } from "./settle-call.js";

export function createPaidCalls(deps: PaidCallDeps): PaidCalls {
  const context: PaidCallContext = {
    payments: deps.payments,
    collection: deps.collection,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    refuse: createRefuser(deps.payments, deps.metrics, deps.refusalCounts),
  };
  return {
    admit: (request) => admitExpectingSettlement(context, request),
    settle: (call, answer) => settleCall(context, call, answer),
    release: (call) => releaseCall(context, call),
  };
}

/**
 * A paid request is a settlement on its way from the moment it comes: a forming batch waits for it while it is
 * checked and its tool runs (../settlement/settlement-batcher.ts). Refused, run again at no charge, or held by its
 * scheme (a channel), it is not.
 */
async function admitExpectingSettlement(
  context: PaidCallContext,
  request: Parameters<PaidCalls["admit"]>[0],
): Promise<Awaited<ReturnType<PaidCalls["admit"]>>> {
  const settlementAsked = request.payment === undefined ? undefined : context.payments.settlementsAhead.expect();
  try {
    const admission = await admitCall(context, request);
    // A payment the scheme holds itself (a channel's voucher) is no settlement of the batcher's.
    if (admission.admitted && !admission.call.paidBefore && !admission.call.payment.hold && settlementAsked) {
      admission.call.settlementAsked = settlementAsked;
    } else settlementAsked?.();
    return admission;
  } catch (error) {
    settlementAsked?.();
    throw error;
  }
}

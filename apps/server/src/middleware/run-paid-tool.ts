import { encodePaymentResponseHeader } from "@x402/core/http";
import type { RequestHandler } from "express";
import type { CollectionIndex } from "../chain/collection-index.js";
import { HttpError } from "../http/errors.js";
import type { PaymentService } from "../payment/payment-service.js";
import type { Tool } from "../tools/types.js";
import { type CallState, callState } from "./call-state.js";
import { recordTiming, serverTimingHeader } from "./server-timing.js";

/**
 * Step 6, run and settle: runs the tool; only when it answered does the payment settle, and only a settled
 * payment gets its answer (with `PAYMENT-RESPONSE`). A tool that fails settles nothing and gives the payment
 * back, so the caller pays nothing for a failed call. Step 7: a settled payment and its sign-in nonce are
 * consumed for good.
 */
export function runPaidTool(
  tool: Tool<never>,
  deps: { payments: PaymentService; collection: CollectionIndex },
): RequestHandler {
  const { payments, collection } = deps;
  return async (req, res) => {
    const state = callState(res) as CallState;
    const giveBack = res.locals.releasePayment as () => void;
    let output: unknown;
    let started = performance.now();
    try {
      const result = await tool(state.params as never, {
        ...(state.caller ? { caller: state.caller } : {}),
        token: state.token,
        collection,
        now: payments.now,
      });
      // The answer must meet the contract before anyone is charged for it.
      output = state.route.response.parse(result);
    } catch (error) {
      giveBack();
      throw error;
    } finally {
      recordTiming(res, "tool", performance.now() - started);
    }

    started = performance.now();
    let settlement: Awaited<ReturnType<typeof payments.facilitator.settle>>;
    try {
      settlement = await payments.facilitator.settle(state.payment.payload, state.price.requirements as never);
    } catch (error) {
      giveBack();
      recordTiming(res, "settle", performance.now() - started);
      req.log?.error({ err: error }, "settlement failed");
      throw new HttpError("upstream_error", "The payment could not be settled; you were not charged. Try again.");
    }
    recordTiming(res, "settle", performance.now() - started);
    if (!settlement.success) {
      giveBack();
      return payments.challenge(
        res,
        state.route,
        state.price.point,
        `settlement_failed: ${settlement.errorReason ?? "the facilitator refused"}${settlement.errorMessage ? `: ${settlement.errorMessage}` : ""}`,
      );
    }
    payments.payments.consume(state.payment.replayKey);
    if (state.signInNonce) payments.signInNonces.consume(state.signInNonce);
    res.setHeader("PAYMENT-RESPONSE", encodePaymentResponseHeader(settlement));
    res.setHeader("Server-Timing", serverTimingHeader(res));
    res.status(200).json(output);
  };
}

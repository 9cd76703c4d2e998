import { encodePaymentResponseHeader } from "@x402/core/http";
import type { RequestHandler } from "express";
import type { Logger } from "pino";
import type { CollectionIndex } from "../chain/collection-index.js";
import { HttpError } from "../http/errors.js";
import type { PaymentService } from "../payment/payment-service.js";
import type { Tool } from "../tools/types.js";
import { type CallState, callState } from "./call-state.js";
import { recordTiming, serverTimingHeader } from "./server-timing.js";

/** Tries a ledger write a few times: the payment was taken, so its record is worth a short wait. */
async function recordSettlement(
  payments: PaymentService,
  key: string,
  transaction: string,
  log: Logger | undefined,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await payments.ledger.markSettled(key, transaction, payments.now());
      return;
    } catch (error) {
      if (attempt === 3) {
        // The claim stays pending; the reconciler finds the settlement on chain and records it.
        log?.error(
          { err: error, paymentKey: key, transaction },
          "could not record a settlement; left for reconciliation",
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/**
 * Step 6, run and settle: runs the tool; only when it answered does the payment settle, and only a settled
 * payment gets its answer (with `PAYMENT-RESPONSE`). The settlement is in the ledger before the answer leaves.
 * A tool that fails settles nothing and gives the payment back, so the caller pays nothing for a failed call.
 * Step 7: a settled payment and its sign-in nonce are consumed for good.
 */
export function runPaidTool(
  tool: Tool<never>,
  deps: { payments: PaymentService; collection: CollectionIndex },
): RequestHandler {
  const { payments, collection } = deps;
  return async (req, res) => {
    const state = callState(res) as CallState;
    let output: unknown;
    let started = performance.now();
    try {
      const result = await tool(state.params as never, {
        ...(state.caller ? { caller: state.caller } : {}),
        token: state.token,
        collection,
        now: payments.now,
        payment: { key: state.payment.replayKey, payer: state.payment.payer },
      });
      // The answer must meet the contract before anyone is charged for it.
      output = state.route.response.parse(result);
    } catch (error) {
      await state.payment.release();
      throw error;
    } finally {
      recordTiming(res, "tool", performance.now() - started);
    }

    started = performance.now();
    let settlement: Awaited<ReturnType<typeof payments.facilitator.settle>>;
    try {
      settlement = await payments.facilitator.settle(state.payment.payload, state.price.requirements as never);
    } catch (error) {
      recordTiming(res, "settle", performance.now() - started);
      // The settlement may have gone through before the answer was lost: the claim stays pending until the
      // reconciler reads the chain, so the payment is neither recorded twice nor reused meanwhile.
      await state.payment.release({ keepClaim: true });
      req.log?.error({ err: error }, "settlement failed");
      throw new HttpError(
        "upstream_error",
        "The payment could not be settled, so the call was not answered. Should the chain show it taken, it is " +
          "recorded and cannot buy another call; try again with a new payment.",
      );
    }
    recordTiming(res, "settle", performance.now() - started);
    if (!settlement.success) {
      await state.payment.release();
      return payments.challenge(
        res,
        state.route,
        state.price.point,
        `settlement_failed: ${settlement.errorReason ?? "the facilitator refused"}${settlement.errorMessage ? `: ${settlement.errorMessage}` : ""}`,
      );
    }
    await recordSettlement(payments, state.payment.replayKey, settlement.transaction, req.log);
    payments.payments.consume(state.payment.replayKey);
    if (state.signInNonce) payments.signInNonces.consume(state.signInNonce);
    res.setHeader("PAYMENT-RESPONSE", encodePaymentResponseHeader(settlement));
    res.setHeader("Server-Timing", serverTimingHeader(res));
    res.status(("successStatus" in state.route && state.route.successStatus) || 200).json(output);
  };
}

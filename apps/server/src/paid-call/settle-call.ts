/**
 * The second half of a paid call, once its tool ran: `settleCall` takes the payment of a call whose tool answered,
 * `releaseCall` gives everything back when the tool failed, so a failed call costs nothing.
 */
import { type CountedWork, isMeteredScheme, meteredCharge } from "@agent-tools/schema";
import type { SettleResponse } from "@x402/core/types";
import { SETTLEMENT_PENDING } from "../settlement/facilitator.js";
import { type CallerRefusal, settlementRefusal } from "../settlement/facilitator-refusals.js";
import {
  countSettlementFailure,
  keepAnswer,
  recordSettlement,
  releaseSignIn,
  spendSignIn,
  unconfirmed,
} from "./call-bookkeeping.js";
import { paidResourceUrl } from "./challenge.js";
import type { AdmittedCall, PaidCallContext, Settlement } from "./paid-call-types.js";
import { keptAnswer } from "./payment-identifier.js";
import type { MeteredCharge, SchemeRefusal } from "./payment-scheme.js";

/**
 * Takes the payment of a call whose tool answered; the ledger records it (and the answer, for a call that named a
 * payment identifier) before this resolves.
 */
export async function settleCall(
  context: PaidCallContext,
  call: AdmittedCall,
  answer: { status: number; output: unknown; work?: CountedWork },
): Promise<Settlement> {
  const { payments, metrics } = context;
  if (call.paidBefore) {
    // Paid before and cut before its answer was kept: this answer is kept now, and nothing is taken again.
    const settlement = await withReceipt(context, call, call.paidBefore);
    await keepAnswer(payments, call.payment.key, keptAnswer(answer, settlement));
    call.slot.release();
    return { settled: true, settlement };
  }
  const started = performance.now();
  const metered = meteredChargeOf(call, answer.work);
  const charge = facilitatorCharge(call, metered);
  let settlement: SettleResponse;
  try {
    call.settlementAsked?.();
    // A payment the scheme holds itself (a channel) is settled by it; any other by the facilitator, a metered one
    // (`upto`) for its charge: x402's settle-time requirement names the amount to take, at most the one signed.
    if (call.payment.hold) {
      const held = await call.payment.hold.settle(metered);
      if ("refused" in held) {
        call.timings.push(["settle", performance.now() - started]);
        await countSettlementFailure(payments, call.payment.payer);
        return refusedAtSettlement(context, call, held.refused);
      }
      settlement = held;
    } else {
      settlement = await payments.facilitator.settle(call.payment.payload, {
        ...call.price.requirements,
        ...(charge !== undefined ? { amount: charge.toString() } : {}),
      } as never);
    }
  } catch (error) {
    call.timings.push(["settle", performance.now() - started]);
    // The settlement may have gone through before the answer was lost: the claim stays pending until the
    // reconciler reads the chain, so the payment is neither recorded twice nor reused meanwhile.
    await releaseGuards(context, call);
    payments.logger?.error(
      { err: error, requestId: call.requestId, paymentKey: call.payment.key },
      "settlement failed",
    );
    throw unconfirmed();
  }
  if (settlement.success && charge !== undefined) settlement = withCharge(settlement, call, charge, metered);
  if (settlement.success) settlement = await withReceipt(context, call, settlement);
  call.timings.push(["settle", performance.now() - started]);
  if (!settlement.success) return settlementFailed(context, call, settlement);
  // A scheme that booked the call with its charge (a channel's voucher) left nothing pending to record.
  if (!call.payment.hold?.books) {
    await recordSettlement(
      payments,
      call.payment.key,
      settlement.transaction,
      call.identifier ? keptAnswer(answer, settlement) : undefined,
      charge !== undefined ? { amount: charge.toString(), ...(metered ? { work: metered.work } : {}) } : undefined,
    );
  }
  payments.payments.consume(call.payment.key);
  call.slot.release();
  if (call.caller && call.signInNonce) await spendSignIn(payments, call.caller, call.signInNonce);
  const labels = { route: call.route.path, price_point: call.price.point };
  metrics?.paidCalls.inc({ ...labels, outcome: "settled" });
  metrics?.settledAmount.inc(labels, Number(metered?.amount ?? call.price.requirements.amount));
  return { settled: true, settlement };
}

/**
 * What a call paid over a metered scheme is charged: the published formula of its counted work, at most its price
 * (docs/api.md, "Prices by the work done"). Undefined for `exact`, which is charged the price it signed.
 */
function meteredChargeOf(call: AdmittedCall, work: CountedWork | undefined): MeteredCharge | undefined {
  if (!work || !isMeteredScheme(call.price.requirements.scheme)) return undefined;
  if ("paidAhead" in call.route && call.route.paidAhead) return undefined;
  return { amount: meteredCharge(work, call.price.requirements.amount), work };
}

/**
 * What the facilitator is to take of a payment of a metered scheme it settles (`upto`: a Permit2 authorization of up
 * to the price): the metered charge, else (a route charged its price point) the price. Undefined for a payment the
 * scheme holds itself (a channel, charged by its hold) and for `exact`, which takes what it signed.
 */
function facilitatorCharge(call: AdmittedCall, metered: MeteredCharge | undefined): bigint | undefined {
  if (call.payment.hold || !isMeteredScheme(call.price.requirements.scheme)) return undefined;
  const price = BigInt(call.price.requirements.amount);
  return metered && metered.amount < price ? metered.amount : price;
}

/**
 * The settlement of a metered payment as the caller is told it, as a channel's says it: x402's `amount` (what was
 * taken) and, in `extra`, `chargedAmount` and, for a charge by the work done, the `ceiling` and the `work`.
 */
function withCharge(
  settlement: SettleResponse,
  call: AdmittedCall,
  charge: bigint,
  metered: MeteredCharge | undefined,
): SettleResponse {
  return {
    ...settlement,
    amount: charge.toString(),
    extra: {
      ...settlement.extra,
      chargedAmount: charge.toString(),
      ...(metered ? { ceiling: call.price.requirements.amount, work: metered.work } : {}),
    },
  } as SettleResponse;
}

/**
 * A payment that was verified and then failed to settle: it counts against the payer's budget, unless its fate is
 * only not known yet. Sent but not seen through, it is left to the reconciler; refused, it is given back and the
 * caller is answered 402.
 */
async function settlementFailed(
  context: PaidCallContext,
  call: AdmittedCall,
  settlement: SettleResponse,
): Promise<Settlement> {
  const { payments } = context;
  if (settlement.errorReason !== SETTLEMENT_PENDING) await countSettlementFailure(payments, call.payment.payer);
  if (settlement.transaction) {
    // Sent, but not seen through (a receipt that did not come in time): the payer may be charged, so the claim is
    // kept for the reconciler, which records it once mined or gives it back once it expires.
    await releaseGuards(context, call);
    payments.logger?.warn(
      {
        requestId: call.requestId,
        paymentKey: call.payment.key,
        transaction: settlement.transaction,
        reason: settlement.errorReason,
      },
      "settlement not confirmed; left for reconciliation",
    );
    throw unconfirmed();
  }
  payments.logger?.warn(
    {
      requestId: call.requestId,
      paymentKey: call.payment.key,
      errorReason: settlement.errorReason,
      errorMessage: settlement.errorMessage,
    },
    "settlement refused by the facilitator",
  );
  return refusedAtSettlement(context, call, settlementRefusal(settlement.errorReason));
}

/**
 * A payment refused once its tool ran (by the facilitator, or by the scheme that held it): the payer is charged
 * nothing, the claim and the sign-in are given back, and the caller is answered 402 with the reason (and the scheme's
 * corrective fields, a channel's state).
 */
async function refusedAtSettlement(
  context: PaidCallContext,
  call: AdmittedCall,
  refusal: CallerRefusal | SchemeRefusal,
): Promise<Settlement> {
  const { payments } = context;
  await releaseGuards(context, call);
  await payments.ledger.release(call.payment.key);
  const extra =
    "extra" in refusal && refusal.extra ? { scheme: call.price.requirements.scheme, fields: refusal.extra } : undefined;
  return context.refuse(call.route, call.method, call.price.point, refusal.reason, refusal.sentence, extra);
}

/** Gives the payment and the sign-in back: the tool failed, so the call costs nothing. */
export async function releaseCall(context: PaidCallContext, call: AdmittedCall): Promise<void> {
  if (call.paidBefore) {
    // Run again and failed: its payment stays the one settled before; only the slot is given back.
    call.slot.release();
    return;
  }
  call.settlementAsked?.();
  await call.payment.hold?.release();
  await releaseGuards(context, call);
  if (!call.payment.hold?.books) await context.payments.ledger.release(call.payment.key);
  context.metrics?.paidCalls.inc({ route: call.route.path, price_point: call.price.point, outcome: "released" });
}

/**
 * The settlement with the service's signed receipt, when it signs them. A receipt that cannot be signed is left
 * out, logged: the call was paid and its answer is not withheld for it.
 */
async function withReceipt(
  context: PaidCallContext,
  call: AdmittedCall,
  settlement: SettleResponse,
): Promise<SettleResponse> {
  const { payments } = context;
  if (!payments.receipts) return settlement;
  try {
    return await payments.receipts.withReceipt(
      settlement,
      paidResourceUrl(call.route, call.method, payments.publicUrl),
    );
  } catch (error) {
    payments.logger?.error({ err: error, requestId: call.requestId }, "could not sign the receipt");
    return settlement;
  }
}

/** This instance's fast guard and the sign-in; the ledger's claim is the caller's to keep or give back. */
async function releaseGuards(context: PaidCallContext, call: AdmittedCall): Promise<void> {
  const { payments } = context;
  payments.payments.release(call.payment.key);
  call.slot.release();
  if (call.caller && call.signInNonce) await releaseSignIn(payments, call.caller, call.signInNonce);
}

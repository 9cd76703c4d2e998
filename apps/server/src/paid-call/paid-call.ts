/**
 * The paid call, free of any transport: `admit` takes a request through validate, identify, policy, price and
 * pay (docs/architecture.md, "A paid call"); the caller runs the tool; `settle` takes the payment, or `release`
 * gives everything back when the tool failed. HTTP routes (and any other transport) are thin switches on what
 * these return: an admitted call, a refusal carrying the x402 `PaymentRequired` to answer 402 with, or a thrown
 * `ServiceError` (400, 403, 404) for a request no payment can make right.
 */
import { formatUsd, type PricePoint, routePaymentRequirements } from "@agent-tools/schema";
import type { SettleResponse } from "@x402/core/types";
import type { Address } from "viem";
import type { Slot } from "../limits/call-limiter.js";
import { decodePayment, readDecodedPayment } from "../schemes/exact/payment-payload.js";
import { settlementRefusal, verifyRefusal } from "../settlement/facilitator-refusals.js";
import {
  AUTHORIZATION_USED,
  countSettlementFailure,
  keepAnswer,
  recordSettlement,
  releaseSignIn,
  SETTLEMENT_PENDING,
  signInExpiry,
  spendSignIn,
  takePayerSlot,
  unconfirmed,
  unverifiable,
} from "./call-bookkeeping.js";
import { checkTokenPolicy, validateCall } from "./call-checks.js";
import { paidResourceUrl, paymentFields, signInPath } from "./challenge.js";
import type {
  Admission,
  AdmittedCall,
  PaidCallDeps,
  PaidCallRequest,
  PaidCalls,
  StepTimings,
} from "./paid-call-types.js";
import { checkPayer } from "./payer-checks.js";
import { identifierTaken, keptAnswer, type Recall, recall } from "./payment-identifier.js";
import { createRefuser } from "./refuse.js";
import { SIGN_IN_SPENT, verifySignIn } from "./verify-sign-in.js";

export function createPaidCalls(deps: PaidCallDeps): PaidCalls {
  const { payments, collection, metrics } = deps;

  const refuse = createRefuser(payments, metrics, deps.refusalCounts);

  return {
    async admit(request) {
      // A paid request is a settlement on its way from the moment it comes: a forming batch waits for it while it
      // is checked and its tool runs (../settlement/settlement-batcher.ts). Refused, or run again at no charge, it is not.
      const settlementAsked = request.payment === undefined ? undefined : payments.settlementsAhead.expect();
      try {
        const admission = await admitCall(request);
        if (admission.admitted && !admission.call.paidBefore && settlementAsked) {
          admission.call.settlementAsked = settlementAsked;
        } else settlementAsked?.();
        return admission;
      } catch (error) {
        settlementAsked?.();
        throw error;
      }
    },

    async settle(call, answer) {
      if (call.paidBefore) {
        // Paid before and cut before its answer was kept: this answer is kept now, and nothing is taken again.
        const settlement = await withReceipt(call, call.paidBefore);
        await keepAnswer(payments, call.payment.key, keptAnswer(answer, settlement));
        call.slot.release();
        return { settled: true, settlement };
      }
      const started = performance.now();
      let settlement: SettleResponse;
      try {
        call.settlementAsked?.();
        settlement = await payments.facilitator.settle(call.payment.payload, call.price.requirements as never);
      } catch (error) {
        call.timings.push(["settle", performance.now() - started]);
        // The settlement may have gone through before the answer was lost: the claim stays pending until the
        // reconciler reads the chain, so the payment is neither recorded twice nor reused meanwhile.
        await releaseGuards(call);
        payments.logger?.error(
          { err: error, requestId: call.requestId, paymentKey: call.payment.key },
          "settlement failed",
        );
        throw unconfirmed();
      }
      if (settlement.success) settlement = await withReceipt(call, settlement);
      call.timings.push(["settle", performance.now() - started]);
      if (!settlement.success) {
        // The payment was verified and then failed to settle: it counts against the payer's budget, unless its
        // fate is only not known yet.
        if (settlement.errorReason !== SETTLEMENT_PENDING) await countSettlementFailure(payments, call.payment.payer);
        if (settlement.transaction) {
          // Sent, but not seen through (a receipt that did not come in time): the payer may be charged, so the
          // claim is kept for the reconciler, which records it once mined or gives it back once it expires.
          await releaseGuards(call);
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
        await releaseGuards(call);
        await payments.ledger.release(call.payment.key);
        payments.logger?.warn(
          {
            requestId: call.requestId,
            paymentKey: call.payment.key,
            errorReason: settlement.errorReason,
            errorMessage: settlement.errorMessage,
          },
          "settlement refused by the facilitator",
        );
        const refusal = settlementRefusal(settlement.errorReason);
        return refuse(call.route, call.method, call.price.point, refusal.reason, refusal.sentence);
      }
      await recordSettlement(
        payments,
        call.payment.key,
        settlement.transaction,
        call.identifier ? keptAnswer(answer, settlement) : undefined,
      );
      payments.payments.consume(call.payment.key);
      call.slot.release();
      if (call.caller && call.signInNonce) await spendSignIn(payments, call.caller, call.signInNonce);
      const labels = { route: call.route.path, price_point: call.price.point };
      metrics?.paidCalls.inc({ ...labels, outcome: "settled" });
      metrics?.settledAmount.inc(labels, Number(call.price.requirements.amount));
      return { settled: true, settlement };
    },

    async release(call) {
      if (call.paidBefore) {
        // Run again and failed: its payment stays the one settled before; only the slot is given back.
        call.slot.release();
        return;
      }
      call.settlementAsked?.();
      await releaseGuards(call);
      await payments.ledger.release(call.payment.key);
      metrics?.paidCalls.inc({ route: call.route.path, price_point: call.price.point, outcome: "released" });
    },
  };

  /** The steps of `admit`: a call to run, or why not. */
  async function admitCall(request: PaidCallRequest): Promise<Admission> {
    const { route } = request;
    const timings: StepTimings = [];
    let mark = performance.now();
    const step = (name: string) => {
      const now = performance.now();
      timings.push([name, now - mark]);
      mark = now;
    };

    const params = validateCall(request);
    step("validate");
    // Where this call's transport carries the payment and the sign-in: what its refusals name.
    const fields = paymentFields(request.method);

    // Step 2, identify: a valid sign-in makes the signer the caller; an invalid one is refused with its reason.
    let caller: Address | undefined;
    let signInNonce: string | undefined;
    if (request.signIn !== undefined) {
      // With a payment, the nonce is claimed below (a spent one is refused there), or not at all when the payment
      // is one sent again to have its answer again, which may come with its spent sign-in.
      const signIn = await verifySignIn(request.signIn, payments, signInPath(route, request.method), {
        claimedNext: request.payment !== undefined,
        ...(request.method === "MCP" || request.method === "A2A" ? { field: fields.signIn } : {}),
      });
      if (!signIn.ok) return refuse(route, request.method, undefined, "invalid_siwx", signIn.reason);
      caller = signIn.address;
      signInNonce = signIn.nonce;
    }
    step("identify");

    const token = await checkTokenPolicy(collection, route, params.tokenId, caller);
    step("policy");

    // Step 4, price: a signed-in holder pays the discounted point, anyone else the standard one.
    let point: PricePoint;
    if (caller) point = "discounted";
    else if (payments.anonymousAccess) point = "standard";
    else {
      return refuse(
        route,
        request.method,
        "discounted",
        "sign_in_required",
        `anonymous access is off; sign in as a holder with ${fields.signIn}`,
      );
    }
    const requirements = routePaymentRequirements(payments.terms, route, point);
    step("price");

    // A payment naming an identifier its payer used before: that call's answer again, or run again at no charge
    // when it was cut before its answer was kept (./payment-identifier.ts). Read before the payment is checked as
    // a new one, whose authorization may have expired since.
    const decoded = request.payment === undefined ? undefined : decodePayment(request.payment);
    const recalled: Recall = request.paymentInVersion1Header
      ? { kind: "new" }
      : await recall(payments, decoded, { route, params, caller, requirements, paymentField: fields.payment });
    if (recalled.kind === "answer") return { admitted: false, answered: recalled.answer };
    if (recalled.kind === "refused") {
      return refuse(route, request.method, point, "invalid_payment", recalled.sentence);
    }
    if (recalled.kind === "run_again") {
      const slot = await takePayerSlot(payments, recalled.payer, fields.payment);
      step("recall");
      return {
        admitted: true,
        call: {
          route,
          method: request.method,
          params,
          ...(caller ? { caller } : {}),
          token,
          price: { point, requirements },
          payment: { payload: recalled.payload, key: recalled.key, payer: recalled.payer },
          timings,
          requestId: request.requestId,
          slot,
          identifier: recalled.identifier,
          paidBefore: recalled.settlement,
        },
      };
    }
    const { identifier } = recalled;

    // Step 5, pay: an x402 v2 payment of exactly this requirement, unused, verified by the facilitator.
    const read = readDecodedPayment(decoded, requirements, payments.now(), {
      marginSeconds: payments.settlementMarginSeconds,
      paymentField: fields.payment,
      ...(request.paymentInVersion1Header ? { inVersion1Header: true } : {}),
    });
    if (!read.ok) return refuse(route, request.method, point, read.reason, read.sentence);
    const { payload, key, nonce: authorizationNonce, validBefore } = read;
    // Nothing is done in the payer's name before the payment is known to be the payer's.
    const checked = await checkPayer(payments, payload, requirements, read.from, caller, fields.payment);
    if (!checked.ok) return refuse(route, request.method, point, "invalid_payment", checked.sentence);
    const { payer } = checked;
    step("signature");
    if (!payments.payments.claim(key)) {
      return payments.payments.isUsed(key)
        ? refuse(
            route,
            request.method,
            point,
            "payment_already_used",
            "this payment authorization already bought a call",
          )
        : refuse(
            route,
            request.method,
            point,
            "payment_in_use",
            "this payment authorization is being used by another request",
          );
    }
    // The payer's slot: so many paid calls at once and per second, before anything costly is done for it.
    let slot: Slot;
    try {
      slot = await takePayerSlot(payments, payer, fields.payment);
    } catch (error) {
      payments.payments.release(key);
      throw error;
    }
    // The sign-in serves one call, on any instance and across restarts: its nonce is claimed in the store.
    if (caller && signInNonce) {
      let nonce: Awaited<ReturnType<typeof payments.signIns.claim>>;
      try {
        nonce = await payments.signIns.claim(caller, signInNonce, signInExpiry(payments));
      } catch (error) {
        payments.payments.release(key);
        slot.release();
        throw error;
      }
      if (nonce !== "claimed") {
        payments.payments.release(key);
        slot.release();
        return refuse(
          route,
          request.method,
          point,
          "invalid_siwx",
          nonce === "spent" ? SIGN_IN_SPENT : "invalid_siwx_nonce: this sign-in is in use by another call",
        );
      }
    }
    const giveBack = async () => {
      payments.payments.release(key);
      slot.release();
      if (caller && signInNonce) await releaseSignIn(payments, caller, signInNonce);
    };

    // The durable claim, before the facilitator is asked: shared by every instance and kept across restarts, it
    // is the ledger's row, and it tells what the payer already has in flight (docs/architecture.md).
    let claimed: Awaited<ReturnType<typeof payments.ledger.claim>>;
    try {
      claimed = await payments.ledger.claim({
        paymentKey: key,
        route: route.path,
        method: request.method,
        tokenId: params.tokenId,
        payer,
        nonce: authorizationNonce,
        caller: caller ?? null,
        pricePoint: point,
        amount: requirements.amount,
        asset: requirements.asset,
        network: requirements.network,
        payTo: requirements.payTo,
        validBefore,
        requestId: request.requestId,
        ...(identifier ? { identifier } : {}),
      });
    } catch (error) {
      await giveBack();
      throw error;
    } finally {
      step("claim");
    }
    if (claimed.outcome !== "claimed") {
      await giveBack();
      if (claimed.outcome === "identifier_taken" && identifier) throw identifierTaken(identifier.paymentId);
      if (claimed.outcome === "used") {
        payments.payments.consume(key);
        return refuse(
          route,
          request.method,
          point,
          "payment_already_used",
          "this payment authorization already bought a call",
        );
      }
      return refuse(
        route,
        request.method,
        point,
        "payment_in_use",
        "this payment authorization is being used by another request, or its settlement is being confirmed",
      );
    }
    const giveAllBack = async () => {
      await payments.ledger.release(key);
      await giveBack();
    };

    let verified: Awaited<ReturnType<typeof payments.facilitator.verify>>;
    try {
      verified = await payments.facilitator.verify(payload, requirements as never);
    } catch (error) {
      await giveAllBack();
      throw unverifiable(payments, request.requestId, error);
    } finally {
      step("verify");
    }
    if (!verified.isValid) {
      await giveAllBack();
      // The chain says the authorization was used: a payment that already bought something (here or elsewhere).
      if (verified.invalidReason === AUTHORIZATION_USED) {
        payments.payments.consume(key);
        return refuse(
          route,
          request.method,
          point,
          "payment_already_used",
          "this payment authorization was already used on chain",
        );
      }
      // The facilitator's own words go to the log; the caller gets a reason and a sentence of ours.
      payments.logger?.info(
        {
          requestId: request.requestId,
          invalidReason: verified.invalidReason,
          invalidMessage: verified.invalidMessage,
        },
        "payment refused by the facilitator",
      );
      const refusal = verifyRefusal(verified.invalidReason);
      return refuse(route, request.method, point, refusal.reason, refusal.sentence);
    }

    // The facilitator checked the balance against this payment alone: with others in flight, it must cover all.
    if (claimed.inFlight > 0n) {
      const needed = claimed.inFlight + BigInt(requirements.amount);
      let balance: bigint;
      try {
        balance = await payments.payerBalance(payer);
      } catch (error) {
        await giveAllBack();
        throw unverifiable(payments, request.requestId, error);
      } finally {
        step("funds");
      }
      if (balance < needed) {
        await giveAllBack();
        return refuse(
          route,
          request.method,
          point,
          "insufficient_funds",
          `the payer's balance does not cover this payment with the payments it has in flight ` +
            `(${formatUsd(needed.toString())} USD needed); wait for them to finish, or add funds`,
        );
      }
    }
    return {
      admitted: true,
      call: {
        route,
        method: request.method,
        params,
        ...(caller ? { caller } : {}),
        ...(signInNonce ? { signInNonce } : {}),
        token,
        price: { point, requirements },
        payment: { payload, key, payer },
        timings,
        requestId: request.requestId,
        slot,
        ...(identifier ? { identifier } : {}),
      },
    };
  }

  /**
   * The settlement with the service's signed receipt, when it signs them. A receipt that cannot be signed is left
   * out, logged: the call was paid and its answer is not withheld for it.
   */
  async function withReceipt(call: AdmittedCall, settlement: SettleResponse): Promise<SettleResponse> {
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
  async function releaseGuards(call: AdmittedCall): Promise<void> {
    payments.payments.release(call.payment.key);
    call.slot.release();
    if (call.caller && call.signInNonce) await releaseSignIn(payments, call.caller, call.signInNonce);
  }
}

/**
 * The bookkeeping around a paid call's payment (./paid-call.ts): the payer's slot, the sign-in nonce, the ledger's
 * record of a settlement, and the errors for a payment that could not be verified or confirmed.
 */
import { type Address, getAddress } from "viem";
import { ServiceError, uncharged } from "../errors/service-error.js";
import type { Slot } from "../limits/call-limiter.js";
import type { KeptAnswer, SettledCharge } from "../store/settlement-ledger.js";

import type { PaymentService } from "./payment-service.js";
import { SIGN_IN_NONCE_RETENTION_MS } from "./verify-sign-in.js";

/** Counts a verified payment that failed to settle against its payer's budget (a store failure is only logged). */
export async function countSettlementFailure(payments: PaymentService, payer: Address): Promise<void> {
  try {
    await payments.settlementFailures.spend(payer.toLowerCase());
  } catch (error) {
    payments.logger?.warn({ err: error, payer }, "could not count a failed settlement");
  }
}

/** 429 for a payer whose settlements failed too often lately: refused before anything is verified or run. */
export function settlementsKeepFailing(
  payer: Address,
  retryAfterSeconds: number,
  field = "PAYMENT-SIGNATURE",
): ServiceError {
  return new ServiceError(
    "rate_limited",
    uncharged(
      `Payments of ${payer} failed to settle too often in the last hour after they were verified (cancelled or ` +
        `spent elsewhere meanwhile); they are refused for ${retryAfterSeconds} s.`,
    ),
    [{ field, message: "payer limit: failed settlements" }],
    { "Retry-After": String(retryAfterSeconds) },
  );
}

/**
 * A slot for one more paid call of `payer`, or 429 `rate_limited` with Retry-After (nothing was charged), naming the
 * payment's `field` of the caller's transport.
 */
export async function takePayerSlot(
  payments: PaymentService,
  payer: string,
  field = "PAYMENT-SIGNATURE",
): Promise<Slot> {
  const slot = await payments.payerLimits.take(payer.toLowerCase());
  if (slot.ok) return slot;
  const what = slot.why === "rate" ? "too many paid calls per second" : "too many paid calls at once";
  throw new ServiceError(
    "rate_limited",
    uncharged(`The payer ${getAddress(payer)} has ${what}; retry in ${slot.retryAfterSeconds} s.`),
    [{ field, message: `payer limit: ${slot.why}` }],
    { "Retry-After": String(slot.retryAfterSeconds) },
  );
}

/** Until when a sign-in nonce claimed now must be kept: past the validity window of any message valid now. */
export function signInExpiry(payments: PaymentService): Date {
  return new Date(payments.now().getTime() + SIGN_IN_NONCE_RETENTION_MS);
}

/** Gives a sign-in back after a failed call; should the store fail, the nonce stays taken until it expires. */
export async function releaseSignIn(payments: PaymentService, caller: Address, nonce: string): Promise<void> {
  try {
    await payments.signIns.release(caller, nonce);
  } catch (error) {
    payments.logger?.warn({ err: error }, "could not give a sign-in nonce back");
  }
}

/** Marks a sign-in spent once its call was served; should the store fail, it stays claimed, which refuses it too. */
export async function spendSignIn(payments: PaymentService, caller: Address, nonce: string): Promise<void> {
  try {
    await payments.signIns.spend(caller, nonce);
  } catch (error) {
    payments.logger?.warn({ err: error }, "could not mark a sign-in nonce spent");
  }
}

/**
 * Tries a ledger write a few times: the payment was taken, so its record is worth a short wait. The answer goes in
 * the same write, for a call that named a payment identifier, and the charge, for a payment settled for less than
 * it signed (`upto`).
 */
export async function recordSettlement(
  payments: PaymentService,
  key: string,
  transaction: string,
  answer?: KeptAnswer,
  charge?: SettledCharge,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await payments.ledger.markSettled(key, transaction, payments.now(), answer, charge);
      return;
    } catch (error) {
      // After the last attempt the claim stays pending: the reconciler finds the settlement on chain.
      if (attempt === 3) {
        payments.logger?.error({ err: error, paymentKey: key, transaction }, "could not record a settlement");
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/** Keeps the answer of a call run again after it was cut; should the store fail, a later retry runs it again. */
export async function keepAnswer(payments: PaymentService, key: string, answer: KeptAnswer): Promise<void> {
  try {
    await payments.ledger.keepAnswer(key, answer, payments.now());
  } catch (error) {
    payments.logger?.warn({ err: error, paymentKey: key }, "could not keep a paid call's answer");
  }
}

/** The facilitator or the payment chain could not be asked: 503, nothing charged; the cause goes to the log only. */
export function unverifiable(payments: PaymentService, requestId: string, error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  payments.logger?.warn({ err: error, requestId }, "could not verify a payment");
  return new ServiceError(
    "upstream_unavailable",
    uncharged("The payment could not be verified right now.", "try again shortly"),
    [],
    { "Retry-After": "5" },
  );
}

export function unconfirmed(): ServiceError {
  return new ServiceError(
    "upstream_error",
    "The payment could not be confirmed, so the call was not answered. Should the chain show it taken, it is " +
      "recorded and cannot buy another call; try again with a new payment.",
  );
}

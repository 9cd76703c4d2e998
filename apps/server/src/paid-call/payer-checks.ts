/**
 * Who pays, checked before anything is done in the payer's name (its slot, its rate, its claims, a log line): the
 * payment is signed by the payer it names, a signed-in call is paid from the signed-in wallet, and the payer has not
 * spent its budget of failed settlements (docs/threat-model.md, "Payers", "Holders", "The facilitator's gas").
 */
import type { PaymentPayload } from "@x402/core/types";
import { type Address, getAddress } from "viem";
import { settlementsKeepFailing } from "./call-bookkeeping.js";
import type { PaymentScheme, SignedRequirement } from "./payment-scheme.js";
import type { PaymentService } from "./payment-service.js";

export type PayerCheck = { ok: true; payer: Address } | { ok: false; sentence: string };

/** The payer of `payload`, or why it is refused (402 `invalid_payment`); throws 429 for a payer past its budget. */
export async function checkPayer(
  payments: Pick<PaymentService, "settlementFailures">,
  scheme: PaymentScheme,
  payload: PaymentPayload,
  requirements: SignedRequirement,
  named: string,
  caller: Address | undefined,
  /** The payment's field in the caller's transport, named when the payer is barred. */
  field?: string,
): Promise<PayerCheck> {
  const payer = getAddress(named);
  if ((await scheme.signer(payload, requirements)) !== payer) {
    return { ok: false, sentence: "the authorization is not signed by its payer" };
  }
  // A holder's price and views are the holder's own.
  if (caller && caller !== payer) {
    return {
      ok: false,
      sentence: `a signed-in call is paid by the holder who signed in (${caller}); this payment is from ${payer}`,
    };
  }
  const barredFor = await payments.settlementFailures.exhausted(payer.toLowerCase());
  if (barredFor !== undefined) throw settlementsKeepFailing(payer, barredFor, field);
  return { ok: true, payer };
}

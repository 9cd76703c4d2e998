import { describe, expect, it } from "vitest";
import { PAYMENT_REFUSAL_REASONS, parsePaymentRefusal, paymentRefusal } from "../src/index.js";

/** The reasons whose 402 `error` is the code alone (x402's `batch-settlement` corrective 402). */
const BARE = [
  "invalid_batch_settlement_evm_cumulative_amount_mismatch",
  "invalid_batch_settlement_evm_cumulative_below_claimed",
] as const;

describe("payment refusal reasons", () => {
  it("reads back every reason written with its sentence, which ends as a sentence does", () => {
    for (const reason of Object.keys(PAYMENT_REFUSAL_REASONS) as (keyof typeof PAYMENT_REFUSAL_REASONS)[]) {
      if ((BARE as readonly string[]).includes(reason)) continue;
      expect(parsePaymentRefusal(paymentRefusal(reason, "what happened: and more"))).toEqual({
        reason,
        message: "what happened: and more.",
      });
      // A sentence that already ends keeps its own mark.
      expect(parsePaymentRefusal(paymentRefusal(reason, "is it paid?")).message).toBe("is it paid?");
    }
  });

  it("writes x402's two corrective channel codes bare, as x402's channel client compares them", () => {
    for (const reason of BARE) {
      expect(paymentRefusal(reason, "the voucher signs 5; the channel is at 3")).toBe(reason);
      expect(parsePaymentRefusal(paymentRefusal(reason, "anything"))).toEqual({
        reason,
        message: PAYMENT_REFUSAL_REASONS[reason],
      });
    }
  });

  it("gives the reason's own sentence for a bare reason, and no reason for anything else", () => {
    expect(parsePaymentRefusal("payment_required")).toEqual({
      reason: "payment_required",
      message: PAYMENT_REFUSAL_REASONS.payment_required,
    });
    // A word that is not one of the reasons stays part of the message.
    expect(parsePaymentRefusal("insufficient_gas: something else")).toEqual({
      reason: undefined,
      message: "insufficient_gas: something else",
    });
    expect(parsePaymentRefusal(undefined)).toEqual({ reason: undefined, message: "" });
    // A prototype name is not a reason.
    expect(parsePaymentRefusal("constructor: x").reason).toBeUndefined();
  });
});

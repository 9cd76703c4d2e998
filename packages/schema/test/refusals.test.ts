import { describe, expect, it } from "vitest";
import { PAYMENT_REFUSAL_REASONS, parsePaymentRefusal, paymentRefusal } from "../src/index.js";

describe("payment refusal reasons", () => {
  it("reads back every reason written with its sentence, which ends as a sentence does", () => {
    for (const reason of Object.keys(PAYMENT_REFUSAL_REASONS) as (keyof typeof PAYMENT_REFUSAL_REASONS)[]) {
      expect(parsePaymentRefusal(paymentRefusal(reason, "what happened: and more"))).toEqual({
        reason,
        message: "what happened: and more.",
      });
      // A sentence that already ends keeps its own mark.
      expect(parsePaymentRefusal(paymentRefusal(reason, "is it paid?")).message).toBe("is it paid?");
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

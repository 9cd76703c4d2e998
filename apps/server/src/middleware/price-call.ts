import { routePaymentRequirements } from "@agent-tools/schema";
import type { RequestHandler } from "express";
import type { PaymentService } from "../payment/payment-service.js";
import { callState } from "./call-state.js";

/**
 * Step 4, price: a signed-in holder that passed the policy pays the discounted point; an anonymous caller the
 * standard point, or gets 402 asking to sign in when anonymous access is off.
 */
export function priceCall(payments: PaymentService): RequestHandler {
  return (_req, res, next) => {
    const state = callState(res);
    if (state.caller) {
      state.price = {
        point: "discounted",
        requirements: routePaymentRequirements(payments.terms, state.route, "discounted"),
      };
    } else if (payments.anonymousAccess) {
      state.price = {
        point: "standard",
        requirements: routePaymentRequirements(payments.terms, state.route, "standard"),
      };
    } else {
      return payments.challenge(
        res,
        state.route,
        "discounted",
        "sign_in_required: anonymous access is off; sign in as a holder with SIGN-IN-WITH-X",
      );
    }
    next();
  };
}

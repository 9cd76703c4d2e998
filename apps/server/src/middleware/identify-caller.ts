import type { RequestHandler } from "express";
import type { PaymentService } from "../payment/payment-service.js";
import { verifySignIn } from "../payment/verify-sign-in.js";
import { callState } from "./call-state.js";

/**
 * Step 2, identify: a valid `SIGN-IN-WITH-X` header makes the signer the caller. Present but invalid: 402 with
 * the reason. Absent: the caller is anonymous.
 */
export function identifyCaller(payments: PaymentService): RequestHandler {
  return async (req, res, next) => {
    const header = req.get("sign-in-with-x");
    if (header === undefined) return next();
    const state = callState(res);
    const signIn = await verifySignIn(header, payments);
    if (!signIn.ok) return payments.challenge(res, state.route, undefined, `invalid_siwx: ${signIn.reason}`);
    state.caller = signIn.address;
    state.signInNonce = signIn.nonce;
    next();
  };
}

import {
  parseSIWxHeader,
  type SIWxPayload,
  validateSIWxMessage,
  verifySIWxSignature,
} from "@x402/extensions/sign-in-with-x";
import type { RequestHandler } from "express";
import { getAddress } from "viem";
import type { PaymentService } from "../payment/payment-service.js";
import { callState } from "./call-state.js";

/** How old a sign-in message may be. */
export const SIGN_IN_MAX_AGE_MS = 5 * 60 * 1000;

/**
 * Step 2, identify: a `SIGN-IN-WITH-X` header (base64 JSON: an EIP-4361 message and its eip191 signature) bound
 * to the service's public origin, at most 5 minutes old, with an unspent nonce, on a supported chain. Valid: the
 * caller is the signer. Present but invalid: 402 with the reason. Absent: the caller is anonymous.
 */
export function identifyCaller(payments: PaymentService): RequestHandler {
  const expectedOrigin = new URL(payments.publicUrl);
  return async (req, res, next) => {
    const header = req.get("sign-in-with-x");
    if (header === undefined) return next();
    const state = callState(res);
    const refuse = (reason: string) => payments.challenge(res, state.route, undefined, `invalid_siwx: ${reason}`);

    let payload: SIWxPayload;
    try {
      payload = parseSIWxHeader(header);
    } catch (error) {
      return refuse(`SIGN-IN-WITH-X is not a valid sign-in payload (${(error as Error).message})`);
    }
    if (!payments.signInChains.includes(payload.chainId)) {
      return refuse(`chain ${payload.chainId} is not supported for sign-in; use ${payments.signInChains.join(" or ")}`);
    }
    const validation = await validateSIWxMessage(payload, expectedOrigin, {
      maxAge: SIGN_IN_MAX_AGE_MS,
      checkNonce: (nonce) => !payments.signInNonces.isUsed(nonce),
    });
    if (!validation.isValid) return refuse(`${validation.invalidReason}: ${validation.invalidMessage}`);
    const verification = await verifySIWxSignature(payload);
    if (!verification.isValid) return refuse(`${verification.invalidReason}: ${verification.invalidMessage}`);
    if (getAddress(verification.payer) !== getAddress(payload.address)) {
      return refuse("invalid_siwx_signature: the signature is not the address's");
    }

    state.caller = getAddress(payload.address);
    state.signInNonce = payload.nonce;
    next();
  };
}

import {
  parseSIWxHeader,
  type SIWxPayload,
  validateSIWxMessage,
  verifySIWxSignature,
} from "@x402/extensions/sign-in-with-x";
import { type Address, getAddress, type Hex } from "viem";
import type { PaymentService } from "./payment-service.js";
import { recoverMessageSigner } from "./recover-signer.js";

/** x402's message check, with the recovery done natively (payment/recover-signer.ts). */
const nativeMessageVerifier = async ({
  address,
  message,
  signature,
}: {
  address: string;
  message: string;
  signature: string;
}): Promise<boolean> => (await recoverMessageSigner(message, signature as Hex)) === getAddress(address);

/** How old a sign-in message may be. */
export const SIGN_IN_MAX_AGE_MS = 5 * 60 * 1000;

export type SignInResult = { ok: true; address: Address; nonce: string } | { ok: false; reason: string };

/** How long a spent nonce is kept: past the message's validity window, with a margin for clock skew. */
export const SIGN_IN_NONCE_RETENTION_MS = SIGN_IN_MAX_AGE_MS + 60_000;

/**
 * Checks a `SIGN-IN-WITH-X` header (base64 JSON: an EIP-4361 message and its eip191 signature): bound to the
 * service's public origin, at most 5 minutes old, on a supported chain, signed by the address it names. Whether
 * its nonce is unspent is the store's to say: read here, so a stale sign-in is refused before anything is paid,
 * and claimed for good by the caller (`PaymentService.signIns`).
 */
export async function verifySignIn(
  header: string,
  payments: Pick<PaymentService, "publicUrl" | "signInChains" | "signIns">,
): Promise<SignInResult> {
  let payload: SIWxPayload;
  try {
    payload = parseSIWxHeader(header);
  } catch (error) {
    return { ok: false, reason: `SIGN-IN-WITH-X is not a valid sign-in payload (${(error as Error).message})` };
  }
  if (!payments.signInChains.includes(payload.chainId)) {
    return {
      ok: false,
      reason: `chain ${payload.chainId} is not supported for sign-in; use ${payments.signInChains.join(" or ")}`,
    };
  }
  const validation = await validateSIWxMessage(payload, new URL(payments.publicUrl), { maxAge: SIGN_IN_MAX_AGE_MS });
  if (!validation.isValid) return { ok: false, reason: `${validation.invalidReason}: ${validation.invalidMessage}` };
  const verification = await verifySIWxSignature(payload, { evmVerifier: nativeMessageVerifier });
  if (!verification.isValid) {
    return { ok: false, reason: `${verification.invalidReason}: ${verification.invalidMessage}` };
  }
  if (getAddress(verification.payer) !== getAddress(payload.address)) {
    return { ok: false, reason: "invalid_siwx_signature: the signature is not the address's" };
  }
  const address = getAddress(payload.address);
  if (await payments.signIns.isSpent(address, payload.nonce)) {
    return { ok: false, reason: "invalid_siwx_nonce: this sign-in was already used for a call; sign in again" };
  }
  return { ok: true, address, nonce: payload.nonce };
}

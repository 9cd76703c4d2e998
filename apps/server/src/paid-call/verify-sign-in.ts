import {
  parseSIWxHeader,
  type SIWxPayload,
  SIWxPayloadSchema,
  validateSIWxMessage,
  verifySIWxSignature,
} from "@x402/extensions/sign-in-with-x";
import { type Address, getAddress, type Hex } from "viem";
import { clipped } from "../errors/service-error.js";
import { recoverMessageSigner } from "../signatures/recover-signer.js";
import type { PaymentService } from "./payment-service.js";

/**
 * What x402's message check refused, in the service's words (its own texts quote the caller's values unclipped), by
 * its reason code, which stays in front of the sentence as the refusal's name.
 */
function timingOrOriginRefusal(code: string | undefined, payload: SIWxPayload, publicUrl: string): string {
  const origin = new URL(publicUrl);
  switch (code) {
    case "invalid_siwx_domain_mismatch":
      return `the sign-in names the domain ${clipped(payload.domain, 80)}, not this service's ${origin.host}; sign in for this service`;
    case "invalid_siwx_uri_mismatch":
      return `the sign-in's uri is not on this service's origin ${origin.origin}; sign in for this service`;
    case "invalid_siwx_issued_at":
      return "the sign-in's issuedAt is not a timestamp";
    case "invalid_siwx_issued_at_too_old":
      return `the sign-in was issued more than ${SIGN_IN_MAX_AGE_MS / 60_000} minutes ago; sign in again`;
    case "invalid_siwx_issued_at_in_future":
      return "the sign-in's issuedAt is in the future; check the signer's clock";
    case "invalid_siwx_expiration_time":
      return "the sign-in's expirationTime is not a timestamp";
    case "invalid_siwx_expired":
      return "the sign-in's expirationTime has passed; sign in again";
    case "invalid_siwx_not_before":
      return "the sign-in's notBefore is not a timestamp";
    case "invalid_siwx_not_yet_valid":
      return "the sign-in is not valid yet: its notBefore is still to come";
    default:
      return "the sign-in's message is not valid for this service";
  }
}

/** x402's message check, with the recovery done natively (signatures/recover-signer.ts). */
const nativeMessageVerifier = async ({
  address,
  message,
  signature,
}: {
  address: string;
  message: string;
  signature: string;
}): Promise<boolean> => (await recoverMessageSigner(message, signature as Hex)) === getAddress(address);

/** EIP-4361's grammar, for the fields a caller writes: refused with the field's name before anything is parsed further. */
const FIELD_RULES: [field: keyof SIWxPayload, rule: RegExp, says: string][] = [
  ["address", /^0x[0-9a-fA-F]{40}$/, "address is not a 20-byte hex address"],
  ["nonce", /^[A-Za-z0-9]{8,96}$/, "nonce is not 8 to 96 letters and digits"],
  ["version", /^1$/, "version is not 1"],
  ["domain", /^[^\s/]{1,253}$/, "domain is not a host"],
  ["uri", /^\S{1,2048}$/, "uri is not a URI"],
  ["chainId", /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/, "chainId is not a CAIP-2 chain id"],
  ["issuedAt", /^\S{1,64}$/, "issuedAt is not a timestamp"],
  ["signature", /^0x[0-9a-fA-F]{2,1024}$/, "signature is not hex"],
];

/** The first field of the payload that EIP-4361 cannot carry, said in a sentence; undefined when all can. */
function malformedField(payload: SIWxPayload): string | undefined {
  for (const [field, rule, says] of FIELD_RULES) {
    if (!rule.test(String(payload[field] ?? ""))) return says;
  }
  if (payload.statement !== undefined && /[\r\n]/.test(payload.statement)) return "statement has a line break";
  if (payload.statement !== undefined && payload.statement.length > 512) return "statement is too long";
  for (const field of ["expirationTime", "notBefore", "requestId"] as const) {
    const value = payload[field];
    if (value !== undefined && !/^\S{1,128}$/.test(value)) return `${field} is not a single short value`;
  }
  const resources = payload.resources ?? [];
  if (resources.length > 16 || resources.some((r) => !/^\S{1,2048}$/.test(r))) return "resources are not a few URIs";
  return undefined;
}

/** How old a sign-in message may be. */
export const SIGN_IN_MAX_AGE_MS = 5 * 60 * 1000;

/** A valid sign-in, or why not. */
export type SignInResult = { ok: true; address: Address; nonce: string } | { ok: false; reason: string };

/** The refusal of a sign-in whose nonce already served a call. */
export const SIGN_IN_SPENT = "invalid_siwx_nonce: this sign-in was already used for a call; sign in again";

/** How long a spent nonce is kept: past the message's validity window, with a margin for clock skew. */
export const SIGN_IN_NONCE_RETENTION_MS = SIGN_IN_MAX_AGE_MS + 60_000;

/**
 * Checks a sign-in (an EIP-4361 message and its eip191 signature), as a `SIGN-IN-WITH-X` header's value (base64 JSON)
 * or as the payload itself, where a transport carries it as a value: bound to the service's public origin and to the
 * path it is presented to (`path`: a route, the MCP endpoint), at most 5 minutes old, on a supported chain, signed by
 * the address it names. Whether its nonce is unspent is the store's to say: read here, so a stale sign-in is refused
 * before anything is paid, and claimed for good by the caller (`PaymentService.signIns`). With `claimedNext`, the nonce
 * is not read here: the caller claims it next (a paid call with its payment), and the claim finds a spent one; a
 * payment sent again to have its answer again may come with its spent sign-in.
 */
export async function verifySignIn(
  signIn: unknown,
  payments: Pick<PaymentService, "publicUrl" | "signInChains" | "signIns">,
  path: string,
  options: { claimedNext?: boolean; field?: string } = {},
): Promise<SignInResult> {
  let payload: SIWxPayload;
  try {
    payload = typeof signIn === "string" ? parseSIWxHeader(signIn) : SIWxPayloadSchema.parse(signIn);
  } catch {
    return {
      ok: false,
      reason: options.field
        ? `${options.field} is not a valid sign-in payload: a signed EIP-4361 message and its signature (x402 sign-in-with-x)`
        : "SIGN-IN-WITH-X is not a valid sign-in payload: base64 JSON of a signed EIP-4361 message (x402 sign-in-with-x)",
    };
  }
  const malformed = malformedField(payload);
  if (malformed) return { ok: false, reason: `invalid_siwx_message: the sign-in's ${malformed}` };
  if (!payments.signInChains.includes(payload.chainId)) {
    return {
      ok: false,
      reason: `chain ${payload.chainId} is not supported for sign-in; use ${payments.signInChains.join(" or ")}`,
    };
  }
  const validation = await validateSIWxMessage(payload, new URL(payments.publicUrl), { maxAge: SIGN_IN_MAX_AGE_MS });
  if (!validation.isValid) {
    return {
      ok: false,
      reason: `${validation.invalidReason}: ${timingOrOriginRefusal(validation.invalidReason, payload, payments.publicUrl)}`,
    };
  }
  // A sign-in made for one route is not another's: what a holder signed is what it is used for.
  const signedFor = URL.canParse(payload.uri) ? new URL(payload.uri).pathname : payload.uri;
  if (signedFor !== new URL(`${payments.publicUrl}${path}`).pathname) {
    return {
      ok: false,
      reason: `invalid_siwx_uri: the sign-in is for ${clipped(signedFor, 120)}, not ${path}; sign in for the route called`,
    };
  }
  let verification: Awaited<ReturnType<typeof verifySIWxSignature>>;
  try {
    verification = await verifySIWxSignature(payload, { evmVerifier: nativeMessageVerifier });
  } catch {
    // The message could not even be written out as EIP-4361 text (a field its grammar refuses).
    return { ok: false, reason: "invalid_siwx_message: the sign-in is not a well-formed EIP-4361 message" };
  }
  if (!verification.isValid) {
    return { ok: false, reason: `${verification.invalidReason}: the signature is not the address's` };
  }
  if (getAddress(verification.payer) !== getAddress(payload.address)) {
    return { ok: false, reason: "invalid_siwx_signature: the signature is not the address's" };
  }
  const address = getAddress(payload.address);
  if (!options.claimedNext && (await payments.signIns.isSpent(address, payload.nonce))) {
    return { ok: false, reason: SIGN_IN_SPENT };
  }
  return { ok: true, address, nonce: payload.nonce };
}

/**
 * The payload of an `exact` payment on EVM chains: an EIP-3009 `transferWithAuthorization` signed by the payer, read
 * against the price quoted (amount, payee, validity window) and keyed by its network, asset, payer and nonce.
 */
import { createHash } from "node:crypto";
import type { PaymentRequirements } from "@agent-tools/schema";
import type { PaymentPayload } from "@x402/core/types";
import { z } from "zod";

/** The EIP-3009 authorization an `exact` EVM payment carries, as x402 v2 sends it (integers as decimal strings). */
export const eip3009PayloadSchema = z.object({
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/, { error: "must be a hex signature" }),
  authorization: z.object({
    from: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
    to: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
    value: z.string().regex(/^\d{1,78}$/),
    validAfter: z.string().regex(/^\d{1,20}$/),
    validBefore: z.string().regex(/^\d{1,20}$/),
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  }),
});
export type Eip3009Payload = z.infer<typeof eip3009PayloadSchema>;

/**
 * Seconds an authorization must still be valid for when it is checked: room to run the tool and mine the
 * settlement (x402's own facilitator keeps the same margin). One that expires sooner could only revert.
 */
export const SETTLEMENT_MARGIN_SECONDS = 6;

/**
 * Seconds an authorization must still be valid for when a call is admitted, where settlements wait up to
 * `batchWindowMs` for their batch (docs/decisions.md, "Settlements in batches"): the batch's wait comes on top of
 * the margin, so a payment cannot expire inside its batch and revert through no fault of its payer.
 */
export function settlementMarginSeconds(batchWindowMs = 0): number {
  return SETTLEMENT_MARGIN_SECONDS + Math.ceil(batchWindowMs / 1000);
}

/** Seconds a payer's clock may be ahead of ours when it sets `validBefore`. */
export const VALID_BEFORE_SKEW_SECONDS = 60;

export type AuthorizationCheck =
  | { ok: true; from: string; nonce: string; validBefore: Date }
  | { ok: false; why: string };

/**
 * The EIP-3009 authorization of an `exact` payment, checked against the price quoted before anything else is
 * asked: well formed, for the amount and payee quoted, valid now, and valid for at most `maxTimeoutSeconds` (with a
 * minute of clock skew), so no authorization outlives the window in which it can be settled and recorded.
 */
export function readAuthorization(
  payload: PaymentPayload,
  quoted: PaymentRequirements,
  now: Date,
  marginSeconds: number = SETTLEMENT_MARGIN_SECONDS,
): AuthorizationCheck {
  const parsed = eip3009PayloadSchema.safeParse(payload.payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = ["payload", ...(issue?.path ?? []).map(String)].join(".");
    return { ok: false, why: `the payment's ${field} is not a valid EIP-3009 authorization field` };
  }
  const { authorization } = parsed.data;
  if (BigInt(authorization.value) !== BigInt(quoted.amount)) {
    return {
      ok: false,
      why: `the authorization's value is ${authorization.value}, the price quoted is ${quoted.amount}`,
    };
  }
  if (authorization.to.toLowerCase() !== quoted.payTo.toLowerCase()) {
    return { ok: false, why: `the authorization pays ${authorization.to}, the price quoted is for ${quoted.payTo}` };
  }
  const seconds = Math.floor(now.getTime() / 1000);
  const validAfter = Number(authorization.validAfter);
  const validBefore = Number(authorization.validBefore);
  // The chain settles only in a block whose timestamp is after validAfter: from this second on is too late.
  if (validAfter >= seconds) {
    return { ok: false, why: "the authorization is not valid yet (validAfter must be before the current second)" };
  }
  if (validBefore < seconds + marginSeconds) {
    return {
      ok: false,
      why: `the authorization has expired, or expires before it could be settled (validBefore): it must be valid for at least ${marginSeconds} s more`,
    };
  }
  const latest = seconds + quoted.maxTimeoutSeconds + VALID_BEFORE_SKEW_SECONDS;
  if (validBefore > latest) {
    return {
      ok: false,
      why: `the authorization's validBefore is too far ahead: at most ${quoted.maxTimeoutSeconds} s from now`,
    };
  }
  return { ok: true, from: authorization.from, nonce: authorization.nonce, validBefore: new Date(validBefore * 1000) };
}

/** The key of an EIP-3009 authorization: its network, asset, payer and nonce. */
export function eip3009PaymentKey(network: string, asset: string, payer: string, nonce: string): string {
  return `eip3009:${network}:${asset}:${payer}:${nonce}`.toLowerCase();
}

/** One key per payment authorization: the EIP-3009 (network, asset, payer, nonce), else a digest of the payload. */
export function paymentKey(payload: PaymentPayload): string {
  const parsed = eip3009PayloadSchema.safeParse(payload.payload);
  if (parsed.success) {
    const { from, nonce } = parsed.data.authorization;
    return eip3009PaymentKey(payload.accepted.network, payload.accepted.asset, from, nonce);
  }
  return `payload:${createHash("sha256").update(JSON.stringify(payload.payload)).digest("hex")}`;
}

import { createHash } from "node:crypto";
import type { PaymentRequirements } from "@agent-tools/schema";
import type { PaymentPayload } from "@x402/core/types";
import { z } from "zod";
import { clipped } from "../../errors/service-error.js";

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

const paymentPayloadSchema = z.object({
  x402Version: z.number(),
  accepted: z.record(z.string(), z.unknown()),
  payload: z.record(z.string(), z.unknown()),
  resource: z.unknown().optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
});

/** What was sent as a payment: a v2 payload, a v1 one (another x402 version), or something that is not a payment. */
export type DecodedPayment =
  | { kind: "payment"; payload: PaymentPayload }
  | { kind: "other_version"; version: unknown }
  | { kind: "malformed"; why: string };

/**
 * Reads a payment: the base64 JSON of a `PAYMENT-SIGNATURE` header, or the JSON object itself (as another transport
 * may carry it). Never throws.
 */
export function decodePayment(sent: string | Record<string, unknown>): DecodedPayment {
  let json: unknown = sent;
  if (typeof sent === "string") {
    try {
      json = JSON.parse(Buffer.from(sent, "base64").toString("utf8"));
    } catch {
      return { kind: "malformed", why: "it is not base64 of a JSON object" };
    }
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    return { kind: "malformed", why: "it is not a JSON object" };
  }
  const version = (json as { x402Version?: unknown }).x402Version;
  if (version !== 2) return { kind: "other_version", version };
  const parsed = paymentPayloadSchema.safeParse(json);
  if (!parsed.success) return { kind: "malformed", why: "it lacks x402 v2's accepted and payload objects" };
  return { kind: "payment", payload: parsed.data as unknown as PaymentPayload };
}

/** Why the requirement a payment names (`accepted`) is not the one quoted; undefined when it is. */
export function requirementMismatch(
  accepted: PaymentPayload["accepted"] | undefined,
  quoted: PaymentRequirements,
): string | undefined {
  if (!accepted) return "the payment names no accepted requirement";
  const same = (a: unknown, b: unknown) => String(a).toLowerCase() === String(b).toLowerCase();
  for (const field of ["scheme", "network", "asset", "amount", "payTo"] as const) {
    if (!same(accepted[field], quoted[field])) {
      return `the payment's ${field} is ${clipped(String(accepted[field]), 80)}, the price quoted has ${quoted[field]}`;
    }
  }
  const extra = (accepted.extra ?? {}) as Record<string, unknown>;
  if (extra.name !== quoted.extra.name || extra.version !== quoted.extra.version) {
    return "the payment is signed for another asset domain (extra.name / extra.version)";
  }
  return undefined;
}

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

/** A payment that pays the quoted requirement, read; or why not (an x402 refusal reason and sentence). */
export type ReadPayment =
  | { ok: true; payload: PaymentPayload; key: string; from: string; nonce: string; validBefore: Date }
  | { ok: false; reason: "payment_required" | "unsupported_x402_version" | "invalid_payment"; sentence: string };

export interface ReadPaymentOptions {
  /** The payment came in x402 version 1's `X-PAYMENT` header. */
  inVersion1Header?: boolean;
  /** Where the caller's transport carries the payment, as a refusal names it (default HTTP's `PAYMENT-SIGNATURE`). */
  paymentField?: string;
  /** Seconds the authorization must still be valid for (default {@link SETTLEMENT_MARGIN_SECONDS}). */
  marginSeconds?: number;
}

/**
 * Reads the payment sent with a call against the requirement quoted to it: x402 version 2, `exact`, this very
 * requirement, an EIP-3009 authorization valid now. Whether it is unused is the ledger's to say.
 */
export function readPayment(
  sent: string | Record<string, unknown> | undefined,
  quoted: PaymentRequirements,
  now: Date,
  options: ReadPaymentOptions = {},
): ReadPayment {
  return readDecodedPayment(sent === undefined ? undefined : decodePayment(sent), quoted, now, options);
}

/** {@link readPayment} of a payment already decoded (`decodePayment`), so a paid call decodes its payment once. */
export function readDecodedPayment(
  decoded: DecodedPayment | undefined,
  quoted: PaymentRequirements,
  now: Date,
  options: ReadPaymentOptions = {},
): ReadPayment {
  if (decoded === undefined) {
    const field = options.paymentField ?? "PAYMENT-SIGNATURE";
    return { ok: false, reason: "payment_required", sentence: `pay with x402 version 2 (${field})` };
  }
  if (options.inVersion1Header) {
    return {
      ok: false,
      reason: "unsupported_x402_version",
      sentence:
        "the payment came in X-PAYMENT, the header of x402 version 1; this service speaks x402 version 2: pay " +
        "with an x402 v2 client such as @x402/fetch or @x402/axios, which send PAYMENT-SIGNATURE",
    };
  }
  if (decoded.kind === "other_version") {
    return {
      ok: false,
      reason: "unsupported_x402_version",
      sentence:
        `this service speaks x402 version 2 and the payment is version ${String(decoded.version)}: ` +
        "pay with an x402 v2 client such as @x402/fetch or @x402/axios",
    };
  }
  if (decoded.kind === "malformed") {
    const field = options.paymentField ?? "PAYMENT-SIGNATURE";
    return { ok: false, reason: "invalid_payment", sentence: `the payment (${field}) cannot be read: ${decoded.why}` };
  }
  const { payload } = decoded;
  const wrong = requirementMismatch(payload.accepted, quoted);
  if (wrong) return { ok: false, reason: "invalid_payment", sentence: wrong };
  const authorization = readAuthorization(payload, quoted, now, options.marginSeconds);
  if (!authorization.ok) return { ok: false, reason: "invalid_payment", sentence: authorization.why };
  const { from, nonce, validBefore } = authorization;
  return { ok: true, payload, key: paymentKey(payload), from, nonce, validBefore };
}

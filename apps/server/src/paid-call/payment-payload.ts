/**
 * An x402 version 2 payment as any scheme sends it: decoded from its header or taken as an object, checked to name
 * the very requirement quoted, then read by its scheme (./payment-scheme.ts).
 */
import type { PaymentRefusalReason, PaymentRequirements } from "@agent-tools/schema";
import type { PaymentPayload } from "@x402/core/types";
import { z } from "zod";
import { clipped } from "../errors/service-error.js";
import type { PaymentScheme } from "./payment-scheme.js";

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

/** A payment that pays the quoted requirement, read; or why not (an x402 refusal reason and sentence). */
export type ReadPayment =
  | {
      ok: true;
      payload: PaymentPayload;
      key: string;
      from: string;
      nonce: string;
      validBefore: Date;
      channel?: { id: string; cumulative: string };
    }
  | { ok: false; reason: PaymentRefusalReason; sentence: string };

export interface ReadPaymentOptions {
  /** The payment came in x402 version 1's `X-PAYMENT` header. */
  inVersion1Header?: boolean;
  /** Where the caller's transport carries the payment, as a refusal names it (default HTTP's `PAYMENT-SIGNATURE`). */
  paymentField?: string;
}

/**
 * Reads the payment sent with a call, decoded once (`decodePayment`), against the requirement quoted to it: x402
 * version 2, this very requirement, and what its scheme checks of its payload. Whether it is unused is the ledger's
 * to say.
 */
export function readDecodedPayment(
  decoded: DecodedPayment | undefined,
  quoted: PaymentRequirements,
  now: Date,
  scheme: PaymentScheme,
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
  const read = scheme.read(payload, quoted, now);
  if (!read.ok) return { ok: false, reason: read.reason ?? "invalid_payment", sentence: read.why };
  const { key, from, nonce, validBefore, channel } = read;
  return { ok: true, payload, key, from, nonce, validBefore, ...(channel ? { channel } : {}) };
}

/**
 * The payload of an `upto` payment on EVM chains (x402's `specs/schemes/upto/scheme_upto_evm.md`): a Permit2
 * `PermitWitnessTransferFrom` of up to the price, signed by the payer, whose spender is x402's upto proxy, whose
 * witness names the payee and the one facilitator that may settle it. Read against the price quoted before anything
 * else is asked, and keyed by its payer and Permit2 nonce.
 */
import { createHash } from "node:crypto";
import { UPTO_PERMIT2_PROXY_ADDRESS } from "@agent-tools/contracts";
import type { PaymentRequirements } from "@agent-tools/schema";
import type { PaymentPayload } from "@x402/core/types";
import { type Hex, maxUint256, toHex } from "viem";
import { z } from "zod";
import type { SchemeRead } from "../../paid-call/payment-scheme.js";

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const decimal = (digits: number) => z.string().regex(new RegExp(`^\\d{1,${digits}}$`));
/** A uint256 as x402's client writes it (decimal); the spec's example writes a nonce in hex. */
const uint256 = z
  .string()
  .regex(/^(\d{1,78}|0x[0-9a-fA-F]{1,64})$/)
  .refine((value) => BigInt(value) <= maxUint256, { error: "must fit 256 bits" });

/** The Permit2 authorization an `upto` EVM payment carries, as x402 v2's client sends it (integers as strings). */
export const uptoPayloadSchema = z.object({
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/, { error: "must be a hex signature" }),
  permit2Authorization: z.object({
    from: address,
    permitted: z.object({ token: address, amount: uint256 }),
    spender: address,
    nonce: uint256,
    deadline: decimal(20),
    witness: z.object({ to: address, facilitator: address, validAfter: decimal(20) }),
  }),
});
export type UptoPayload = z.infer<typeof uptoPayloadSchema>;

/** Seconds a payer's clock may be ahead of ours when it sets `deadline`. */
export const DEADLINE_SKEW_SECONDS = 60;

/** A Permit2 nonce (a uint256) as the ledger keeps nonces: 32 bytes in hex. */
export function permit2NonceHex(nonce: string | bigint): Hex {
  return toHex(BigInt(nonce), { size: 32 });
}

/** The key of an `upto` payment: its payer and Permit2 nonce, which the chain spends once. */
export function uptoPaymentKey(payer: string, nonce: string | bigint): string {
  return `upto:${payer.toLowerCase()}:${permit2NonceHex(nonce)}`;
}

/** One key per payment: the payer and Permit2 nonce, else a digest of a payload that is not an `upto` one. */
export function uptoKeyOf(payload: PaymentPayload): string {
  const parsed = uptoPayloadSchema.safeParse(payload.payload);
  if (parsed.success) {
    const { from, nonce } = parsed.data.permit2Authorization;
    return uptoPaymentKey(from, nonce);
  }
  return `payload:${createHash("sha256").update(JSON.stringify(payload.payload)).digest("hex")}`;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The Permit2 authorization of an `upto` payment, checked against the price quoted: well formed, of the asset and
 * exactly the price quoted (the most the call can be charged), spent by x402's upto proxy, for the payee, settled by
 * the facilitator quoted, valid now and for at least `marginSeconds` more, and for no longer than
 * `maxTimeoutSeconds` (with a minute of clock skew).
 */
export function readUptoAuthorization(
  payment: PaymentPayload,
  quoted: PaymentRequirements,
  now: Date,
  marginSeconds: number,
): SchemeRead {
  const parsed = uptoPayloadSchema.safeParse(payment.payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = ["payload", ...(issue?.path ?? []).map(String)].join(".");
    return { ok: false, why: `the payment's ${field} is not a valid upto (Permit2) authorization field` };
  }
  const auth = parsed.data.permit2Authorization;
  if (!same(auth.permitted.token, quoted.asset)) {
    return {
      ok: false,
      why: `the permit is for the token ${auth.permitted.token}, the price quoted is in ${quoted.asset}`,
    };
  }
  if (BigInt(auth.permitted.amount) !== BigInt(quoted.amount)) {
    return {
      ok: false,
      why: `the permit's amount is ${auth.permitted.amount}, the price quoted (the most a call is charged) is ${quoted.amount}`,
    };
  }
  if (!same(auth.spender, UPTO_PERMIT2_PROXY_ADDRESS)) {
    return {
      ok: false,
      why: `the permit's spender is ${auth.spender}, not x402's upto proxy ${UPTO_PERMIT2_PROXY_ADDRESS}`,
    };
  }
  if (!same(auth.witness.to, quoted.payTo)) {
    return { ok: false, why: `the permit pays ${auth.witness.to}, the price quoted is for ${quoted.payTo}` };
  }
  const facilitator = String(quoted.extra.facilitatorAddress ?? "");
  if (!same(auth.witness.facilitator, facilitator)) {
    return {
      ok: false,
      why: `the permit names the facilitator ${auth.witness.facilitator}; this service's upto payments are settled by ${facilitator} (extra.facilitatorAddress)`,
    };
  }
  const seconds = Math.floor(now.getTime() / 1000);
  const deadline = Number(auth.deadline);
  // The proxy settles in a block whose timestamp is at least validAfter.
  if (Number(auth.witness.validAfter) > seconds) {
    return { ok: false, why: "the permit is not valid yet (witness.validAfter is after the current second)" };
  }
  if (deadline < seconds + marginSeconds) {
    return {
      ok: false,
      why: `the permit has expired, or expires before it could be settled (deadline): it must be valid for at least ${marginSeconds} s more`,
    };
  }
  if (deadline > seconds + quoted.maxTimeoutSeconds + DEADLINE_SKEW_SECONDS) {
    return {
      ok: false,
      why: `the permit's deadline is too far ahead: at most ${quoted.maxTimeoutSeconds} s from now`,
    };
  }
  return {
    ok: true,
    key: uptoPaymentKey(auth.from, auth.nonce),
    from: auth.from,
    nonce: permit2NonceHex(auth.nonce),
    validBefore: new Date(deadline * 1000),
  };
}

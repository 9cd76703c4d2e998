/**
 * A payment scheme as the paid call sees it: what is particular to one x402 scheme on the service's side (how its
 * payload names the payer, the amount and the deadline; its single-use key; who signed it). The paid call knows only
 * this interface; each scheme is a folder of `schemes/` registered by the composition (docs/architecture.md,
 * "Adding a payment scheme").
 */
import type { PaymentRequirements } from "@agent-tools/schema";
import type { PaymentPayload } from "@x402/core/types";
import type { Address } from "viem";

/** What of a payment requirement a signature is checked against: the chain, the asset and its EIP-712 domain. */
export interface SignedRequirement {
  network: string;
  asset: string;
  extra?: Record<string, unknown>;
}

/** The scheme's part of a payment, read against the requirement quoted; or why it does not pay it. */
export type SchemeRead =
  | { ok: true; key: string; from: string; nonce: string; validBefore: Date }
  | { ok: false; why: string };

export interface PaymentScheme {
  /** x402's name of the scheme, as in `accepts[].scheme`. */
  readonly scheme: string;
  /**
   * Reads the payload (`payment.payload`) against the requirement quoted, once the payment is known to be x402 v2
   * and to name that requirement: the amount and payee, and that it is valid now and long enough to be settled;
   * with the payment's key (`keyOf`), read from the same parse.
   */
  read(payment: PaymentPayload, quoted: PaymentRequirements, now: Date): SchemeRead;
  /** The payer a payment names, unchecked; undefined when its payload is not this scheme's. */
  payerOf(payment: PaymentPayload): Address | undefined;
  /** One key per payment: what may buy one call, on any instance and across restarts. */
  keyOf(payment: PaymentPayload): string;
  /** Who signed the payment (undefined when no signature can be read): asked before anything is done in the payer's name. */
  signer(payment: PaymentPayload, requirements: SignedRequirement): Promise<Address | undefined>;
}

/** The schemes a service takes, by name. */
export type PaymentSchemes = Readonly<Record<string, PaymentScheme>>;

/** The scheme of a requirement the service quoted: one it was composed with, or a configuration that cannot be. */
export function schemeOf(schemes: PaymentSchemes, requirements: { scheme: string }): PaymentScheme {
  const scheme = Object.hasOwn(schemes, requirements.scheme) ? schemes[requirements.scheme] : undefined;
  if (!scheme) throw new Error(`No payment scheme ${requirements.scheme} is registered (startup/compose-payments.ts)`);
  return scheme;
}

/**
 * A payment scheme as the paid call sees it: what is particular to one x402 scheme on the service's side (how its
 * payload names the payer, the amount and the deadline; its single-use key; who signed it). The paid call knows only
 * this interface; each scheme is a folder of `schemes/` registered by the composition (docs/architecture.md,
 * "Adding a payment scheme").
 */
import type { CountedWork, PaymentRefusalReason, PaymentRequirements } from "@agent-tools/schema";
import type { PaymentPayload, SettleResponse } from "@x402/core/types";
import type { Address } from "viem";
import type { SettlementClaim } from "../store/settlement-ledger.js";

/** What of a payment requirement a signature is checked against: the chain, the asset and its EIP-712 domain. */
export interface SignedRequirement {
  network: string;
  asset: string;
  extra?: Record<string, unknown>;
}

/** The scheme's part of a payment, read against the requirement quoted; or why it does not pay it. */
export type SchemeRead =
  | {
      ok: true;
      key: string;
      from: string;
      nonce: string;
      validBefore: Date;
      /** A payment over a channel: the channel and the cumulative amount its voucher signs, kept in the ledger. */
      channel?: { id: string; cumulative: string };
    }
  | { ok: false; why: string; reason?: PaymentRefusalReason };

/** A refusal of the scheme's own: its reason, sentence, and what to add to its requirement's `extra` in the 402. */
export interface SchemeRefusal {
  reason: PaymentRefusalReason;
  sentence: string;
  /** x402's corrective fields (a channel's state), merged into the scheme's `accepts[].extra`. */
  extra?: Record<string, unknown>;
}

/**
 * The charge of a call paid over a metered scheme (METERED_SCHEMES): its work's price by the published formula, at
 * most the price quoted (docs/api.md, "Prices by the work done").
 */
export interface MeteredCharge {
  amount: bigint;
  work: CountedWork;
}

/** A payment held for one call by the scheme itself, until the call answered (settle) or failed (release). */
export interface SchemeHold {
  /** True when `settle` writes the call's ledger entry with the charge (the call was given a `booking`). */
  books?: boolean;
  /**
   * Takes the payment of the call that answered: what the caller's `PAYMENT-RESPONSE` says. `metered`, for a
   * scheme charged by the work done, is what to charge of the price held. `refused` when the scheme itself declines
   * to take it after all (a channel another call or a withdrawal moved on while the tool ran): nothing is charged.
   */
  settle(metered?: MeteredCharge): Promise<SettleResponse | { refused: SchemeRefusal }>;
  /** Gives the payment back: the call failed and costs nothing. */
  release(): Promise<void>;
}

/** What a payment that buys no call does (a channel's cooperative refund): the answer, or why it was refused. */
export type SchemeOperation =
  | { done: true; status: number; output: unknown; settlement: SettleResponse }
  | ({ done: false } & SchemeRefusal);

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
  /**
   * A scheme that verifies and settles its payments itself (channels: a voucher checked locally, its charge
   * committed when the call answered) instead of the facilitator's verify and settle: holds the payment for the call.
   */
  hold?(
    payment: PaymentPayload,
    requirements: PaymentRequirements,
    call: {
      key: string;
      payer: Address;
      requestId: string;
      /**
       * The call's ledger entry, not claimed beforehand: the scheme writes it, settled, with the charge (a call
       * whose payment cannot be in flight on chain needs no pending entry; docs/architecture.md, "A paid call").
       */
      booking?: SettlementClaim;
    },
  ): Promise<({ held: true } & SchemeHold) | ({ held: false } & SchemeRefusal)>;
  /**
   * A payment that is an operation of the scheme rather than the price of a call (a channel's refund): done here,
   * without the tool. Undefined for a payment that buys a call.
   */
  operation?(
    payment: PaymentPayload,
    requirements: PaymentRequirements,
    call: { payer: Address; requestId: string },
  ): Promise<SchemeOperation | undefined>;
}

/** The schemes a service takes, by name. */
export type PaymentSchemes = Readonly<Record<string, PaymentScheme>>;

/** The scheme of a requirement the service quoted: one it was composed with, or a configuration that cannot be. */
export function schemeOf(schemes: PaymentSchemes, requirements: { scheme: string }): PaymentScheme {
  const scheme = Object.hasOwn(schemes, requirements.scheme) ? schemes[requirements.scheme] : undefined;
  if (!scheme) throw new Error(`No payment scheme ${requirements.scheme} is registered (startup/compose-payments.ts)`);
  return scheme;
}

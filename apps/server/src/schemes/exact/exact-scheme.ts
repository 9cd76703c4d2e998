/**
 * The `exact` scheme on EVM chains as a plug-in of the paid call (paid-call/payment-scheme.ts): an EIP-3009
 * authorization of exactly the price, read by ./payment-payload.ts and its signer recovered once
 * (./authorization-signer.ts). Its facilitator (./exact-evm-facilitator.ts) and its reconciler
 * (./reconcile-settlements.ts) are composed beside it (startup/compose-payments.ts, startup/compose.ts).
 */

import type { PaymentRequirements } from "@agent-tools/schema";
import { getAddress } from "viem";
import {
  decodePayment,
  type ReadPayment,
  type ReadPaymentOptions,
  readDecodedPayment,
} from "../../paid-call/payment-payload.js";
import type { PaymentScheme } from "../../paid-call/payment-scheme.js";
import { type AuthorizationSigner, createAuthorizationSigner } from "./authorization-signer.js";
import {
  eip3009PayloadSchema,
  eip3009PaymentKey,
  paymentKey,
  readAuthorization,
  SETTLEMENT_MARGIN_SECONDS,
} from "./payment-payload.js";

export interface ExactSchemeParameters {
  /** Who signed a payment, recovered once per payment (shared with the built-in facilitator). */
  signer?: AuthorizationSigner;
  /**
   * Seconds an authorization must still be valid for when its call is admitted: time to run the tool and settle,
   * plus the settlement batch's window (`settlementMarginSeconds`).
   */
  marginSeconds?: number;
}

export function createExactScheme(parameters: ExactSchemeParameters = {}): PaymentScheme {
  const signer = parameters.signer ?? createAuthorizationSigner();
  const marginSeconds = parameters.marginSeconds ?? SETTLEMENT_MARGIN_SECONDS;
  return {
    scheme: "exact",
    read: (payment, quoted, now) => {
      const read = readAuthorization(payment, quoted, now, marginSeconds);
      if (!read.ok) return read;
      return {
        ...read,
        key: eip3009PaymentKey(payment.accepted.network, payment.accepted.asset, read.from, read.nonce),
      };
    },
    payerOf: (payment) => {
      const parsed = eip3009PayloadSchema.safeParse(payment.payload);
      return parsed.success ? getAddress(parsed.data.authorization.from) : undefined;
    },
    keyOf: paymentKey,
    signer,
  };
}

/**
 * Reads an `exact` payment sent with a call (a `PAYMENT-SIGNATURE` value or the payload object) against the
 * requirement quoted, as a paid call does: see `readDecodedPayment` (paid-call/payment-payload.ts).
 */
export function readPayment(
  sent: string | Record<string, unknown> | undefined,
  quoted: PaymentRequirements,
  now: Date,
  options: ReadPaymentOptions & { marginSeconds?: number } = {},
): ReadPayment {
  const scheme = createExactScheme({ marginSeconds: options.marginSeconds ?? SETTLEMENT_MARGIN_SECONDS });
  return readDecodedPayment(sent === undefined ? undefined : decodePayment(sent), quoted, now, scheme, options);
}

import { createHash } from "node:crypto";
import type { PaymentRequirements } from "@agent-tools/schema";
import { decodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import type { RequestHandler } from "express";
import { getAddress } from "viem";
import type { PaymentService } from "../payment/payment-service.js";
import { callState } from "./call-state.js";
import { recordTiming } from "./server-timing.js";

/** The fields of a requirement that decide what is paid; the signed `accepted` must match them exactly. */
function mismatch(accepted: PaymentPayload["accepted"] | undefined, quoted: PaymentRequirements): string | undefined {
  if (!accepted) return "the payment names no accepted requirement";
  const same = (a: unknown, b: unknown) => String(a).toLowerCase() === String(b).toLowerCase();
  for (const field of ["scheme", "network", "asset", "amount", "payTo"] as const) {
    if (!same(accepted[field], quoted[field])) {
      return `the payment's ${field} is ${String(accepted[field])}, the price quoted has ${quoted[field]}`;
    }
  }
  const extra = (accepted.extra ?? {}) as Record<string, unknown>;
  if (extra.name !== quoted.extra.name || extra.version !== quoted.extra.version) {
    return "the payment is signed for another asset domain (extra.name / extra.version)";
  }
  return undefined;
}

interface Eip3009Authorization {
  from?: string;
  nonce?: string;
  validBefore?: string;
}

/** One key per payment authorization: the EIP-3009 (payer, nonce) pair, else a digest of the payload. */
function replayKey(payload: PaymentPayload): string {
  const authorization = (payload.payload as { authorization?: { from?: string; nonce?: string } }).authorization;
  if (authorization?.from && authorization.nonce) {
    return `eip3009:${payload.accepted.network}:${payload.accepted.asset}:${authorization.from}:${authorization.nonce}`.toLowerCase();
  }
  return `payload:${createHash("sha256").update(JSON.stringify(payload.payload)).digest("hex")}`;
}

/**
 * Step 5, pay: without a `PAYMENT-SIGNATURE`, 402 quoting the caller's price point. With one: it must be an
 * x402 v2 payment of exactly that requirement, not in use by another request and not used before, and the
 * facilitator must verify it. The payment (and the sign-in nonce) stay claimed until the call settles or fails.
 */
export function requirePayment(payments: PaymentService): RequestHandler {
  return async (req, res, next) => {
    const state = callState(res);
    const { route, price } = state as Required<typeof state>;
    const refuse = (error: string) => payments.challenge(res, route, price.point, error);
    const header = req.get("payment-signature");
    if (!header) return refuse("payment_required: pay with x402 (PAYMENT-SIGNATURE)");

    let payload: PaymentPayload;
    try {
      payload = decodePaymentSignatureHeader(header);
    } catch {
      return refuse("invalid_payment: PAYMENT-SIGNATURE is not a base64 JSON x402 payment");
    }
    if (payload.x402Version !== 2)
      return refuse(`invalid_payment: x402 version ${payload.x402Version}; this service speaks version 2`);
    const wrong = mismatch(payload.accepted, price.requirements);
    if (wrong) return refuse(`invalid_payment: ${wrong}`);

    const key = replayKey(payload);
    if (!payments.payments.claim(key)) {
      return refuse(
        payments.payments.isUsed(key)
          ? "payment_already_used: this payment authorization already bought a call"
          : "payment_in_use: this payment authorization is being used by another request",
      );
    }
    if (state.signInNonce && !payments.signInNonces.claim(state.signInNonce)) {
      payments.payments.release(key);
      return refuse("invalid_siwx: invalid_siwx_nonce: this sign-in nonce is already used by another call");
    }
    const giveBack = () => {
      payments.payments.release(key);
      if (state.signInNonce) payments.signInNonces.release(state.signInNonce);
    };

    let verified: Awaited<ReturnType<typeof payments.facilitator.verify>>;
    const started = performance.now();
    try {
      verified = await payments.facilitator.verify(payload, price.requirements as never);
    } catch (error) {
      giveBack();
      throw error;
    } finally {
      recordTiming(res, "verify", performance.now() - started);
    }
    if (!verified.isValid) {
      giveBack();
      return refuse(
        `invalid_payment: ${verified.invalidReason ?? "rejected"}${verified.invalidMessage ? `: ${verified.invalidMessage}` : ""}`,
      );
    }
    // The durable claim: shared by every instance and kept across restarts, it is also the ledger's row.
    const authorization = (payload.payload as { authorization?: Eip3009Authorization }).authorization;
    const payer = getAddress(verified.payer ?? authorization?.from ?? "0x0000000000000000000000000000000000000000");
    let claimed: Awaited<ReturnType<typeof payments.ledger.claim>>;
    try {
      claimed = await payments.ledger.claim({
        paymentKey: key,
        route: route.path,
        method: req.method === "GET" ? "GET" : "POST",
        tokenId: state.params!.tokenId,
        payer,
        nonce: authorization?.nonce ?? "",
        caller: state.caller ?? null,
        pricePoint: price.point,
        amount: price.requirements.amount,
        asset: price.requirements.asset,
        network: price.requirements.network,
        payTo: price.requirements.payTo,
        validBefore: authorization?.validBefore
          ? new Date(Number(authorization.validBefore) * 1000)
          : new Date(Date.now() + price.requirements.maxTimeoutSeconds * 1000),
        requestId: String(req.id ?? ""),
      });
    } catch (error) {
      giveBack();
      throw error;
    }
    if (claimed !== "claimed") {
      giveBack();
      if (claimed === "used") payments.payments.consume(key);
      return refuse(
        claimed === "used"
          ? "payment_already_used: this payment authorization already bought a call"
          : "payment_in_use: this payment authorization is being used by another request, or its settlement is being confirmed",
      );
    }
    state.payment = {
      payload,
      replayKey: key,
      payer,
      async release(options = {}) {
        giveBack();
        if (!options.keepClaim) await payments.ledger.release(key);
      },
    };
    next();
  };
}

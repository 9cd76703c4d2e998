/**
 * The HTTP face of a paid call: reads the request into the transport-free use case (paid-call/serve-paid-call.ts)
 * and writes its result: 402 with x402's `PaymentRequired`, or the answer with `PAYMENT-RESPONSE`.
 */
import type { PaidRouteName, PaymentRequired } from "@agent-tools/schema";
import { encodePaymentResponseHeader } from "@x402/core/http";
import type { SettleResponse } from "@x402/core/types";
import type { Request, RequestHandler, Response } from "express";
import { ServiceError } from "../../errors/service-error.js";
import type { StepTimings } from "../../paid-call/paid-call-types.js";
import { type ServePaidCallDeps, servePaidCall } from "../../paid-call/serve-paid-call.js";

/**
 * Answers 402 with the PaymentRequired JSON as the body and, base64, in the `PAYMENT-REQUIRED` header (serialized
 * once for both: what `encodePaymentRequiredHeader` makes, without its byte-by-byte encoder).
 */
export function sendPaymentRequired(res: Response, paymentRequired: PaymentRequired): void {
  const json = JSON.stringify(paymentRequired);
  res.setHeader("PAYMENT-REQUIRED", Buffer.from(json, "utf8").toString("base64"));
  res.setHeader("Cache-Control", "no-store");
  res.status(402).type("application/json").send(json);
}

/** `validate;dur=0.12, identify;dur=1.51, ...` */
export function serverTiming(timings: StepTimings): string {
  return timings.map(([name, ms]) => `${name};dur=${ms.toFixed(2)}`).join(", ");
}

/** The payment a request carries: `PAYMENT-SIGNATURE` (x402 v2), else x402 v1's `X-PAYMENT`, to be told so. */
function paymentOf(req: Request): { payment?: string; paymentInVersion1Header?: boolean } {
  const payment = req.get("payment-signature");
  if (payment !== undefined) return { payment };
  const legacy = req.get("x-payment");
  return legacy === undefined ? {} : { payment: legacy, paymentInVersion1Header: true };
}

export type PaidRouteDeps = ServePaidCallDeps;

/** One paid route, POST (JSON body) or GET (query parameters). */
export function paidRoute(name: PaidRouteName, deps: PaidRouteDeps): RequestHandler {
  return async (req, res) => {
    const isGet = req.method === "GET";
    if (!isGet && !req.is("application/json")) {
      throw new ServiceError(
        "invalid_request",
        "Send the request as a JSON object with Content-Type: application/json.",
        [{ field: "", message: "expected a JSON body" }],
      );
    }
    const signIn = req.get("sign-in-with-x");
    const result = await servePaidCall(deps, name, {
      input: isGet ? req.query : req.body,
      inputFrom: isGet ? "query" : "body",
      ...(signIn !== undefined ? { signIn } : {}),
      ...paymentOf(req),
      method: isGet ? "GET" : "POST",
      requestId: String(req.id ?? ""),
    });
    if (result.kind === "payment_required") return sendPaymentRequired(res, result.refusal.paymentRequired);
    if (result.timings) res.setHeader("Server-Timing", serverTiming(result.timings));
    sendPaidAnswer(res, result.status, result.output, result.settlement);
  };
}

/** A paid answer with its settlement in `PAYMENT-RESPONSE`. */
function sendPaidAnswer(res: Response, status: number, output: unknown, settlement: SettleResponse): void {
  res.setHeader("PAYMENT-RESPONSE", encodePaymentResponseHeader(settlement));
  res.setHeader("Cache-Control", "no-store");
  res.status(status).json(output);
}

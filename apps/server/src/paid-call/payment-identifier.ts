/**
 * x402's payment-identifier extension (`@x402/extensions/payment-identifier`), on the service's side: a paid call
 * whose payment names an identifier keeps its answer with its settlement, and the same identifier with the same
 * payment and request gets that answer again, without a second charge, on any instance and after a restart; the
 * same identifier with another payment or request is refused with 409 (docs/decisions.md, "Paid once").
 */
import { createHash } from "node:crypto";
import type { PaymentRequirements, ToolRoute } from "@agent-tools/schema";
import type { PaymentPayload, SettleResponse } from "@x402/core/types";
import {
  declarePaymentIdentifierExtension,
  extractAndValidatePaymentIdentifier,
  PAYMENT_IDENTIFIER,
} from "@x402/extensions/payment-identifier";
import type { Address } from "viem";
import { ServiceError, uncharged } from "../errors/service-error.js";
import { ANSWER_RETENTION_MS, type IdentifiedPayment, type KeptAnswer } from "../store/settlement-ledger.js";
import { checkPayer } from "./payer-checks.js";
import type { DecodedPayment } from "./payment-payload.js";
import { schemeOf } from "./payment-scheme.js";
import type { PaymentService } from "./payment-service.js";

/**
 * The payment with its identifier's `info` only. A client echoes the 402's declaration, JSON schema included, and
 * x402's validation compiles whatever schema the payment carries (a new Ajv compile per call, 20 ms of CPU, and a
 * schema of the payer's choosing). The identifier is checked by x402's own rules instead, which are the ones the
 * declared schema states: `required` a boolean, `id` 16 to 128 letters, digits, `-` or `_`.
 */
function withoutEchoedSchema(payload: PaymentPayload): PaymentPayload {
  const extension = payload.extensions?.[PAYMENT_IDENTIFIER];
  if (!extension || typeof extension !== "object" || !("schema" in extension)) return payload;
  const { schema: _echoed, ...rest } = extension as Record<string, unknown>;
  return { ...payload, extensions: { ...payload.extensions, [PAYMENT_IDENTIFIER]: rest } };
}

/** What the 402 declares under `extensions["payment-identifier"]`: supported, not required. */
export function paymentIdentifierDeclaration(): Record<string, unknown> {
  return { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) };
}

/** The identifier a call names and a digest of what it asks: the same identifier must always ask the same. */
export interface CallIdentifier {
  paymentId: string;
  requestHash: string;
}

/** What a paid call's answer was: kept for its identifier, and what a transport answers again. */
export interface AnsweredAgain {
  status: number;
  output: unknown;
  settlement: SettleResponse;
}

/** A digest of the request a paid call makes: its route, its validated input and who signed in. */
export function requestHash(route: ToolRoute, params: Record<string, unknown>, caller: Address | undefined): string {
  return createHash("sha256")
    .update(JSON.stringify([route.path, "method" in route ? route.method : null, params, caller ?? null]))
    .digest("hex");
}

/** The answer to keep for a settled call. */
export function keptAnswer(answer: { status: number; output: unknown }, settlement: SettleResponse): KeptAnswer {
  return { status: answer.status, output: answer.output, settlement: { ...settlement } };
}

/**
 * What an identified payment says of a call, read before the payment is checked as new (an answer may be given
 * again after the authorization's own validity ended):
 * - `new`: no identifier, or one the ledger does not know (or knows as pending: the claim then says it is in use);
 * - `answer`: the call was paid and answered; here is the answer again;
 * - `run_again`: the call was paid, but cut before its answer was kept; run it again, at no charge.
 * Throws 400 for a malformed identifier, 409 when it names another payment or request, 410 when its answer is
 * forgotten.
 */
export type Recall =
  | { kind: "new"; identifier?: CallIdentifier }
  | { kind: "answer"; answer: AnsweredAgain }
  | {
      kind: "run_again";
      identifier: CallIdentifier;
      payload: PaymentPayload;
      key: string;
      payer: Address;
      settlement: SettleResponse;
    }
  | { kind: "refused"; sentence: string };

export async function recall(
  payments: PaymentService,
  decoded: DecodedPayment | undefined,
  call: {
    route: ToolRoute;
    params: Record<string, unknown>;
    caller: Address | undefined;
    requirements: PaymentRequirements;
    /** The payment's field in the caller's transport, as a refusal names it. */
    paymentField?: string;
  },
): Promise<Recall> {
  if (decoded?.kind !== "payment" || decoded.payload.extensions?.[PAYMENT_IDENTIFIER] === undefined) {
    return { kind: "new" };
  }
  const { payload } = decoded;
  const { id, validation } = extractAndValidatePaymentIdentifier(withoutEchoedSchema(payload));
  if (!validation.valid) {
    throw new ServiceError(
      "invalid_request",
      uncharged("The payment's identifier is malformed: it must be 16 to 128 letters, digits, hyphens or underscores."),
      // The extension's own validation text goes nowhere: the service says what an identifier must be.
      [
        {
          field: `extensions.${PAYMENT_IDENTIFIER}.info.id`,
          message: "must be 16 to 128 letters, digits, hyphens or underscores",
        },
      ],
    );
  }
  // The service's own declaration echoed back without an id: a call like any other.
  if (!id) return { kind: "new" };
  const identifier = { paymentId: id, requestHash: requestHash(call.route, call.params, call.caller) };
  const scheme = schemeOf(payments.schemes, call.requirements);
  const payer = scheme.payerOf(payload);
  if (!payer) return { kind: "new", identifier };
  const known = await payments.ledger.identified(payer, id);
  if (!known) return { kind: "new", identifier };
  // Nothing is said of a payer's identifier, nor handed out, before the payment is known to be the payer's own.
  const checked = await checkPayer(payments, scheme, payload, call.requirements, payer, call.caller, call.paymentField);
  if (!checked.ok) return { kind: "refused", sentence: checked.sentence };
  const key = scheme.keyOf(payload);
  if (known.paymentKey !== key || known.requestHash !== identifier.requestHash) throw conflict(id, known, key);
  if (known.status === "pending") return { kind: "new", identifier };
  if (known.answer) {
    const { status, output, settlement } = known.answer;
    return { kind: "answer", answer: { status, output, settlement: settlement as SettleResponse } };
  }
  if (known.answeredAt) {
    throw new ServiceError(
      "answer_expired",
      `The answer to payment identifier ${id} was kept for ${ANSWER_RETENTION_MS / 60_000} minutes and is no ` +
        "longer kept; the payment was settled once and is not taken again. Make a new call with a new identifier.",
      [{ field: `extensions.${PAYMENT_IDENTIFIER}.info.id`, message: "answer no longer kept" }],
    );
  }
  return {
    kind: "run_again",
    identifier,
    payload,
    key,
    payer,
    settlement: {
      success: true,
      transaction: known.transaction ?? "",
      network: known.network as SettleResponse["network"],
      payer,
      amount: known.amount,
    },
  };
}

/** 409: the payer's identifier was taken by another payment meanwhile (two calls named it at once). */
export function identifierTaken(id: string): ServiceError {
  return new ServiceError(
    "payment_identifier_conflict",
    uncharged(`The payment identifier ${id} names another payment of this payer; use a new identifier for a new call.`),
    [{ field: `extensions.${PAYMENT_IDENTIFIER}.info.id`, message: "used with another payment" }],
  );
}

function conflict(id: string, known: IdentifiedPayment, key: string): ServiceError {
  const what = known.paymentKey !== key ? "another payment" : "another request";
  return new ServiceError(
    "payment_identifier_conflict",
    uncharged(
      `The payment identifier ${id} was used with ${what}; an identifier names one paid call. Send the same ` +
        "payment and request to have that call's answer again, or a new identifier for a new call.",
    ),
    [{ field: `extensions.${PAYMENT_IDENTIFIER}.info.id`, message: `used with ${what}` }],
  );
}

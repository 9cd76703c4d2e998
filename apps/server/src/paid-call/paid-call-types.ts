/** The shapes of a paid call, transport-free: what a transport hands over, and what it gets back (./paid-call.ts). */
import type {
  CountedWork,
  PaymentRefusalReason,
  PaymentRequired,
  PaymentRequirements,
  PricePoint,
  ToolRoute,
} from "@agent-tools/schema";
import type { PaymentPayload, SettleResponse } from "@x402/core/types";
import type { Address } from "viem";
import type { CollectionIndex, IndexedToken } from "../chain/collection-index.js";
import type { Slot } from "../limits/call-limiter.js";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import type { CallMethod } from "./challenge.js";
import type { AnsweredAgain, CallIdentifier } from "./payment-identifier.js";
import type { SchemeHold } from "./payment-scheme.js";
import type { PaymentService } from "./payment-service.js";
import type { RefusalCounts } from "./refusal-counts.js";

/** A request for a paid route, as any transport hands it over. */
export interface PaidCallRequest {
  route: ToolRoute;
  /** The request's fields: a JSON body, or query parameters (strings, coerced by the route's schema). */
  input: unknown;
  inputFrom: "body" | "query";
  /**
   * The caller's sign-in, when it signed in: the `SIGN-IN-WITH-X` header's value (base64 JSON), or the payload as
   * a value where the transport carries one (MCP's `_meta`, an A2A message's metadata).
   */
  signIn?: unknown;
  /** The payment: a `PAYMENT-SIGNATURE` value (base64 JSON) or the payload object itself. */
  payment?: string | Record<string, unknown>;
  /** True when the payment came in x402 version 1's `X-PAYMENT` header. */
  paymentInVersion1Header?: boolean;
  method: CallMethod;
  /** Kept with the ledger's row. */
  requestId: string;
}

/** Milliseconds each step took, in order (`Server-Timing`). */
export type StepTimings = [step: string, ms: number][];

/** A call that passed every step: its payment is verified and claimed until it is settled or released. */
export interface AdmittedCall {
  route: ToolRoute;
  method: CallMethod;
  /** The request validated by the route's schema, defaults applied. */
  params: { tokenId: number } & Record<string, unknown>;
  /** The signed-in caller, when a valid sign-in came with the request. */
  caller?: Address;
  token: IndexedToken;
  price: { point: PricePoint; requirements: PaymentRequirements };
  payment: {
    payload: PaymentPayload;
    key: string;
    payer: Address;
    /** Set when the scheme holds the payment itself (a channel): it settles or releases it, not the facilitator. */
    hold?: SchemeHold;
  };
  timings: StepTimings;
  /** The sign-in nonce, spent once the call is served. */
  signInNonce?: string;
  /** The request's id, in every log line about its payment. */
  requestId: string;
  /** The payer's slot (payer limits), given back when the call is settled or released. */
  slot: Slot;
  /** The payment identifier the call named: its answer is kept with its settlement. */
  identifier?: CallIdentifier;
  /**
   * Tells the settlements ahead (`PaymentService.settlementsAhead`) that this call's settlement is asked for, or
   * will never be: once, when it is settled or released. Absent for a call paid before.
   */
  settlementAsked?: () => void;
  /**
   * Set when the call was paid before and cut before its answer was kept: it runs again at no charge, and this
   * settlement is what it answers with.
   */
  paidBefore?: SettleResponse;
}

/** Why a call was answered 402, and the x402 `PaymentRequired` to answer with. */
export interface Refusal {
  reason: PaymentRefusalReason;
  paymentRequired: PaymentRequired;
}

/**
 * What `admit` decided: a call to run; a refusal; or the answer of a call this very payment and request already paid
 * for under a payment identifier, to be given again as it was (./payment-identifier.ts).
 */
export type Admission =
  | { admitted: true; call: AdmittedCall }
  | { admitted: false; refusal: Refusal }
  | { admitted: false; answered: AnsweredAgain };
export type Settlement = { settled: true; settlement: SettleResponse } | { settled: false; refusal: Refusal };

export interface PaidCalls {
  /** Validate, identify, policy, price, pay. Throws `ServiceError` for a request that no payment can make right. */
  admit(request: PaidCallRequest): Promise<Admission>;
  /**
   * Takes the payment of a call whose tool answered; the ledger records it (and the answer, for a call that named a
   * payment identifier) before this resolves.
   */
  /** `answer.work`: what the tool counted, which a metered payment is charged by. */
  settle(call: AdmittedCall, answer: { status: number; output: unknown; work?: CountedWork }): Promise<Settlement>;
  /** Gives the payment and the sign-in back: the tool failed, so the call costs nothing. */
  release(call: AdmittedCall): Promise<void>;
}

export interface PaidCallDeps {
  payments: PaymentService;
  collection: CollectionIndex;
  /** Counts calls by outcome, amounts settled and refusals (metrics). */
  metrics?: Pick<ServiceMetrics, "paidCalls" | "settledAmount" | "refusals">;
  /** Counts refusals by reason, metrics or not (the operator console shows them). */
  refusalCounts?: RefusalCounts;
}

/** What the steps of a paid call share (./admit-call.ts, ./settle-call.ts). */
export interface PaidCallContext {
  payments: PaymentService;
  collection: CollectionIndex;
  metrics?: PaidCallDeps["metrics"];
  /** Answers 402 with a reason, counted (./refuse.ts). */
  refuse: Refuse;
}

/** Refuses a call with 402: its reason and sentence in x402's `PaymentRequired`, quoting `point` (counted). */
export type Refuse = (
  route: ToolRoute,
  method: CallMethod,
  point: PricePoint | undefined,
  reason: PaymentRefusalReason,
  sentence: string,
  /** Fields the scheme adds to its requirement's `extra` (a channel's corrective state), keyed by scheme. */
  extra?: { scheme: string; fields: Record<string, unknown> },
) => { admitted: false; settled: false; refusal: Refusal };

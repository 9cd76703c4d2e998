import type { Clearance, ErrorBody, ErrorCode, PaymentRefusalReason, PaymentRequired } from "@agent-tools/schema";
import type { LimitExceeded } from "./limits.js";

/**
 * What went wrong, as code can switch on it: the service's error codes (`invalid_request`, `upstream_timeout`, ...),
 * and the client's own for what never got a service's answer: `payment_required` (a 402 the client would not or
 * could not pay, see `PaymentRequiredError.reason`), `network_error`, `unexpected_response`, `invalid_receipt`
 * (a paid answer whose signed receipt does not hold), `channel_refused` (a channel operation, such as a
 * refund, that could not be done), and `invalid_private_key` (`accountFromPrivateKey` was given
 * something that is not a private key).
 */
export type AgentToolsErrorCode =
  | ErrorCode
  | "payment_required"
  | "network_error"
  | "unexpected_response"
  | "invalid_receipt"
  | "invalid_private_key"
  | "channel_refused";

/** Base class of every error the client throws; `code` says which kind it is. */
export abstract class AgentToolsError extends Error {
  abstract readonly code: AgentToolsErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

type Detail = ErrorBody["error"]["details"][number];

/** An error answer of the service (its status, `code` and details). */
export class ServiceError extends AgentToolsError {
  /**
   * @param message The service's sentence (what went wrong, what to do).
   * @param status The HTTP status.
   * @param code The error body's code.
   * @param details The offending fields, by dotted path.
   */
  constructor(
    message: string,
    readonly status: number,
    readonly code: ErrorCode,
    readonly details: Detail[] = [],
  ) {
    super(message);
  }
}

/** 400: the request is invalid; `fields` names each offending field. Also thrown before sending, on local validation. */
export class ValidationError extends ServiceError {
  /** The offending fields' dotted paths. */
  get fields(): string[] {
    return this.details.map((d) => d.field);
  }
}

/**
 * Why the client stopped before signing anything: the quote is above `maxPaymentPerCall` (`over_max_payment`), the
 * call would deposit more than `maxDeposit` into a payment channel (`over_max_deposit`), it would take the last 24
 * hours past `maxPerDay` (`over_daily_limit`) or the client past its `budget` (`over_budget`), there is no account to
 * pay with (`no_account`), the service quoted no price it could pay (`no_price`), or it offers no sign-in with
 * Ethereum (`no_sign_in`).
 */
export type ClientRefusalReason =
  | "over_max_payment"
  | "over_max_deposit"
  | "over_daily_limit"
  | "over_budget"
  | "no_account"
  | "no_price"
  | "no_sign_in";

/**
 * 402 the client would not or could not pay. `reason` says why, typed: one of the service's refusal reasons
 * (`payment_in_use`, `invalid_siwx`, ...), or the client's own ({@link ClientRefusalReason}).
 */
export class PaymentRequiredError extends AgentToolsError {
  readonly code = "payment_required" as const;
  /**
   * @param message What was refused and why.
   * @param quote The service's quote (x402 PaymentRequired).
   * @param reason Why: the service's reason, or the client's; undefined when a service gave none this client knows.
   * @param limit For a refusal over one of the caller's limits: which, how large, and by how much.
   */
  constructor(
    message: string,
    readonly quote: PaymentRequired | undefined,
    readonly reason?: PaymentRefusalReason | ClientRefusalReason,
    readonly limit?: LimitExceeded,
  ) {
    super(message);
  }
}

/**
 * 401 (`sign_in_required`): the route needs a sign-in and the request had none, or the service did not accept it.
 * Also thrown before anything is sent when the client has no account to sign in with.
 */
export class UnauthorizedError extends ServiceError {}

/**
 * 403: the signed-in caller does not own the token (`not_token_owner`), its clearance is below `requiredClearance`
 * (`insufficient_clearance`), the agent is not revealed yet (`agent_not_revealed`, mission queue), or the caller is
 * not the operator (`not_operator`, ledger).
 */
export class ForbiddenError extends ServiceError {
  /** The clearance the route needs, when the refusal is `insufficient_clearance`. */
  get requiredClearance(): Clearance | undefined {
    return this.details.find((d) => d.requiredClearance)?.requiredClearance;
  }
}

/** 404: no such token, agent not revealed, or no such route. */
export class NotFoundError extends ServiceError {}

/** 5xx: the service or one of its upstream sources failed; nothing was charged. */
export class UpstreamError extends ServiceError {
  /**
   * @param retryAfterSeconds Seconds to wait before retrying, from `Retry-After`.
   */
  constructor(
    message: string,
    status: number,
    code: ErrorCode,
    details: Detail[] = [],
    readonly retryAfterSeconds?: number,
  ) {
    super(message, status, code, details);
  }
}

/** The service could not be reached (connection refused, DNS, reset, timeout), after the client's retries. */
export class NetworkError extends AgentToolsError {
  readonly code = "network_error" as const;
}

/** The service answered with something the contract does not allow. */
export class UnexpectedResponseError extends AgentToolsError {
  readonly code = "unexpected_response" as const;
  /**
   * @param status The HTTP status of the answer.
   * @param body The answer's body, as read (JSON, or the text when it was not JSON).
   */
  constructor(
    message: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(message);
  }
}

/**
 * A paid call was answered with a signed receipt that does not hold (x402 offer-receipt): signed by another key than
 * the offer's or the trusted one, or naming another payer, resource, network or transaction. The call was paid and
 * answered: `answer` holds what it returned (its data and payment), to keep or to report.
 */
export class InvalidReceiptError extends AgentToolsError {
  readonly code = "invalid_receipt" as const;
  /**
   * @param message What does not hold.
   * @param answer The call's answer and payment, as they came.
   */
  constructor(
    message: string,
    readonly answer: unknown,
  ) {
    super(message);
  }
}

/**
 * `accountFromPrivateKey` was given something that is not a private key: its message says what is wrong with it (its
 * form, its length, its range), never the key itself.
 */
export class InvalidPrivateKeyError extends AgentToolsError {
  readonly code = "invalid_private_key" as const;
}

/**
 * A payment channel's operation could not be done: the client pays over no channel, holds none with this service,
 * or the service refused it (nothing left to refund, a call holding the channel). The message says which.
 */
export class ChannelError extends AgentToolsError {
  readonly code = "channel_refused" as const;
}

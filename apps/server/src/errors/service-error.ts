import { type ErrorBody, type ErrorCode, errorCodes, errorDetailsOf } from "@agent-tools/schema";
import type { z } from "zod";

type ErrorDetail = ErrorBody["error"]["details"][number];

/**
 * The service's domain error: a code of the API's error list, a message for the caller, the offending fields. Thrown
 * by tools, checks and upstream clients; each transport renders it (HTTP: its status and JSON error body; MCP and
 * A2A: the same body in their own envelope).
 */
export class ServiceError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
    /** The status, when a route answers this code with another than its usual one. */
    status?: number,
  ) {
    super(message);
    this.name = "ServiceError";
    this.status = status ?? errorCodes[code];
  }
}

/**
 * A caller's value quoted in a refusal: whole, or its first `max` characters and an ellipsis that says it goes on
 * (a refusal never ends in a value cut without a mark).
 */
export function clipped(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

/**
 * A refusal's message, ending with what every failed call of this service can say: it cost the caller nothing
 * (docs/decisions.md, "Access, identity and price"). `then`: what to do next ("retry in 5 s").
 */
export function uncharged(message: string, then?: string): string {
  return `${message} Nothing was charged${then ? `; ${then}` : ""}.`;
}

/**
 * 400 `invalid_request` naming every offending field of a failed Zod parse; an issue with the whole value (no field)
 * is said of it ("it must be an object").
 */
export function validationError(error: z.ZodError, where = "request"): ServiceError {
  const details = errorDetailsOf(error);
  const summary = details.map((d) => (d.field ? `${d.field}: ${d.message}` : `it ${d.message}`)).join("; ");
  return new ServiceError("invalid_request", `The ${where} is invalid: ${summary}.`, details);
}

/** The API's JSON error body of an error. */
export function errorBody(error: ServiceError): ErrorBody {
  return { error: { code: error.code, message: error.message, details: error.details } };
}

/** A `ServiceError` as it is; anything else as an internal error saying `failed` (its detail is for the log only). */
export function toServiceError(error: unknown, failed: string): ServiceError {
  return error instanceof ServiceError ? error : new ServiceError("internal_error", uncharged(failed));
}

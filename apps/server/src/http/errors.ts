import { type ErrorBody, type ErrorCode, errorCodes, errorDetailsOf } from "@agent-tools/schema";
import type { Response } from "express";
import type { z } from "zod";

type ErrorDetail = ErrorBody["error"]["details"][number];

/** An error that becomes a JSON error body with its status; thrown by routes, tools and middleware. */
export class HttpError extends Error {
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
    this.name = "HttpError";
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
export function validationError(error: z.ZodError, where = "request"): HttpError {
  const details = errorDetailsOf(error);
  const summary = details.map((d) => (d.field ? `${d.field}: ${d.message}` : `it ${d.message}`)).join("; ");
  return new HttpError("invalid_request", `The ${where} is invalid: ${summary}.`, details);
}

export function sendError(res: Response, error: HttpError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const body: ErrorBody = { error: { code: error.code, message: error.message, details: error.details } };
  res.status(error.status).json(body);
}

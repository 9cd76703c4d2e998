import { z } from "zod";
import { clearanceSchema } from "./primitives.js";

/** Every error code the service answers with, by the status it comes with. */
export const errorCodes = {
  invalid_request: 400,
  malformed_json: 400,
  not_b20_address: 400,
  sign_in_required: 401,
  payload_too_large: 413,
  unsupported_media_type: 415,
  not_token_owner: 403,
  insufficient_clearance: 403,
  not_operator: 403,
  forbidden_origin: 403,
  agent_not_revealed: 404,
  token_not_found: 404,
  collection_not_found: 404,
  market_not_found: 404,
  not_found: 404,
  unknown_tool: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  payment_identifier_conflict: 409,
  answer_expired: 410,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  not_implemented: 501,
  upstream_error: 502,
  upstream_unavailable: 503,
  upstream_timeout: 504,
} as const;
/** One of the service's error codes (the keys of {@link errorCodes}). */
export type ErrorCode = keyof typeof errorCodes;

/**
 * One offending field of an error answer: its dotted path, what is wrong, and for a clearance refusal the clearance
 * needed.
 */
export const errorDetailSchema = z
  .object({
    field: z
      .string()
      .meta({ description: "Dotted path of the offending field (empty for the whole body).", example: "tokenId" }),
    message: z.string(),
    requiredClearance: clearanceSchema.optional(),
  })
  .meta({ id: "ErrorDetail" });

/** One offending field of an error answer (see {@link errorDetailSchema}). */
export type ErrorDetail = z.infer<typeof errorDetailSchema>;

/**
 * The details of an error body for a request that failed its schema: one per issue, naming the field by its dotted
 * path. The service answers them, and the SDK throws them for a request it refuses before sending.
 */
export function errorDetailsOf(error: z.ZodError): ErrorDetail[] {
  return error.issues.map((issue) => ({ field: issue.path.map(String).join("."), message: issue.message }));
}

/** Body of every non-2xx answer except 402 (which carries x402's PaymentRequired). */
export const errorBodySchema = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(errorCodes) as [ErrorCode, ...ErrorCode[]]),
      message: z.string().meta({ description: "A sentence saying what went wrong and what to do." }),
      details: z.array(errorDetailSchema),
    }),
  })
  .meta({ id: "Error" });
/** The body of an error answer: `{ error: { code, message, details } }`. */
export type ErrorBody = z.infer<typeof errorBodySchema>;

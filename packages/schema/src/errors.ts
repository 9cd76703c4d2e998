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
  payment_not_found: 404,
  unknown_tool: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  payment_identifier_conflict: 409,
  refund_taken: 409,
  answer_expired: 410,
  refund_transaction_not_found: 422,
  refund_transaction_failed: 422,
  refund_transfer_not_found: 422,
  refund_exceeds_payment: 422,
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

/** What a value of each Zod type is called in a message. */
const typeWords: Record<string, string> = {
  string: "text",
  number: "a number",
  int: "a whole number",
  bigint: "a whole number",
  boolean: "true or false",
  array: "a list",
  object: "an object",
  date: "a date",
};

/** How a bound is said for what it bounds: a number, the length of a text, the size of a list. */
function bound(origin: string, limit: unknown, inclusive: boolean | undefined, most: boolean): string {
  const n = Number(limit);
  if (origin === "string") return `${most ? "at most" : "at least"} ${n} character${n === 1 ? "" : "s"} long`;
  if (origin === "array" || origin === "set") return `${most ? "at most" : "at least"} ${n} item${n === 1 ? "" : "s"}`;
  if (inclusive === false) return `${most ? "less" : "more"} than ${n}`;
  return `${most ? "at most" : "at least"} ${n}`;
}

/**
 * The service's wording of a request's validation issues, where a field's schema gives no message of its own: what
 * is wrong and what would be right, in words a person reads ("is required", "must be at most 50"), not Zod's
 * ("Too big: expected number to be <=50"). Pass it as the `error` of a parse (see {@link safeParseRequest}); a
 * schema's own message still wins.
 *
 * @example
 * import { requestErrorMap, toolRoutes as routes } from "@agent-tools/schema";
 * const result = routes.intel.request.safeParse({}, { error: requestErrorMap });
 */
export const requestErrorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      return `must be ${typeWords[issue.expected] ?? issue.expected}`;
    case "too_big":
      return `must be ${bound(issue.origin, issue.maximum, issue.inclusive, true)}`;
    case "too_small":
      if (issue.origin === "string" && Number(issue.minimum) === 1) return "must not be empty";
      return `must be ${bound(issue.origin, issue.minimum, issue.inclusive, false)}`;
    case "invalid_value":
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(", ")}`;
    case "invalid_format":
      if (issue.format === "datetime") return "must be a date and time like 2026-11-23T08:00:00Z";
      if (issue.format === "date") return "must be a date like 2026-11-23";
      if (issue.format === "regex") return "is not in the expected form";
      return `must be a valid ${issue.format}`;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    case "unrecognized_keys":
      return `has ${issue.keys.length === 1 ? "a field" : "fields"} this request does not take: ${issue.keys.join(", ")}`;
    case "invalid_union":
      return "is not one of the accepted forms";
    case "invalid_key":
      return "has a key that is not valid";
    case "invalid_element":
      return "has an item that is not valid";
    default:
      return "is not valid";
  }
};

/**
 * `schema.safeParse(input)` with the service's wording for every issue ({@link requestErrorMap}): how the service and
 * the SDK validate a request.
 *
 * @example
 * import { safeParseRequest, toolRoutes as tools } from "@agent-tools/schema";
 * const checked = safeParseRequest(tools.dropRadar.request, { tokenId: 1, limit: 51 });
 * // checked.error?.issues[0]?.message === "must be at most 50"
 */
export function safeParseRequest<S extends z.ZodType>(schema: S, input: unknown): z.ZodSafeParseResult<z.output<S>> {
  return schema.safeParse(input, { error: requestErrorMap });
}

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

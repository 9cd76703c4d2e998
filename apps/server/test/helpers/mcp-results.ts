/**
 * What an MCP client reads in a result of the endpoint, read as x402's MCP transport text defines it
 * (coinbase/x402 `specs/transports-v2/mcp.md`), with the text's names and x402's own schema, not the service's
 * constants:
 * - the tool-result binding: an `isError` result whose `structuredContent` is the `PaymentRequired` and whose
 *   `content[0].text` is the same object as JSON (a client prefers the first and falls back on the second);
 * - the extension binding (`org.x402/payment`, MCP 2026-07-28): `resultType: "payment_required"` with
 *   `result.paymentRequired`;
 * - a call no payment can make right: the HTTP API's error body as the text of an `isError` result.
 */
import { errorBodySchema } from "@agent-tools/schema";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { PaymentRequiredV2Schema } from "@x402/core/schemas";
import type { PaymentRequired } from "@x402/core/types";
import { expect } from "vitest";

/** Whether a value is a `PaymentRequired` by the test x402's text gives clients: it has `x402Version` and `accepts`. */
function isPaymentRequired(value: unknown): value is PaymentRequired {
  return typeof value === "object" && value !== null && "x402Version" in value && "accepts" in value;
}

/**
 * The `PaymentRequired` of a tool-result refusal, as a client written to x402's text finds it: `structuredContent`
 * first, then `content[0].text` parsed. Both must be there and hold the same object, as the text requires of a server.
 */
export function paymentRequiredIn(result: CallToolResult): PaymentRequired & Record<string, unknown> {
  expect(result.isError).toBe(true);
  const structured = result.structuredContent;
  const first = result.content[0];
  expect(first?.type).toBe("text");
  const fromText: unknown = JSON.parse((first as { text: string }).text);
  expect(isPaymentRequired(structured), "structuredContent holds the PaymentRequired").toBe(true);
  expect(fromText, "content[0].text is the same object as JSON").toEqual(structured);
  PaymentRequiredV2Schema.parse(structured);
  return structured as PaymentRequired & Record<string, unknown>;
}

/** The `PaymentRequired` of an extension-binding refusal: `resultType: "payment_required"`, `paymentRequired`. */
export function paymentRequiredOfExtension(result: Record<string, unknown>): PaymentRequired & Record<string, unknown> {
  expect(result.resultType).toBe("payment_required");
  expect(result.isError).toBeUndefined();
  PaymentRequiredV2Schema.parse(result.paymentRequired);
  return result.paymentRequired as PaymentRequired & Record<string, unknown>;
}

/** The text of an error result, which carries no `structuredContent`: it is not the tool's output. */
function errorText(result: CallToolResult): string {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const first = result.content[0];
  expect(first?.type).toBe("text");
  return (first as { text: string }).text;
}

/** The HTTP API's error body, as the text of an error result that no payment can make right. */
export function errorBodyIn(result: CallToolResult) {
  return errorBodySchema.parse(JSON.parse(errorText(result)));
}

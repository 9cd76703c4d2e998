/**
 * What an MCP client reads in an error result of the endpoint: its text, which carries x402's `PaymentRequired` in the
 * `x402/error` wrapper (coinbase/x402 `specs/transports-v2/mcp.md`) or the HTTP API's error body. Read here with the
 * spec's names and x402's own schema, not the service's constants.
 */
import { errorBodySchema } from "@agent-tools/schema";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { PaymentRequiredV2Schema } from "@x402/core/schemas";
import type { PaymentRequired } from "@x402/core/types";
import { expect } from "vitest";

/** The text of an error result, which carries no `structuredContent` (a stock client would check it and throw). */
function errorText(result: CallToolResult): string {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const first = result.content[0];
  expect(first?.type).toBe("text");
  return (first as { text: string }).text;
}

/** The `PaymentRequired` of a refusal, where x402's MCP transport puts it: the `x402/error` wrapper in the text. */
export function paymentRequiredIn(result: CallToolResult): PaymentRequired & Record<string, unknown> {
  const wrapper = JSON.parse(errorText(result))["x402/error"];
  expect(wrapper).toMatchObject({ code: 402 });
  PaymentRequiredV2Schema.parse(wrapper.data);
  expect(wrapper.message).toBe(wrapper.data.error);
  return wrapper.data;
}

/** The HTTP API's error body, as the text of an error result that no payment can make right. */
export function errorBodyIn(result: CallToolResult) {
  return errorBodySchema.parse(JSON.parse(errorText(result)));
}

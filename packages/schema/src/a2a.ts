/**
 * The paid tools as skills of an A2A agent (Agent2Agent protocol 1.0, JSON-RPC binding): where the agent card and the
 * endpoint are, how a message names a skill and its input, and the task metadata keys x402's A2A extension carries a
 * payment in (coinbase/x402 `specs/transports-v2/a2a.md`; the key names and status values are the extension's, as its
 * reference implementation `a2a-x402` on npm declares them). docs/architecture.md, "A2A".
 */
import { z } from "zod";
import { mcpPaidToolNames } from "./mcp.js";
import type { PaidRouteName } from "./paid-routes.js";

/** The A2A JSON-RPC endpoint's path. */
export const A2A_PATH = "/a2a";
/** Where A2A clients look for an agent's card (A2A 1.0, "Agent Discovery"). */
export const A2A_AGENT_CARD_PATH = "/.well-known/agent-card.json";
/** The A2A protocol version the endpoint speaks. */
export const A2A_PROTOCOL_VERSION = "1.0";
/**
 * URIs of the versions of x402's A2A extension the agent serves (google-agentic-commerce/a2a-x402, `spec/v0.1` and
 * `spec/v0.2`): the agent card declares both, and a client activates one in the `A2A-Extensions` header. Both carry
 * a payment the same way (the standalone flow, in message metadata); 0.2 adds an embedded flow for a higher-level
 * payment protocol, which the agent does not declare (docs/decisions.md, "A2A extension versions").
 */
export const X402_A2A_EXTENSION_URIS = {
  "0.1": "https://github.com/google-a2a/a2a-x402/v0.1",
  "0.2": "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2",
} as const;
/** A version of x402's A2A extension the agent serves. */
export type X402A2aExtensionVersion = keyof typeof X402_A2A_EXTENSION_URIS;

/**
 * The version of x402's A2A extension a request activated (the newest, if it activated both), from the URIs of its
 * `A2A-Extensions` header; undefined when it activated none.
 *
 * @example
 * import { activatedX402A2aVersion } from "@agent-tools/schema";
 * const version = activatedX402A2aVersion(["https://github.com/google-a2a/a2a-x402/v0.1"]); // "0.1"
 */
export function activatedX402A2aVersion(requested: readonly string[] | undefined): X402A2aExtensionVersion | undefined {
  const versions = (Object.keys(X402_A2A_EXTENSION_URIS) as X402A2aExtensionVersion[]).reverse();
  return versions.find((version) => requested?.includes(X402_A2A_EXTENSION_URIS[version]));
}

/** Metadata keys of x402's A2A extension, on a message (client to agent) or a task status message (agent to client). */
export const A2A_PAYMENT_META = {
  /** Where the payment stands: one of {@link A2A_PAYMENT_STATUS}. */
  status: "x402.payment.status",
  /** x402's `PaymentRequired`, on a task that waits for payment. */
  required: "x402.payment.required",
  /** x402's `PaymentPayload`, on the client's message that pays. */
  payload: "x402.payment.payload",
  /** x402's `SettleResponse`s of the task's payments. */
  receipts: "x402.payment.receipts",
  /** Why a payment failed: the service's refusal reason (`PaymentRefusalReason`). */
  error: "x402.payment.error",
} as const;

/** The statuses of x402's A2A extension. */
export const A2A_PAYMENT_STATUS = {
  required: "payment-required",
  submitted: "payment-submitted",
  rejected: "payment-rejected",
  verified: "payment-verified",
  completed: "payment-completed",
  failed: "payment-failed",
} as const;

/** Message metadata key of a holder's Sign-In-With-X (the `SIGN-IN-WITH-X` header's value, or its decoded object). */
export const A2A_SIGN_IN_META = "sign-in-with-x";

/** The skill id of each paid route: the MCP tool's name (`drop_radar`). */
export const a2aSkillIds: Record<PaidRouteName, string> = mcpPaidToolNames;

/**
 * What a message asks for: a skill by id and its input (the tool's request, as the HTTP route takes it in its body),
 * sent as the value of a data part.
 *
 * @example
 * import { a2aSkillRequestSchema } from "@agent-tools/schema";
 * const ask = a2aSkillRequestSchema.parse({ skill: "intel", input: { tokenId: 1 } });
 */
export const a2aSkillRequestSchema = z
  .object({
    skill: z.string().min(1).max(80),
    input: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();
/** A skill and its input, as a message's data part carries them. */
export type A2aSkillRequest = z.infer<typeof a2aSkillRequestSchema>;

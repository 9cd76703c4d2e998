/**
 * The service's tools as the Model Context Protocol names them (`/mcp`, and the `agent-tools mcp` bridge): each paid
 * route under a snake_case name, with the route's own request and response contracts as its input and output
 * schemas, plus the free agent reads. x402 payments travel in the call's `_meta` (coinbase/x402
 * `specs/transports-v2/mcp.md`); the holder's sign-in travels beside them, as the HTTP header does.
 */
import { z } from "zod";
import { inlineLocalRefs, type JsonSchema, requestJsonSchema, responseJsonSchema } from "./json-schema.js";
import { type PaidRouteName, paidRoutes, type ToolRoute } from "./paid-routes.js";
import { tokenIdSchema } from "./primitives.js";
import { agentInfoSchema, bindingStatusSchema, registrationFileSchema } from "./public.js";
import { paymentRequiredSchema } from "./x402.js";

/** The MCP endpoint's path. */
export const MCP_PATH = "/mcp";
/** `_meta` key of the x402 `PaymentPayload` a client sends with a paid call. */
export const MCP_PAYMENT_META = "x402/payment";
/** `_meta` key of the x402 `SettlementResponse` a paid call's result carries. */
export const MCP_PAYMENT_RESPONSE_META = "x402/payment-response";
/**
 * x402's MCP extension (`specs/transports-v2/mcp.md`, "Extension Binding", MCP 2026-07-28): a client that names it
 * in a request's client capabilities is answered an unpaid or refused call as `resultType: "payment_required"` with
 * `result.paymentRequired`; `server/discover` lists it among the server's capabilities.
 */
export const MCP_X402_EXTENSION = "org.x402/payment";
/** The result type of x402's MCP extension binding, for a call that was not run because it needs payment. */
export const MCP_PAYMENT_REQUIRED_RESULT = "payment_required";
/** `_meta` key of the holder's Sign-In-With-X payload: the `SIGN-IN-WITH-X` header's value, or its decoded object. */
export const MCP_SIGN_IN_META = "sign-in-with-x";

/** `dropRadar` -> `drop_radar`. */
function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** The MCP tool name of each paid route. */
export const mcpPaidToolNames = Object.fromEntries(
  Object.keys(paidRoutes).map((name) => [name, snakeCase(name)]),
) as Record<PaidRouteName, string>;

const toolNameByRoute = new Map<ToolRoute, string>(
  (Object.keys(paidRoutes) as PaidRouteName[]).map((name) => [paidRoutes[name], mcpPaidToolNames[name]]),
);

/**
 * The newest MCP protocol revision the service's `/mcp` endpoint speaks (named in the registration file's services);
 * it answers the 2025 revisions too (docs/api.md, "MCP").
 */
export const MCP_PROTOCOL_VERSION = "2026-07-28";

const routeNameByToolName = new Map(
  (Object.keys(paidRoutes) as PaidRouteName[]).map((name) => [mcpPaidToolNames[name], name]),
);

/**
 * The paid route an MCP tool name (or A2A skill id, the same name) stands for; undefined for any other name, own
 * names only (`__proto__` is not a tool).
 *
 * @example
 * import { paidRouteNameOf } from "@agent-tools/schema";
 * const name = paidRouteNameOf("drop_radar"); // "dropRadar"
 */
export function paidRouteNameOf(toolName: string): PaidRouteName | undefined {
  return routeNameByToolName.get(toolName);
}

/** The MCP tool name of a paid route. */
export function mcpToolNameOf(route: ToolRoute): string {
  const name = toolNameByRoute.get(route);
  if (!name) throw new Error(`not a paid route: ${route.path}`);
  return name;
}

/** Where and how the MCP tools are reached, as the catalog and the tool manifests name it. */
export function mcpEndpointOf(publicUrl: string): { endpoint: string; transport: "streamable-http" } {
  return { endpoint: `${publicUrl}${MCP_PATH}`, transport: "streamable-http" };
}

const tokenInput = z.object({ tokenId: tokenIdSchema });

/** The free reads: an agent's public records, as the public routes answer them. */
export const mcpReadTools = {
  agent_info: {
    description: "An agent's public identity record: name, owner, traits, rarity, clearance, registration.",
    request: tokenInput,
    response: agentInfoSchema,
  },
  agent_registration: {
    description: "An agent's ERC-8004 registration file (registration-v1): its services, x402 support, registry.",
    request: tokenInput,
    response: registrationFileSchema,
  },
  agent_binding: {
    description: "An agent's ERC-8217 binding status, read live from chain.",
    request: tokenInput,
    response: bindingStatusSchema,
  },
} as const satisfies Record<string, { description: string; request: z.ZodType; response: z.ZodType }>;
/** The name of one of the free MCP tools that read the service's public records. */
export type McpReadToolName = keyof typeof mcpReadTools;

/** A tool as `tools/list` describes it. */
export interface McpToolDescription {
  name: string;
  title: string;
  description: string;
  inputSchema: McpObjectSchema;
  outputSchema: McpObjectSchema;
}

/** MCP takes a tool's input and output schemas only as JSON Schemas of objects. */
export type McpObjectSchema = JsonSchema & { type: "object" };

/**
 * MCP wants a tool's schemas as JSON Schema objects; its clients validate with the dialect of their validator, so
 * the `$schema` line is left out and references are inlined (json-schema.ts).
 */
function withoutDialect(schema: JsonSchema): McpObjectSchema {
  const { $schema: _, ...rest } = schema;
  if (rest.type !== "object") throw new Error("An MCP tool's schemas describe objects.");
  return { ...rest, type: "object" };
}

/**
 * The output schema of a paid tool: its answer, or x402's `PaymentRequired`. x402's MCP transport puts a refusal's
 * `PaymentRequired` in an `isError` result's `structuredContent`, and MCP SDK 1.x clients check an error result's
 * `structuredContent` against the tool's output schema too (and throw on a mismatch): the schema admits both, so
 * that every client reads the price (docs/decisions.md, "MCP refusals").
 */
function paidOutputSchema(route: (typeof paidRoutes)[PaidRouteName]): McpObjectSchema {
  const { $schema: _, ...paymentRequired } = inlineLocalRefs(z.toJSONSchema(paymentRequiredSchema) as JsonSchema);
  return {
    type: "object",
    description:
      "The tool's answer; on an isError result, x402's PaymentRequired (the call was not paid, or its payment " +
      "was refused), with the price to pay.",
    anyOf: [withoutDialect(responseJsonSchema(route)), paymentRequired],
  };
}

/** The MCP description of a paid route: its summary, how it is paid, and its contracts. */
export function mcpPaidTool(routeName: PaidRouteName): McpToolDescription {
  const route = paidRoutes[routeName];
  return {
    name: mcpPaidToolNames[routeName],
    title: route.summary,
    description:
      `${route.description} Paid per call with x402 (the price is in the payment request an unpaid call returns); ` +
      `a holder who signs in pays the holder price.`,
    inputSchema: withoutDialect(requestJsonSchema(route)),
    outputSchema: paidOutputSchema(route),
  };
}

/** The MCP description of a free read. */
export function mcpReadTool(name: McpReadToolName): McpToolDescription {
  const tool = mcpReadTools[name];
  return {
    name,
    title: tool.description.split(":")[0]!,
    description: `${tool.description} Free.`,
    inputSchema: withoutDialect(inlineLocalRefs(z.toJSONSchema(tool.request, { io: "input" }) as JsonSchema)),
    outputSchema: withoutDialect(inlineLocalRefs(z.toJSONSchema(tool.response) as JsonSchema)),
  };
}

/** Every tool of the MCP endpoint, paid ones first. */
export function mcpToolDescriptions(): McpToolDescription[] {
  return [
    ...(Object.keys(paidRoutes) as PaidRouteName[]).map(mcpPaidTool),
    ...(Object.keys(mcpReadTools) as McpReadToolName[]).map(mcpReadTool),
  ];
}

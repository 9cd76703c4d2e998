import { randomBytes } from "node:crypto";
import {
  A2A_PATH,
  A2A_PAYMENT_META,
  A2A_SIGN_IN_META,
  HOLDER_SIGN_IN_STATEMENT,
  MCP_PATH,
  MCP_PAYMENT_META,
  MCP_SIGN_IN_META,
  mcpToolNameOf,
  type PaymentRequired,
  type PaymentRequirements,
  requestJsonSchema,
  type ToolRoute,
} from "@agent-tools/schema";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { buildSIWxSchema } from "@x402/extensions/sign-in-with-x";
import { z } from "zod";
import { paymentIdentifierDeclaration } from "./payment-identifier.js";

export interface ChallengeContext {
  publicUrl: string;
  /** CAIP-2 chains a holder may sign in on (SIWE chainId). */
  signInChains: string[];
  now: () => Date;
  /** The signed offers of `accepts` at `resourceUrl`, under their extension's key (./receipts.ts). */
  offers?: (resourceUrl: string, accepts: PaymentRequirements[]) => Record<string, unknown>;
}

/**
 * The resource a call pays for, as its 402, offer and receipt name it: the route's URL, for an MCP tool call the
 * `mcp://tool/<name>` of x402's MCP transport, and for an A2A skill `a2a://skill/<id>` in the same form
 * (docs/architecture.md, "A2A").
 */
export function paidResourceUrl(route: ToolRoute, method: CallMethod, publicUrl: string): string {
  if (method === "MCP") return `mcp://tool/${mcpToolNameOf(route)}`;
  if (method === "A2A") return `a2a://skill/${mcpToolNameOf(route)}`;
  return `${publicUrl}${route.path}`;
}

/** The path a holder signs in to for a call (under the public URL): the route's, or the MCP or A2A endpoint's. */
export function signInPath(route: ToolRoute, method: CallMethod): string {
  if (method === "MCP") return MCP_PATH;
  if (method === "A2A") return A2A_PATH;
  return route.path;
}

/** How a call came: HTTP with a body (POST) or query parameters (GET), an MCP tool call, or an A2A message. */
export type CallMethod = "GET" | "POST" | "MCP" | "A2A";

/** Where a call's payment and sign-in travel, as a refusal names them to its caller. */
export interface PaymentFields {
  payment: string;
  signIn: string;
}

/**
 * Where each transport carries the payment and the sign-in: HTTP's headers, an MCP tool call's `_meta` keys, an A2A
 * message's metadata keys. A refusal names the caller's own field, never another transport's.
 */
export function paymentFields(method: CallMethod): PaymentFields {
  if (method === "MCP") return { payment: `_meta["${MCP_PAYMENT_META}"]`, signIn: `_meta["${MCP_SIGN_IN_META}"]` };
  if (method === "A2A") {
    return {
      payment: `the message's metadata "${A2A_PAYMENT_META.payload}"`,
      signIn: `the message's metadata "${A2A_SIGN_IN_META}"`,
    };
  }
  return { payment: "PAYMENT-SIGNATURE", signIn: "SIGN-IN-WITH-X" };
}

const discoveryCache = new Map<string, Record<string, unknown>>();

/**
 * x402 Bazaar discovery info of a route as called with `method` (coinbase/x402 `specs/extensions/bazaar.md`): a GET
 * in query form, a POST in JSON-body form, with the method named, the sample input, its JSON Schema and a sample
 * output. The schema is self-contained, as the spec asks: the request's named definitions (`$defs`) go to the
 * extension schema's root, where its `#/$defs/...` references resolve.
 */
function discoveryExtension(route: ToolRoute, method: CallMethod): Record<string, unknown> {
  // Bazaar describes HTTP endpoints and MCP tools; an A2A skill is described by the agent card.
  if (method === "A2A") return {};
  const key = `${method} ${route.path}`;
  let extension = discoveryCache.get(key);
  if (!extension && method === "MCP") {
    // An MCP tool: its name, transport and input schema (self-contained, references inlined).
    const { $schema: _, ...inputSchema } = requestJsonSchema(route);
    extension = declareDiscoveryExtension({
      toolName: mcpToolNameOf(route),
      description: route.summary,
      transport: "streamable-http",
      inputSchema,
      example: route.sampleInput,
      output: { example: route.sampleOutput },
    });
    discoveryCache.set(key, extension);
  }
  if (!extension) {
    const {
      $defs,
      $schema: _,
      ...inputSchema
    } = z.toJSONSchema(route.request, { io: "input" }) as Record<string, unknown> & { $defs?: Record<string, unknown> };
    const output = { example: route.sampleOutput };
    const declared =
      method === "GET"
        ? declareDiscoveryExtension({ input: route.sampleInput, inputSchema, output })
        : declareDiscoveryExtension({ bodyType: "json", input: route.sampleInput, inputSchema, output });
    const bazaar = declared.bazaar as { info: { input: Record<string, unknown> }; schema: Record<string, unknown> };
    bazaar.info.input.method = method;
    if ($defs) bazaar.schema.$defs = $defs;
    extension = { bazaar };
    discoveryCache.set(key, extension);
  }
  return extension;
}

/** The SIWX extension's JSON Schema is the same for every challenge: built once. */
const siwxSchema = buildSIWxSchema();

/**
 * The PaymentRequired answer of a tool route: the price point that applies to this caller, the
 * `sign-in-with-x` extension (so a holder learns it can sign in for the discount), Bazaar discovery info, the
 * payment-identifier declaration and, when the service signs them, the signed offer of the price.
 */
export function buildPaymentRequired(
  route: ToolRoute,
  accepts: PaymentRequirements[],
  error: string,
  context: ChallengeContext,
  method: CallMethod,
): PaymentRequired {
  // An MCP tool or A2A skill is named as its transport names it; the holder signs in to its endpoint.
  const url = `${context.publicUrl}${signInPath(route, method)}`;
  const resource = paidResourceUrl(route, method, context.publicUrl);
  return {
    x402Version: 2,
    error,
    resource: { url: resource, description: route.summary, mimeType: "application/json" },
    accepts,
    extensions: {
      "sign-in-with-x": {
        info: {
          domain: new URL(context.publicUrl).host,
          uri: url,
          version: "1",
          statement: HOLDER_SIGN_IN_STATEMENT,
          nonce: randomBytes(16).toString("hex"),
          issuedAt: context.now().toISOString(),
          resources: [url],
        },
        supportedChains: context.signInChains.map((chainId) => ({ chainId, type: "eip191" })),
        schema: siwxSchema,
      },
      ...discoveryExtension(route, method),
      ...paymentIdentifierDeclaration(),
      ...context.offers?.(resource, accepts),
    },
  };
}

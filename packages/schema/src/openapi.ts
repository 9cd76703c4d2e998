import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { errorBodySchema } from "./errors.js";
import {
  LEDGER_ENTRIES_PATH,
  LEDGER_EXPORT_PATH,
  LEDGER_PATH,
  ledgerExportQuerySchema,
  ledgerPageQuerySchema,
  ledgerPageSchema,
  ledgerQuerySchema,
  ledgerReportSchema,
  OPERATOR_OVERVIEW_PATH,
  OPERATOR_SESSION_PATH,
  operatorOverviewSchema,
  operatorSessionSchema,
  operatorSessionStateSchema,
  REFUNDS_PATH,
  recordedRefundSchema,
  refundRequestSchema,
} from "./operator.js";
import { paidRoutes, type ToolRoute } from "./paid-routes.js";
import { type PaymentTerms, routePaymentRequirements } from "./payment-terms.js";
import {
  clearanceWording,
  formatUsd,
  METERED_FORMULA,
  METERED_SCHEMES,
  meteredPricing,
  pricePoints,
} from "./pricing.js";
import { agentInfoSchema, bindingStatusSchema, healthSchema, registrationFileSchema } from "./public.js";
import { publicExamples } from "./public-examples.js";
import { API_VERSION } from "./service.js";
import { toolManifestSchema } from "./tool-manifest.js";
import { paymentCatalogSchema, paymentRequiredSchema } from "./x402.js";

/** Options of `buildOpenApiDocument`: where the service is and what it is paid in. */
export interface OpenApiOptions {
  /** Public origin of the service, for example `http://127.0.0.1:8402`. */
  serverUrl: string;
  payment: PaymentTerms;
}

/** A JSON object: what `JSON.parse` of the document gives (kept loose so no OpenAPI typing package leaks). */
export type OpenApiDocument = Record<string, unknown> & { openapi: string; paths: Record<string, unknown> };

function errorExample(code: string, message: string, details: unknown[] = []) {
  return { error: { code, message, details } };
}

const tokenIdPathParams = z.object({
  tokenId: z
    .string()
    .regex(/^[0-9]+$/)
    .meta({ description: "Token id, 1 to 6666.", example: "7" }),
});

/** Builds the OpenAPI 3.1.0 document of the service from the Zod contracts and the route table. */
export function buildOpenApiDocument(options: OpenApiOptions): OpenApiDocument {
  const registry = new OpenAPIRegistry();

  const json = (schema: z.ZodType, example?: unknown) => ({
    content: { "application/json": { schema, ...(example === undefined ? {} : { example }) } },
  });

  registry.registerPath({
    method: "get",
    path: "/healthz",
    operationId: "getHealth",
    tags: ["public"],
    summary: "Health check",
    responses: {
      200: { description: "The service is up.", ...json(healthSchema, { ok: true, service: "agent-tools" }) },
    },
  });

  const publicTokenRoute = (
    path: string,
    operationId: string,
    summary: string,
    description: string,
    schema: z.ZodType,
    revealedOnly: boolean,
    example: unknown,
  ) =>
    registry.registerPath({
      method: "get",
      path,
      operationId,
      tags: ["public"],
      summary,
      description,
      request: { params: tokenIdPathParams },
      responses: {
        200: { description: summary, ...json(schema, example) },
        400: {
          description: "Malformed token id.",
          ...json(
            errorBodySchema,
            errorExample("invalid_request", "tokenId must be between 1 and 6666.", [
              { field: "tokenId", message: "tokenId must be between 1 and 6666" },
            ]),
          ),
        },
        404: {
          description: revealedOnly
            ? "No such token (`token_not_found`) or not revealed yet (`agent_not_revealed`)."
            : "No such token (`token_not_found`).",
          ...json(errorBodySchema, errorExample("token_not_found", "Token 7 does not exist.")),
        },
      },
    });

  publicTokenRoute(
    "/agents/info/{tokenId}",
    "getAgentInfo",
    "Agent identity record",
    "Public identity record of a revealed agent: on-chain trait labels, rarity context and registration-aware metadata.",
    agentInfoSchema,
    true,
    publicExamples.agentInfo,
  );
  publicTokenRoute(
    "/.well-known/agents/{tokenId}.json",
    "getAgentRegistration",
    "ERC-8004 registration file",
    "ERC-8004 registration file of the token-bound agent, for wallet, registry and agent-discovery flows.",
    registrationFileSchema,
    true,
    publicExamples.registrationFile,
  );
  publicTokenRoute(
    "/agents/{tokenId}/binding",
    "getAgentBinding",
    "ERC-8217 binding status",
    "ERC-8217 binding status of the token's agent, as of the block in `blockNumber`: the registry's `agent-binding` " +
      "and the binding contract's `bindingOf` are read from chain once per agent and kept until an event of the " +
      "registry or of the binding contract names the agent; the owner is followed by the collection's events.",
    bindingStatusSchema,
    false,
    publicExamples.bindingStatus,
  );

  registry.registerPath({
    method: "get",
    path: "/openapi.json",
    operationId: "getOpenApi",
    tags: ["discovery"],
    summary: "This OpenAPI 3.1 document",
    responses: { 200: { description: "The OpenAPI document.", ...json(z.record(z.string(), z.unknown())) } },
  });
  registry.registerPath({
    method: "get",
    path: "/.well-known/x402",
    operationId: "getPaymentCatalog",
    tags: ["discovery"],
    summary: "x402 payment catalog",
    description: "Every paid tool with its two price points, a sample input and the JSON Schemas of input and output.",
    responses: { 200: { description: "The payment catalog.", ...json(paymentCatalogSchema) } },
  });

  const slugs = Object.values(paidRoutes).map((route) => route.slug) as [string, ...string[]];
  registry.registerPath({
    method: "get",
    path: "/.well-known/ai-tool/{slug}.json",
    operationId: "getToolManifest",
    tags: ["discovery"],
    summary: "ERC-8257 tool manifest",
    description:
      "The ERC-8257 v1 manifest of one tool, served as its RFC 8785 (JCS) canonical JSON. `Manifest-Hash` is " +
      "keccak256 of those bytes: the `manifestHash` to register the tool with in an ERC-8257 registry.",
    request: {
      params: z.object({ slug: z.enum(slugs).meta({ description: "The tool's slug.", example: "intel" }) }),
    },
    responses: {
      200: {
        description: "The tool manifest.",
        headers: z.object({
          "Manifest-Hash": z
            .string()
            .regex(/^0x[0-9a-f]{64}$/)
            .meta({ description: "keccak256 of the body (the manifest's JCS form)." }),
        }),
        ...json(toolManifestSchema),
      },
      404: {
        description: "No tool has this slug (`not_found`).",
        ...json(errorBodySchema, errorExample("not_found", "No tool manifest is named nope.json.")),
      },
    },
  });

  const { payment } = options;
  for (const route of Object.values(paidRoutes) as ToolRoute[]) {
    const only = "method" in route ? route.method : undefined;
    const successStatus = ("successStatus" in route ? route.successStatus : undefined) ?? 200;
    const revealedOnly = "revealedOnly" in route && route.revealedOnly === true;
    const notFound = "notFound" in route ? route.notFound : undefined;
    const discountedFor = clearanceWording[route.minimumClearance];
    const standard = routePaymentRequirements(payment, route, "standard");
    const discounted = routePaymentRequirements(payment, route, "discounted");
    registry.registerPath({
      method: only ?? "post",
      path: route.path,
      operationId: route.operationId,
      tags: ["tools"],
      summary: route.summary,
      description:
        `${route.description}\n\nPrice per call: ${formatUsd(pricePoints.standard)} USD for any caller, ` +
        `${formatUsd(pricePoints.discounted)} USD for ${discountedFor} signed in with Ethereum (header \`SIGN-IN-WITH-X\`). ` +
        `Pay with x402 v2 (header \`PAYMENT-SIGNATURE\`).` +
        ("paidAhead" in route && route.paidAhead
          ? " Every scheme is charged the price point: the mission's work comes later."
          : ` Paid over a metered scheme (${METERED_SCHEMES.join(", ")}), the price point is a ceiling and the call is ` +
            `charged by the work done: ${METERED_FORMULA}.`) +
        (only ? "" : " The same route answers GET with the fields as query parameters."),
      request:
        only === "get"
          ? { query: route.request }
          : { body: { required: true, ...json(route.request, route.sampleInput) } },
      responses: {
        [successStatus]: {
          description: successStatus === 202 ? "Accepted: the mission is queued." : "The tool's answer.",
          ...json(route.response, route.sampleOutput),
        },
        400: {
          description: "Invalid request: a field is missing, of the wrong type or out of bounds. Never charged.",
          ...json(
            errorBodySchema,
            errorExample("invalid_request", "The request is invalid: tokenId must be between 1 and 6666.", [
              { field: "tokenId", message: "tokenId must be between 1 and 6666" },
            ]),
          ),
        },
        402: {
          description:
            "Payment or holder authorization required. The `PAYMENT-REQUIRED` header carries the same JSON (base64).",
          ...json(paymentRequiredSchema, {
            x402Version: 2,
            error: "Payment required",
            resource: {
              url: `${options.serverUrl}${route.path}`,
              description: route.summary,
              mimeType: "application/json",
            },
            accepts: [standard],
          }),
        },
        403: {
          description:
            "The signed-in caller does not own the token (`not_token_owner`) or its clearance is too low (`insufficient_clearance`)." +
            (revealedOnly ? " The agent is not revealed yet (`agent_not_revealed`), whoever asks." : ""),
          ...json(
            errorBodySchema,
            errorExample("insufficient_clearance", `This tool needs ${route.minimumClearance} clearance.`, [
              {
                field: "tokenId",
                message: `token clearance is below ${route.minimumClearance}`,
                requiredClearance: route.minimumClearance,
              },
            ]),
          ),
        },
        404: {
          description:
            "No such token (`token_not_found`), refused before any price is asked." +
            (notFound
              ? ` When ${notFound.when}: \`${notFound.code}\`, after the payment was verified and given back.`
              : "") +
            " Never charged.",
          ...json(errorBodySchema, errorExample("token_not_found", "Token 7 does not exist.")),
        },
        409: {
          description:
            "The payment's identifier (x402 `payment-identifier` extension) was used with another payment or request " +
            "(`payment_identifier_conflict`). The same payment and request get the call's answer again, unpaid. " +
            "Never charged.",
          ...json(errorBodySchema),
        },
        410: {
          description:
            "The answer to the payment's identifier is no longer kept (an hour; `answer_expired`). The payment was " +
            "taken once.",
          ...json(errorBodySchema),
        },
        429: {
          description:
            "Too many requests from this address, or paid calls from this payer, per second or at once " +
            "(`rate_limited`); see Retry-After. Never charged.",
          ...json(
            errorBodySchema,
            errorExample("rate_limited", "This address sent too many requests per second; retry in 1 s.", []),
          ),
        },
        502: {
          description: "An upstream service gave a bad answer (`upstream_error`). Never charged.",
          ...json(errorBodySchema),
        },
        503: {
          description: "An upstream service is unavailable (`upstream_unavailable`), see Retry-After. Never charged.",
          ...json(errorBodySchema),
        },
        504: {
          description: "An upstream service timed out (`upstream_timeout`). Never charged.",
          ...json(errorBodySchema),
        },
      },
      "x-payment-info": {
        protocol: "x402",
        x402Version: 2,
        pricing: {
          mode: "dynamic",
          currency: "USD",
          min: formatUsd(pricePoints.discounted),
          max: formatUsd(pricePoints.standard),
        },
        minimumClearance: route.minimumClearance,
        metered: "paidAhead" in route && route.paidAhead ? null : structuredClone(meteredPricing),
        pricePoints: [
          {
            name: "standard",
            who: "any caller; no token or account needed",
            usd: formatUsd(pricePoints.standard),
            accepts: standard,
          },
          { name: "discounted", who: discountedFor, usd: formatUsd(pricePoints.discounted), accepts: discounted },
        ],
      },
    });
  }

  registry.registerPath({
    method: "get",
    path: LEDGER_PATH,
    operationId: "getLedgerReport",
    tags: ["operator"],
    summary: "Settlement ledger (operator)",
    description:
      "Every settled payment is recorded once, before the paid call answers. This report gives totals per route " +
      "and per UTC day and the latest entries. Operator only: sign in with `SIGN-IN-WITH-X` (EIP-4361, bound to " +
      "this service's origin) as the operator address. No payment.",
    request: { query: ledgerQuerySchema },
    responses: {
      200: { description: "The ledger report.", ...json(ledgerReportSchema) },
      400: { description: "Invalid query.", ...json(errorBodySchema) },
      401: {
        description: "No or invalid sign-in (`sign_in_required`).",
        ...json(errorBodySchema, errorExample("sign_in_required", "Sign in as the operator with SIGN-IN-WITH-X.")),
      },
      403: {
        description: "Signed in, but not as the operator (`not_operator`).",
        ...json(errorBodySchema, errorExample("not_operator", "0x7099... is not the operator of this service.")),
      },
    },
  });

  const operatorRefusals = {
    400: { description: "Invalid query, naming the field.", ...json(errorBodySchema) },
    401: {
      description: "No or invalid sign-in (`sign_in_required`); the sign-in is made for this path.",
      ...json(errorBodySchema, errorExample("sign_in_required", "Sign in as the operator with SIGN-IN-WITH-X.")),
    },
    403: {
      description: "Signed in, but not as the operator (`not_operator`).",
      ...json(errorBodySchema, errorExample("not_operator", "0x7099... is not the operator of this service.")),
    },
  };
  registry.registerPath({
    method: "get",
    path: LEDGER_ENTRIES_PATH,
    operationId: "listLedgerEntries",
    tags: ["operator"],
    summary: "Every payment and refund, page by page (operator)",
    description:
      "Every settled payment and refund of a window of UTC days, oldest first, a page at a time: pass a page's " +
      "`next` as `after` for the next. Entries made while you page appear in later pages. Signed in as the operator " +
      "(`SIGN-IN-WITH-X`, one sign-in per page). No payment.",
    request: { query: ledgerPageQuerySchema },
    responses: { 200: { description: "A page of the book.", ...json(ledgerPageSchema) }, ...operatorRefusals },
  });
  registry.registerPath({
    method: "get",
    path: LEDGER_EXPORT_PATH,
    operationId: "exportLedger",
    tags: ["operator"],
    summary: "The book as CSV or JSON Lines (operator)",
    description:
      "Every settled payment and refund of a window of UTC days as one download, oldest first, streamed as it is " +
      "read: CSV (RFC 4180, a header line; `usd` is exact to the asset's last unit; a refund's `amount` and `usd` " +
      "are negative) or JSON Lines (one LedgerEntry per line). Signed in as the operator (`SIGN-IN-WITH-X`). No " +
      "payment.",
    request: { query: ledgerExportQuerySchema },
    responses: {
      200: {
        description: "The export, as an attachment named `ledger-<from>-<to>.<format>`.",
        content: {
          "text/csv": { schema: { type: "string" } },
          "application/x-ndjson": { schema: { type: "string" } },
        },
      },
      ...operatorRefusals,
      429: {
        description:
          "On Postgres, two CSV exports are already running on this instance, each holding a database connection " +
          "until its end (`rate_limited`); see Retry-After.",
        ...json(errorBodySchema),
      },
    },
  });

  registry.registerPath({
    method: "post",
    path: REFUNDS_PATH,
    operationId: "recordRefund",
    tags: ["operator"],
    summary: "Book a refund the operator made (operator)",
    description:
      "The service never gives money back by itself: send the payment asset from the payee (`PAY_TO`) back to the " +
      "payer with a wallet of yours, then name the payment (its ledger entry's `payer` and `nonce`) and that " +
      "transaction. The refund is booked as the chain shows it: a successful transaction mined after the " +
      "payment's settlement, with a transfer of the asset from the payee to the payer not booked before; its " +
      "amount is the transfer's, and a payment's refunds never add up to more than it paid. The book lists it " +
      "(`kind: refund`) and the totals net it. Recording the same transaction for the same payment again answers " +
      "200 with the same refund. Signed in as the operator (`SIGN-IN-WITH-X` made for this path and request; " +
      "the console's session cookie does not record). No payment.",
    request: { body: { content: { "application/json": { schema: refundRequestSchema } } } },
    responses: {
      201: { description: "Booked.", ...json(recordedRefundSchema) },
      200: { description: "Already booked for this payment: the same refund.", ...json(recordedRefundSchema) },
      ...operatorRefusals,
      400: { description: "Invalid body, naming the field.", ...json(errorBodySchema) },
      404: {
        description: "No settled payment of this payer with this nonce (`payment_not_found`).",
        ...json(errorBodySchema),
      },
      409: {
        description: "The transaction's transfers are booked as refunds of other payments (`refund_taken`).",
        ...json(errorBodySchema),
      },
      422: {
        description:
          "The transaction is not mined (`refund_transaction_not_found`), reverted (`refund_transaction_failed`), " +
          "moves nothing from the payee to the payer after the payment (`refund_transfer_not_found`), or gives " +
          "back more than is left of the payment (`refund_exceeds_payment`).",
        ...json(errorBodySchema),
      },
      503: { description: "The payment chain did not answer (`upstream_unavailable`).", ...json(errorBodySchema) },
    },
  });
  registry.registerPath({
    method: "get",
    path: OPERATOR_SESSION_PATH,
    operationId: "getOperatorSession",
    tags: ["operator"],
    summary: "Whether a console session is open, and how to open one",
    description:
      "Answers 200 whether or not the request carries a session: `session` is who is signed in and until when " +
      "(null without an open session), `signIn` what a sign-in that opens one is made for (the service's public " +
      "origin, the chains it takes, how long a sign-in is taken after it was issued). Needs no credentials.",
    responses: { 200: { description: "The session, or null.", ...json(operatorSessionStateSchema) } },
  });
  registry.registerPath({
    method: "post",
    path: OPERATOR_SESSION_PATH,
    operationId: "openOperatorSession",
    tags: ["operator"],
    summary: "Open an operator console session (operator)",
    description:
      "Signed in with `SIGN-IN-WITH-X` made for this path, as the operator address: opens an hour's session of " +
      "the operator console (`/operator`), held in an HttpOnly cookie sent to `/operator` paths only. The other " +
      "operator routes that read take the cookie instead of a header. A request without a sign-in gets 401 with " +
      "the chains it takes.",
    responses: {
      200: { description: "The session is open; the cookie is set.", ...json(operatorSessionSchema) },
      ...Object.fromEntries(Object.entries(operatorRefusals).filter(([status]) => status !== "400")),
    },
  });
  registry.registerPath({
    method: "delete",
    path: OPERATOR_SESSION_PATH,
    operationId: "closeOperatorSession",
    tags: ["operator"],
    summary: "End the operator console session",
    description: "Ends the session the cookie names, and clears the cookie.",
    responses: { 204: { description: "Signed out." } },
  });
  registry.registerPath({
    method: "get",
    path: OPERATOR_OVERVIEW_PATH,
    operationId: "getOperatorOverview",
    tags: ["operator"],
    summary: "What the operator console shows (operator)",
    description:
      "The ledger's report of the last 30 days with the latest 50 payments, the payment claims pending, the " +
      "mission queue, the upstreams' circuits and budgets, refusals by reason since the instance started and the block " +
      "explorer of the payment network. Signed in as the operator (session cookie or `SIGN-IN-WITH-X`).",
    responses: {
      200: { description: "The overview.", ...json(operatorOverviewSchema) },
      ...Object.fromEntries(Object.entries(operatorRefusals).filter(([status]) => status !== "400")),
    },
  });

  const generator = new OpenApiGeneratorV31(registry.definitions);
  const document = generator.generateDocument({
    openapi: "3.1.0",
    info: {
      title: "Agent Tools",
      version: API_VERSION,
      license: { name: "MIT", identifier: "MIT" },
      description:
        "Pay-per-call intelligence for the 6666 token-bound agents of the collection: public discovery routes and " +
        "seven paid tools. Pay with x402 v2 in a USD stablecoin; holders who sign in with Ethereum pay the discounted price. " +
        "The same tools are offered to AI agents over the Model Context Protocol at `/mcp` (Streamable HTTP, paid with " +
        "x402 over MCP: the payment in the call's `_meta`).",
    },
    servers: [{ url: options.serverUrl }],
    // The spec: no route declares a conventional security scheme (access goes through x402 and SIWX headers).
    // An explicit empty list says so, instead of leaving security undefined.
    security: [],
    tags: [
      { name: "public", description: "Open routes: no payment or credential." },
      { name: "discovery", description: "Machine-readable descriptions of the service." },
      { name: "tools", description: "Paid tool routes (x402 v2), the mission queue (`/dispatch`) among them." },
      { name: "operator", description: "The operator's views; signed in as the operator address, never paid." },
    ],
  });
  return JSON.parse(JSON.stringify(document)) as OpenApiDocument;
}

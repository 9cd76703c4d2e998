/**
 * The service's MCP server: `tools/list` and `tools/call`, one instance per request, the same for every protocol
 * revision the endpoint serves (mcp-endpoint.ts routes each request to its era). A paid tool is the same paid call as its HTTP route (payment/paid-call.ts):
 * the x402 `PaymentPayload` comes in the call's `_meta["x402/payment"]` and the holder's sign-in in
 * `_meta["sign-in-with-x"]`; a refusal is an `isError` result carrying x402's `PaymentRequired`, a success carries
 * the `SettlementResponse` in `_meta["x402/payment-response"]` (coinbase/x402 `specs/transports-v2/mcp.md`;
 * docs/architecture.md, "MCP").
 */
import {
  type ErrorBody,
  MCP_PAYMENT_ERROR,
  MCP_PAYMENT_META,
  MCP_PAYMENT_RESPONSE_META,
  MCP_SIGN_IN_META,
  type McpReadToolName,
  mcpReadTools,
  mcpToolDescriptions,
  type PaidRouteName,
  type PaymentRequired,
  paidRouteNameOf,
  paidRoutes,
  safeParseRequest,
} from "@agent-tools/schema";
import { type CallToolResult, Server } from "@modelcontextprotocol/server";
import type { SettleResponse } from "@x402/core/types";
import type { Logger } from "pino";
import type { AgentRecords } from "../agents/agent-records.js";
import type { CollectionIndex } from "../chain/collection-index.js";
import { HttpError, uncharged, validationError } from "../http/errors.js";
import type { PaidCalls } from "../payment/paid-call-types.js";
import { signInHeaderValue } from "../payment/sign-in-value.js";
import { runPaidCall, toolFor } from "../tools/run-paid-call.js";
import type { ToolSet } from "../tools/types.js";

export interface McpServerDeps {
  paidCalls: PaidCalls;
  tools: ToolSet;
  collection: CollectionIndex;
  records: AgentRecords;
  now: () => Date;
  logger: Logger;
  /** The service's name and version, as `initialize` and `server/discover` answer them. */
  serverInfo: { name: string; version: string };
}

/** Built on the first `tools/list`: a server that is never asked over MCP spends nothing on it at start. */
let toolList: ReturnType<typeof mcpToolDescriptions> | undefined;
function listedTools(): ReturnType<typeof mcpToolDescriptions> {
  toolList ??= mcpToolDescriptions();
  return toolList;
}

/**
 * A refused payment: x402's `PaymentRequired` in the `x402/error` wrapper, as the result's text, the form x402's MCP
 * transport requires. Error results carry no `structuredContent`: stock MCP clients check it against the tool's
 * output schema, even on an error, and throw (docs/architecture.md, "MCP").
 */
function paymentRequiredResult(paymentRequired: PaymentRequired, settlement?: unknown): CallToolResult {
  const data = settlement ? { ...paymentRequired, [MCP_PAYMENT_RESPONSE_META]: settlement } : paymentRequired;
  return {
    isError: true,
    content: [
      {
        type: "text",
        text: JSON.stringify({ [MCP_PAYMENT_ERROR]: { code: 402, message: paymentRequired.error, data } }),
      },
    ],
  };
}

/**
 * A call no payment can make right (bad input, unknown token, upstream failure): the error body of the HTTP API as
 * the result's text, with the offending fields, and no `structuredContent` (see paymentRequiredResult).
 */
function errorResult(error: unknown, logger: Logger): CallToolResult {
  const known = error instanceof HttpError ? error : new HttpError("internal_error", uncharged("The tool failed."));
  if (!(error instanceof HttpError)) logger.error({ err: error }, "MCP tool call failed");
  const body: ErrorBody = { error: { code: known.code, message: known.message, details: known.details } };
  return { isError: true, content: [{ type: "text", text: JSON.stringify(body) }] };
}

const TOOL_LIST_CACHE_HINT = { ttlMs: 3_600_000, cacheScope: "public" } as const;

/** A fresh MCP server for one request; `requestId` ties its paid calls and logs to the HTTP request. */
export function createMcpServer(deps: McpServerDeps, requestId: string): Server {
  const server = new Server(deps.serverInfo, {
    capabilities: { tools: {} },
    // 2026-07-28 lets a result say how long it may be kept: the tool list is the same for every caller and changes
    // only with a new version of the service.
    cacheHints: { "tools/list": TOOL_LIST_CACHE_HINT },
  });
  server.setRequestHandler("tools/list", async () => ({ tools: listedTools() }));
  server.setRequestHandler("tools/call", async (request) => {
    const { name, arguments: args = {}, _meta: meta } = request.params;
    try {
      const routeName = paidRouteNameOf(name);
      if (routeName) return await paidTool(deps, routeName, args, meta, requestId);
      // Own names only: `__proto__`, `constructor` and the like are unknown tools, not properties.
      if (Object.hasOwn(mcpReadTools, name)) return await readTool(deps, name as McpReadToolName, args);
      throw new HttpError("unknown_tool", `There is no tool named ${name.slice(0, 80)}; tools/list names them.`, [
        { field: "name", message: "unknown tool" },
      ]);
    } catch (error) {
      return errorResult(error, deps.logger.child({ requestId, tool: name }));
    }
  });
  return server;
}

async function readTool(deps: McpServerDeps, name: McpReadToolName, args: unknown): Promise<CallToolResult> {
  const parsed = safeParseRequest(mcpReadTools[name].request, args);
  if (!parsed.success) throw validationError(parsed.error);
  const { tokenId } = parsed.data;
  const record =
    name === "agent_info"
      ? await deps.records.info(tokenId)
      : name === "agent_registration"
        ? await deps.records.registration(tokenId)
        : await deps.records.binding(tokenId);
  return {
    structuredContent: record as unknown as Record<string, unknown>,
    content: [{ type: "text", text: JSON.stringify(record) }],
  };
}

async function paidTool(
  deps: McpServerDeps,
  routeName: PaidRouteName,
  args: unknown,
  meta: Record<string, unknown> | undefined,
  requestId: string,
): Promise<CallToolResult> {
  const route = paidRoutes[routeName];
  const payment = meta?.[MCP_PAYMENT_META];
  const signIn = signInHeaderValue(meta?.[MCP_SIGN_IN_META]);
  const admission = await deps.paidCalls.admit({
    route,
    input: args,
    inputFrom: "body",
    ...(signIn !== undefined ? { signIn } : {}),
    ...(payment !== undefined ? { payment: payment as Record<string, unknown> } : {}),
    method: "MCP",
    requestId,
  });
  if (!admission.admitted) {
    // The same payment and request under a payment identifier: the answer it was paid for, again.
    if ("answered" in admission) return paidResult(admission.answered.output, admission.answered.settlement);
    return paymentRequiredResult(admission.refusal.paymentRequired);
  }
  const { call } = admission;
  const outcome = await runPaidCall(call, toolFor(deps.tools, routeName), deps);
  if (!outcome.settled) {
    return paymentRequiredResult(outcome.refusal.paymentRequired, {
      success: false,
      errorReason: outcome.refusal.reason,
      transaction: "",
      network: call.price.requirements.network,
    });
  }
  return paidResult(outcome.output, outcome.settlement);
}

/** A paid tool's answer: the output as structured content, its brief as text, the settlement in `_meta`. */
function paidResult(answer: unknown, settlement: SettleResponse): CallToolResult {
  const output = answer as { brief?: unknown } & Record<string, unknown>;
  return {
    structuredContent: output,
    content: [{ type: "text", text: typeof output.brief === "string" ? output.brief : JSON.stringify(output) }],
    _meta: { [MCP_PAYMENT_RESPONSE_META]: settlement },
  };
}

/**
 * The service's MCP server: `tools/list` and `tools/call`, one instance per request, the same for every protocol
 * revision mcp-endpoint.ts serves. A paid tool is the same paid call as its HTTP route, its payment, sign-in and
 * settlement carried in `_meta`; a refusal takes one of the two bindings of x402's MCP transport (coinbase/x402
 * `specs/transports-v2/mcp.md`; docs/architecture.md, "MCP"; docs/decisions.md, "MCP refusals").
 */
import {
  MCP_PAYMENT_META,
  MCP_PAYMENT_REQUIRED_RESULT,
  MCP_PAYMENT_RESPONSE_META,
  MCP_SIGN_IN_META,
  MCP_X402_EXTENSION,
  type McpReadToolName,
  mcpReadTools,
  mcpToolDescriptions,
  type PaidRouteName,
  type PaymentRequired,
  paidRouteNameOf,
  safeParseRequest,
} from "@agent-tools/schema";
import { type CallToolResult, CLIENT_CAPABILITIES_META_KEY, Server } from "@modelcontextprotocol/server";
import type { SettleResponse } from "@x402/core/types";
import type { Logger } from "pino";
import type { AgentRecords } from "../../agents/agent-records.js";
import type { CollectionIndex } from "../../chain/collection-index.js";
import { clipped, errorBody, ServiceError, toServiceError, validationError } from "../../errors/service-error.js";
import type { PaidCalls } from "../../paid-call/paid-call-types.js";
import { servePaidCall } from "../../paid-call/serve-paid-call.js";
import type { ToolSet } from "../../tools/types.js";

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
 * How a refusal reaches the client, in x402's MCP transport (coinbase/x402 `specs/transports-v2/mcp.md`): a 2026-07-28
 * request whose client capabilities name `org.x402/payment` gets the extension binding (`resultType:
 * "payment_required"` with `result.paymentRequired`); any other the tool-result binding (an `isError` result with the
 * `PaymentRequired` as `structuredContent` and, the same object, as JSON in `content[0].text`).
 */
type RefusalBinding = "extension" | "tool-result";

/**
 * A refused payment, in the client's binding; `settlement` is the failed settlement of a call whose payment did not
 * settle, in `_meta` as on a success.
 */
function paymentRequiredResult(
  binding: RefusalBinding,
  paymentRequired: PaymentRequired,
  settlement?: SettleResponse,
): CallToolResult {
  const meta = settlement ? { _meta: { [MCP_PAYMENT_RESPONSE_META]: settlement } } : {};
  if (binding === "extension") {
    // A result type of x402's extension: the SDK sends a tools/call handler's own resultType as it is.
    return { resultType: MCP_PAYMENT_REQUIRED_RESULT, paymentRequired, ...meta } as unknown as CallToolResult;
  }
  return {
    isError: true,
    structuredContent: paymentRequired,
    content: [{ type: "text", text: JSON.stringify(paymentRequired) }],
    ...meta,
  };
}

/**
 * The binding of a request's refusals: the extension's when its per-request client capabilities (2026-07-28) name
 * it, which only a server built for that era advertises and reads.
 */
function bindingOf(ctx: unknown, extension: boolean): RefusalBinding {
  if (!extension) return "tool-result";
  const envelope = (ctx as { mcpReq?: { envelope?: Record<string, unknown> } } | undefined)?.mcpReq?.envelope;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[MCP_X402_EXTENSION] === undefined ? "tool-result" : "extension";
}

/**
 * A call no payment can make right (bad input, unknown token, upstream failure): the error body of the HTTP API as
 * the result's text, with the offending fields. It carries no `structuredContent`: a tool's output schema admits its
 * answer and a `PaymentRequired` only (@agent-tools/schema `mcpPaidTool`).
 */
function errorResult(error: unknown, logger: Logger): CallToolResult {
  if (!(error instanceof ServiceError)) logger.error({ err: error }, "MCP tool call failed");
  const body = errorBody(toServiceError(error, "The tool failed."));
  return { isError: true, content: [{ type: "text", text: JSON.stringify(body) }] };
}

const TOOL_LIST_CACHE_HINT = { ttlMs: 3_600_000, cacheScope: "public" } as const;

/**
 * A fresh MCP server for one request; `requestId` ties its paid calls and logs to the HTTP request. `extension`:
 * the request is of the 2026-07-28 era, where x402's MCP extension is advertised and served.
 */
export function createMcpServer(deps: McpServerDeps, requestId: string, extension = false): Server {
  const server = new Server(deps.serverInfo, {
    capabilities: { tools: {}, ...(extension ? { extensions: { [MCP_X402_EXTENSION]: {} } } : {}) },
    // 2026-07-28 lets a result say how long it may be kept: the tool list is the same for every caller and changes
    // only with a new version of the service.
    cacheHints: { "tools/list": TOOL_LIST_CACHE_HINT },
  });
  server.setRequestHandler("tools/list", async () => ({ tools: listedTools() }));
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const { name, arguments: args = {}, _meta: meta } = request.params;
    try {
      const routeName = paidRouteNameOf(name);
      if (routeName) return await paidTool(deps, routeName, args, meta, requestId, bindingOf(ctx, extension));
      // Own names only: `__proto__`, `constructor` and the like are unknown tools, not properties.
      if (Object.hasOwn(mcpReadTools, name)) return await readTool(deps, name as McpReadToolName, args);
      throw new ServiceError("unknown_tool", `There is no tool named ${clipped(name, 80)}; tools/list names them.`, [
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
  binding: RefusalBinding,
): Promise<CallToolResult> {
  const payment = meta?.[MCP_PAYMENT_META];
  const signIn = meta?.[MCP_SIGN_IN_META];
  const result = await servePaidCall(deps, routeName, {
    input: args,
    inputFrom: "body",
    ...(signIn !== undefined ? { signIn } : {}),
    ...(payment !== undefined ? { payment: payment as Record<string, unknown> } : {}),
    method: "MCP",
    requestId,
  });
  if (result.kind === "answer") return paidResult(result.output, result.settlement);
  return paymentRequiredResult(binding, result.refusal.paymentRequired, result.failedSettlement);
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

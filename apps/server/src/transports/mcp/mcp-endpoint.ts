/**
 * `POST /mcp`: the tools over the Model Context Protocol, Streamable HTTP and stateless, so any instance answers any
 * request. Two protocol eras are served side by side: 2026-07-28 by the SDK's per-request handler (`createMcpHandler`),
 * the 2025 revisions, with their `initialize` handshake, by one SDK transport per request; both build the same MCP
 * server (mcp-server.ts) (docs/architecture.md, "MCP").
 */
import {
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { RequestHandler } from "express";
import { createMcpServer, type McpServerDeps } from "./mcp-server.js";
import { sendWebResponse, webRequestOf } from "./web-exchange.js";

export interface McpEndpointDeps extends McpServerDeps {
  /** The service's public URL: the base of the web request each MCP request is handed to the SDK as. */
  publicUrl: string;
}

/** The header that carries the HTTP request's id to the server built for it. */
const REQUEST_ID_HEADER = "x-request-id";

/**
 * A JSON-RPC batch: refused. MCP 2025-06-18 removed batching, and the per-address limits count HTTP requests, so a
 * batch would be a hundred calls for the price of one request (docs/threat-model.md, "MCP").
 */
const BATCH_REFUSAL = {
  jsonrpc: "2.0",
  id: null,
  error: {
    code: -32600,
    message: "JSON-RPC batches are not supported (MCP 2025-06-18 removed them): send one message per request.",
  },
};

const NOT_JSON_REFUSAL = {
  jsonrpc: "2.0",
  id: null,
  error: {
    code: -32000,
    message: "Unsupported Media Type: send the JSON-RPC message with Content-Type application/json.",
  },
};

/** The Express handler of `POST /mcp`: routes each request to its protocol era, one MCP server per request. */
export function mcpEndpoint(deps: McpEndpointDeps): RequestHandler {
  const logger = deps.logger;
  const modern = createMcpHandler(
    ({ requestInfo }) => createMcpServer(deps, requestInfo?.headers.get(REQUEST_ID_HEADER) ?? "", true),
    {
      legacy: "reject",
      // Requests the SDK refuses before any tool runs (an unknown revision, a malformed envelope): the caller gets
      // the JSON-RPC error, the log the reason.
      onerror: (error) => logger.debug({ err: error.message }, "MCP request refused"),
    },
  );
  return async (req, res) => {
    if (Array.isArray(req.body)) {
      res.status(400).json(BATCH_REFUSAL);
      return;
    }
    // Both eras read the body parsed already by express.json(), which parses only JSON.
    if (!isJsonContentType(req.get("content-type") ?? "")) {
      res.status(415).json(NOT_JSON_REFUSAL);
      return;
    }
    const requestId = String(req.id ?? "");
    const { request, closed } = webRequestOf(req, res, deps.publicUrl, { [REQUEST_ID_HEADER]: requestId });
    const response = (await isLegacyRequest(request, req.body))
      ? await serveLegacy(deps, request, req.body, requestId)
      : await modern.fetch(request, { parsedBody: req.body });
    await sendWebResponse(response, res, closed);
  };
}

/**
 * A 2025-era request: a fresh server on a stateless transport that answers in one JSON body (no stream: the tools
 * send no notifications), closed once the answer is written.
 */
async function serveLegacy(
  deps: McpServerDeps,
  request: Request,
  parsedBody: unknown,
  requestId: string,
): Promise<Response> {
  const server = createMcpServer(deps, requestId);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody });
  } finally {
    void transport.close();
    void server.close();
  }
}

/** `GET` and `DELETE /mcp`: a stateless endpoint has no stream to open and no session to end (405, as MCP says). */
export const mcpMethodNotAllowed: RequestHandler = (_req, res) => {
  res
    .status(405)
    .set("Allow", "POST")
    .json({
      error: {
        code: "method_not_allowed",
        message: "The MCP endpoint is stateless: send JSON-RPC requests with POST.",
        details: [],
      },
    });
};

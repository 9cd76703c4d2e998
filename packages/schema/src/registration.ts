import { A2A_AGENT_CARD_PATH, A2A_PROTOCOL_VERSION } from "./a2a.js";
import { MCP_PROTOCOL_VERSION } from "./mcp.js";
import type { RegistrationFile } from "./public.js";
import { toolRoutes } from "./routes.js";

/**
 * The services an agent's ERC-8004 registration file lists: its web record, the OpenAPI document, MCP, A2A (by its
 * agent card), the x402 catalog and each paid tool.
 *
 * @param publicUrl The service's public origin, without a trailing slash.
 * @param tokenId The agent's token.
 * @example
 * import { registrationServices } from "@agent-tools/schema";
 * const mcp = registrationServices("http://127.0.0.1:8402", 7).find((s) => s.name === "MCP"); // version "2026-07-28"
 */
export function registrationServices(publicUrl: string, tokenId: number): RegistrationFile["services"] {
  return [
    { name: "web", endpoint: `${publicUrl}/agents/info/${tokenId}` },
    { name: "OpenAPI", endpoint: `${publicUrl}/openapi.json`, version: "3.1.0" },
    { name: "MCP", endpoint: `${publicUrl}/mcp`, version: MCP_PROTOCOL_VERSION },
    // ERC-8004 names an A2A service by its agent card.
    { name: "A2A", endpoint: `${publicUrl}${A2A_AGENT_CARD_PATH}`, version: A2A_PROTOCOL_VERSION },
    { name: "x402", endpoint: `${publicUrl}/.well-known/x402`, version: "2" },
    ...Object.values(toolRoutes).map((route) => ({
      name: route.operationId,
      endpoint: `${publicUrl}${route.path}`,
      version: "1.0.0",
    })),
  ];
}

/**
 * The service's A2A agent card (`/.well-known/agent-card.json`, A2A 1.0): one skill per paid tool, with its two
 * prices, and x402's A2A extension in both versions the agent serves, their parameters saying where and in what the
 * skills are paid (docs/architecture.md, "A2A"). Neither version is marked required: marked on both, a client would
 * have to activate both; a message that activates neither is refused (paid-skills-handler.ts).
 */

import type { AgentCard, AgentSkill } from "@a2a-js/sdk";
import {
  A2A_PATH,
  A2A_PROTOCOL_VERSION,
  API_VERSION,
  a2aSkillIds,
  clearanceWording,
  formatUsd,
  type PaidRouteName,
  type PaymentTerms,
  paidRoutes,
  pricePoints,
  SERVICE_DESCRIPTION,
  SERVICE_DISPLAY_NAME,
  SERVICE_ICON_PATH,
  X402_A2A_EXTENSION_URIS,
  type X402A2aExtensionVersion,
} from "@agent-tools/schema";

export interface AgentCardOptions {
  publicUrl: string;
  payment: PaymentTerms;
}

/** A skill of a paid route: its id (the MCP tool's name), what it does, and what it costs. */
function skillOf(name: PaidRouteName): AgentSkill {
  const route = paidRoutes[name];
  const price = `${formatUsd(pricePoints.standard)} USD a call, ${formatUsd(pricePoints.discounted)} USD for ${
    clearanceWording[route.minimumClearance]
  } signed in`;
  return {
    id: a2aSkillIds[name],
    name: route.summary,
    description: `${route.description} Price: ${price}, paid with x402.`,
    tags: [...route.tags, "x402"],
    examples: [JSON.stringify({ skill: a2aSkillIds[name], input: route.sampleInput })],
    inputModes: ["application/json"],
    outputModes: ["application/json", "text/plain"],
    securityRequirements: [],
  };
}

/** The agent card, built once per deployment (its URLs and payment terms do not change while it runs). */
export function buildAgentCard(options: AgentCardOptions): AgentCard {
  const { publicUrl, payment } = options;
  const names = Object.keys(paidRoutes) as PaidRouteName[];
  const params = {
    x402Version: 2,
    network: payment.network,
    asset: payment.asset,
    payTo: payment.payTo,
    prices: Object.fromEntries(
      names.map((name) => [a2aSkillIds[name], { standard: pricePoints.standard, discounted: pricePoints.discounted }]),
    ),
  };
  return {
    name: SERVICE_DISPLAY_NAME,
    description: SERVICE_DESCRIPTION,
    supportedInterfaces: [
      { url: `${publicUrl}${A2A_PATH}`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    provider: { organization: SERVICE_DISPLAY_NAME, url: publicUrl },
    version: API_VERSION,
    documentationUrl: `${publicUrl}/`,
    iconUrl: `${publicUrl}${SERVICE_ICON_PATH}`,
    capabilities: {
      streaming: false,
      pushNotifications: false,
      extendedAgentCard: false,
      extensions: (Object.keys(X402_A2A_EXTENSION_URIS) as X402A2aExtensionVersion[]).map((version) => ({
        uri: X402_A2A_EXTENSION_URIS[version],
        description:
          `x402's A2A extension, version ${version}: every skill is paid per call with x402 version 2 (scheme exact). ` +
          "Activate this version or the other one (A2A-Extensions header): a message without a payment gets a task " +
          "waiting for one (input-required, x402.payment.required in its status message's metadata); the payment " +
          "goes in the next message's metadata (x402.payment.payload).",
        required: false,
        params,
      })),
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["application/json"],
    defaultOutputModes: ["application/json", "text/plain"],
    skills: names.map(skillOf),
    signatures: [],
  };
}

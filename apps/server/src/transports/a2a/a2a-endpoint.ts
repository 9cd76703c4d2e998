/**
 * The A2A agent: its card at `/.well-known/agent-card.json` and its JSON-RPC endpoint at `/a2a` (A2A 1.0), served by
 * `@a2a-js/sdk`'s request handler (as paid-skills-handler.ts adapts it) with the paid skills' executor
 * (./skill-executor.ts) and tasks kept in the shared store (store/a2a-tasks.ts). docs/architecture.md, "A2A".
 */

import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import type { PaymentTerms } from "@agent-tools/schema";
import type { RequestHandler } from "express";
import { buildAgentCard } from "./agent-card.js";
import { PaidSkillsRequestHandler } from "./paid-skills-handler.js";
import { createSkillExecutor, type SkillExecutorDeps } from "./skill-executor.js";

export interface A2aEndpointDeps extends SkillExecutorDeps {
  publicUrl: string;
  payment: PaymentTerms;
}

export interface A2aEndpoint {
  /** `GET /.well-known/agent-card.json`, mounted at that path. */
  agentCard: RequestHandler;
  /** `POST /a2a`, mounted at that path. */
  jsonRpc: RequestHandler;
}

export function a2aEndpoint(deps: A2aEndpointDeps): A2aEndpoint {
  const card = buildAgentCard({ publicUrl: deps.publicUrl, payment: deps.payment });
  const handler = new PaidSkillsRequestHandler({
    card,
    tasks: deps.tasks,
    executor: createSkillExecutor(deps),
    now: deps.now,
  });
  return {
    agentCard: agentCardHandler({ agentCardProvider: handler }),
    // Callers are anonymous to A2A: who pays is said by the payment, who holds a token by the sign-in.
    jsonRpc: jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
  };
}

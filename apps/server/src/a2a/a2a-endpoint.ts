/**
 * The A2A agent: its card at `/.well-known/agent-card.json` and its JSON-RPC endpoint at `/a2a` (A2A 1.0), served by
 * `@a2a-js/sdk`'s request handler with the paid skills' executor (./skill-executor.ts) and tasks kept in the shared
 * store (store/a2a-tasks.ts). docs/architecture.md, "A2A".
 */

import { DefaultRequestHandler, type TaskStore } from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import type { PaymentTerms } from "@agent-tools/schema";
import type { RequestHandler } from "express";
import { buildAgentCard } from "./agent-card.js";
import { createSkillExecutor, type SkillExecutorDeps } from "./skill-executor.js";

export interface A2aEndpointDeps extends SkillExecutorDeps {
  publicUrl: string;
  payment: PaymentTerms;
  tasks: TaskStore;
}

export interface A2aEndpoint {
  /** `GET /.well-known/agent-card.json`, mounted at that path. */
  agentCard: RequestHandler;
  /** `POST /a2a`, mounted at that path. */
  jsonRpc: RequestHandler;
}

export function a2aEndpoint(deps: A2aEndpointDeps): A2aEndpoint {
  const card = buildAgentCard({ publicUrl: deps.publicUrl, payment: deps.payment });
  const handler = new DefaultRequestHandler(card, deps.tasks, createSkillExecutor(deps));
  return {
    agentCard: agentCardHandler({ agentCardProvider: handler }),
    // Callers are anonymous to A2A: who pays is said by the payment, who holds a token by the sign-in.
    jsonRpc: jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
  };
}

import {
  type AgentInfo,
  agentInfoSchema,
  type BindingStatus,
  bindingStatusSchema,
  type Health,
  healthSchema,
  type PaymentCatalog,
  paymentCatalogSchema,
  type RegistrationFile,
  registrationFileSchema,
} from "@agent-tools/schema";
import { z } from "zod";
import type { ClientContext } from "../context.js";
import { errorFromAnswer, parseAnswer, withRetries } from "../transport.js";

/** A public GET, safe to repeat: sent again on network errors; anything but 200 is thrown as its error class. */
async function getPublic<S extends z.ZodType>(context: ClientContext, path: string, schema: S): Promise<z.output<S>> {
  const { transport } = context;
  const answer = await withRetries(() =>
    transport.send(`${transport.baseUrl}${path}`, { headers: { accept: "application/json" } }),
  );
  if (answer.status !== 200) throw errorFromAnswer(answer);
  return parseAnswer(schema, answer, path);
}

/** Parameters of {@link getAgent}, {@link getRegistration} and {@link getBinding}: the token of the agent. */
export type AgentParameters = { tokenId: number };

/** What `client.health()` resolves with. */
export type GetHealthReturnType = Health;
/** `GET /healthz`: whether the service is up. */
export const getHealth = (context: ClientContext): Promise<GetHealthReturnType> =>
  getPublic(context, "/healthz", healthSchema);

/** What `client.agentInfo()` resolves with: the agent's identity record. */
export type GetAgentReturnType = AgentInfo;
/** `GET /agents/info/:tokenId`: the identity record of a revealed agent (`NotFoundError` before its reveal). */
export const getAgent = (context: ClientContext, { tokenId }: AgentParameters): Promise<GetAgentReturnType> =>
  getPublic(context, `/agents/info/${encodeURIComponent(tokenId)}`, agentInfoSchema);

/** What `client.registration()` resolves with: the agent's ERC-8004 registration file. */
export type GetRegistrationReturnType = RegistrationFile;
/** `GET /.well-known/agents/:tokenId.json`: the agent's ERC-8004 registration file. */
export const getRegistration = (
  context: ClientContext,
  { tokenId }: AgentParameters,
): Promise<GetRegistrationReturnType> =>
  getPublic(context, `/.well-known/agents/${encodeURIComponent(tokenId)}.json`, registrationFileSchema);

/** What `client.binding()` resolves with: the agent's ERC-8217 binding status. */
export type GetBindingReturnType = BindingStatus;
/** `GET /agents/:tokenId/binding`: the live ERC-8217 binding status of the agent. */
export const getBinding = (context: ClientContext, { tokenId }: AgentParameters): Promise<GetBindingReturnType> =>
  getPublic(context, `/agents/${encodeURIComponent(tokenId)}/binding`, bindingStatusSchema);

/** What `client.catalog()` resolves with: the payment catalog. */
export type GetCatalogReturnType = PaymentCatalog;
/** `GET /.well-known/x402`: the payment catalog (every paid route and its prices). */
export const getCatalog = (context: ClientContext): Promise<GetCatalogReturnType> =>
  getPublic(context, "/.well-known/x402", paymentCatalogSchema);

/** What `client.openapi()` resolves with: the OpenAPI 3.1 document, as JSON. */
export type GetOpenApiReturnType = Record<string, unknown>;
/** `GET /openapi.json`: the OpenAPI 3.1 document. */
export const getOpenApi = (context: ClientContext): Promise<GetOpenApiReturnType> =>
  getPublic(context, "/openapi.json", z.record(z.string(), z.unknown()));

import {
  type AgentInfo,
  type BindingStatus,
  type RegistrationFile,
  tokenIdParamSchema,
  toolRoutes,
} from "@agent-tools/schema";
import { type Response, Router } from "express";
import type { AgentRegistryReader, LiveBinding } from "../chain/agent-registry.js";
import type { CollectionIndex, IndexedToken } from "../chain/collection-index.js";
import { HttpError, validationError } from "../http/errors.js";
import { agentImageSvg } from "./agent-image.js";

export interface AgentRoutesDeps {
  collection: CollectionIndex;
  registry: AgentRegistryReader;
  publicUrl: string;
}

export const EDITION = "Genesis";

export function agentName(tokenId: number): string {
  return `Agent #${tokenId}`;
}

function parseTokenId(raw: string): number {
  const parsed = tokenIdParamSchema.safeParse(raw);
  if (!parsed.success) throw validationError(parsed.error, "token id");
  return parsed.data;
}

/** The token as of the snapshot (at most the staleness bound old); 404 when it was never minted. */
async function existingToken(collection: CollectionIndex, tokenId: number): Promise<IndexedToken> {
  await collection.fresh();
  const token = collection.token(tokenId);
  if (!token) throw new HttpError("token_not_found", `Token ${tokenId} does not exist.`);
  return token;
}

async function revealedToken(collection: CollectionIndex, tokenId: number): Promise<IndexedToken> {
  const token = await existingToken(collection, tokenId);
  if (!token.revealed) {
    throw new HttpError("agent_not_revealed", `Agent ${tokenId} is not revealed yet: its identity appears at reveal.`);
  }
  return token;
}

/** Whether two readings of a binding say the same (the block they hold at aside). */
function sameBinding(a: LiveBinding, b: LiveBinding): boolean {
  return (
    a.bound === b.bound &&
    a.owner === b.owner &&
    a.agentId === b.agentId &&
    a.agentRegistry === b.agentRegistry &&
    a.bindingContract === b.bindingContract &&
    a.tokenContract === b.tokenContract &&
    a.boundTokenId === b.boundTokenId
  );
}

function withArticle(word: string): string {
  return `${/^[AEIOU]/.test(word) ? "an" : "a"} ${word}`;
}

function describe(token: IndexedToken): string {
  const { rarity, traits } = token;
  const kind = [traits.Class, traits.Mission ? `on ${traits.Mission} missions` : undefined].filter(Boolean).join(" ");
  return (
    `${agentName(token.tokenId)} is ${withArticle(rarity.tier)} token-bound agent of the Agent Tools collection` +
    (kind ? `: ${withArticle(kind)}` : "") +
    (rarity.rank ? `, rarity rank ${rarity.rank}` : "") +
    `. Clearance ${token.clearance}.`
  );
}

/** Public agent routes: identity record, ERC-8004 registration file, live ERC-8217 binding, agent image. */
export function agentRoutes(deps: AgentRoutesDeps): Router {
  const { collection, registry, publicUrl } = deps;
  const router = Router();
  /**
   * Identity records, each built once and kept while its inputs stay the same objects: the index makes a new
   * token object when anything of the token changes (owner, traits, clearance, rarity), and the registry reader a
   * new binding when an event touches the agent.
   */
  const records = new WeakMap<IndexedToken, { binding: LiveBinding; json: Buffer }>();
  const sendJson = (res: Response, json: Buffer) => {
    res.setHeader("content-type", "application/json; charset=utf-8");
    res.setHeader("content-length", json.length);
    res.end(json);
  };

  router.get("/agents/info/:tokenId", async (req, res) => {
    const tokenId = parseTokenId(req.params.tokenId);
    const token = await revealedToken(collection, tokenId);
    const binding = await registry.readBinding(tokenId);
    const kept = records.get(token);
    if (kept && sameBinding(kept.binding, binding)) return sendJson(res, kept.json);
    const table = collection.rarityTable();
    const body: AgentInfo = {
      tokenId,
      name: agentName(tokenId),
      edition: EDITION,
      owner: binding.owner,
      image: `${publicUrl}/agents/${tokenId}/image.svg`,
      traits: token.traits,
      rarity: { tier: token.rarity.tier, score: token.rarity.score!, rank: token.rarity.rank!, of: table.ranked },
      clearance: token.clearance,
      registration: {
        agentId: binding.agentId.toString(),
        agentRegistry: binding.agentRegistry,
        registrationFile: `${publicUrl}/.well-known/agents/${tokenId}.json`,
        binding: { bound: binding.bound, standard: "ERC-8217", statusUrl: `${publicUrl}/agents/${tokenId}/binding` },
      },
    };
    const json = Buffer.from(JSON.stringify(body));
    records.set(token, { binding, json });
    sendJson(res, json);
  });

  router.get("/.well-known/agents/:file", async (req, res) => {
    const match = /^(.+)\.json$/.exec(req.params.file);
    if (!match) throw new HttpError("not_found", "Registration files are at /.well-known/agents/<tokenId>.json.");
    const tokenId = parseTokenId(match[1]!);
    const token = await revealedToken(collection, tokenId);
    const body: RegistrationFile = {
      type: "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
      name: agentName(tokenId),
      description: describe(token),
      image: `${publicUrl}/agents/${tokenId}/image.svg`,
      services: [
        { name: "web", endpoint: `${publicUrl}/agents/info/${tokenId}` },
        { name: "OpenAPI", endpoint: `${publicUrl}/openapi.json`, version: "3.1.0" },
        { name: "x402", endpoint: `${publicUrl}/.well-known/x402`, version: "2" },
        ...Object.values(toolRoutes).map((route) => ({
          name: route.operationId,
          endpoint: `${publicUrl}${route.path}`,
          version: "1.0.0",
        })),
      ],
      x402Support: true,
      active: true,
      registrations: [{ agentId: Number(registry.agentIdOf(tokenId)), agentRegistry: registry.agentRegistry() }],
      supportedTrust: [],
    };
    res.json(body);
  });

  router.get("/agents/:tokenId/binding", async (req, res) => {
    const tokenId = parseTokenId(req.params.tokenId);
    await existingToken(collection, tokenId);
    const binding = await registry.readBinding(tokenId);
    const body: BindingStatus = {
      tokenId,
      agentId: binding.agentId.toString(),
      agentRegistry: binding.agentRegistry,
      bound: binding.bound,
      standard: "ERC-8217",
      bindingContract: binding.bindingContract,
      tokenStandard: binding.standard as BindingStatus["tokenStandard"],
      tokenContract: binding.tokenContract,
      boundTokenId: binding.boundTokenId?.toString() ?? null,
      owner: binding.owner,
      blockNumber: binding.blockNumber.toString(),
    };
    // Live status: never served from a cache.
    res.set("Cache-Control", "no-store").json(body);
  });

  router.get("/agents/:tokenId/image.svg", async (req, res) => {
    const tokenId = parseTokenId(req.params.tokenId);
    const token = await existingToken(collection, tokenId);
    res.type("image/svg+xml").send(agentImageSvg(token));
  });

  return router;
}

/**
 * The public records of an agent, as the HTTP routes and the MCP tools answer them: identity record, ERC-8004
 * registration file, live ERC-8217 binding status. Errors are `ServiceError`s (404 for a token never minted or not
 * revealed yet).
 */
import {
  type AgentInfo,
  type BindingStatus,
  type RegistrationFile,
  registrationServices,
  safeParseRequest,
  tokenIdParamSchema,
} from "@agent-tools/schema";
import type { AgentRegistryReader, LiveBinding } from "../chain/agent-registry.js";
import type { CollectionIndex, IndexedToken } from "../chain/collection-index.js";
import { ServiceError, validationError } from "../errors/service-error.js";

export interface AgentRecordsDeps {
  collection: CollectionIndex;
  registry: AgentRegistryReader;
  publicUrl: string;
}

export interface AgentRecords {
  /** The identity record, serialized (built once while the token and its binding stay the same). */
  infoJson(tokenId: number): Promise<Buffer>;
  info(tokenId: number): Promise<AgentInfo>;
  registration(tokenId: number): Promise<RegistrationFile>;
  binding(tokenId: number): Promise<BindingStatus>;
  /** The token as of the snapshot; 404 when it was never minted. */
  existingToken(tokenId: number): Promise<IndexedToken>;
}

export const EDITION = "Genesis";

export function agentName(tokenId: number): string {
  return `Agent #${tokenId}`;
}

export function parseTokenId(raw: string): number {
  const parsed = safeParseRequest(tokenIdParamSchema, raw);
  if (!parsed.success) throw validationError(parsed.error, "token id");
  return parsed.data;
}

/** The token as of the snapshot (at most the staleness bound old); 404 when it was never minted. */
async function existingToken(collection: CollectionIndex, tokenId: number): Promise<IndexedToken> {
  await collection.fresh();
  const token = collection.token(tokenId);
  if (!token) throw new ServiceError("token_not_found", `Token ${tokenId} does not exist.`);
  return token;
}

async function revealedToken(collection: CollectionIndex, tokenId: number): Promise<IndexedToken> {
  const token = await existingToken(collection, tokenId);
  if (!token.revealed) {
    throw new ServiceError(
      "agent_not_revealed",
      `Agent ${tokenId} is not revealed yet: its identity appears at reveal.`,
    );
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

export function createAgentRecords(deps: AgentRecordsDeps): AgentRecords {
  const { collection, registry, publicUrl } = deps;
  /**
   * Identity records, each built once and kept while its inputs stay the same objects: the index makes a new
   * token object when anything of the token changes (owner, traits, clearance, rarity), and the registry reader a
   * new binding when an event touches the agent.
   */
  const records = new WeakMap<IndexedToken, { binding: LiveBinding; body: AgentInfo; json: Buffer }>();

  /** The record and its serialized form, built together and kept together. */
  async function record(tokenId: number): Promise<{ body: AgentInfo; json: Buffer }> {
    const token = await revealedToken(collection, tokenId);
    const binding = await registry.readBinding(tokenId);
    const kept = records.get(token);
    if (kept && sameBinding(kept.binding, binding)) return kept;
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
    const built = { binding, body, json: Buffer.from(JSON.stringify(body)) };
    records.set(token, built);
    return built;
  }

  return {
    infoJson: async (tokenId) => (await record(tokenId)).json,
    info: async (tokenId) => (await record(tokenId)).body,
    async registration(tokenId) {
      const token = await revealedToken(collection, tokenId);
      return {
        type: "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        name: agentName(tokenId),
        description: describe(token),
        image: `${publicUrl}/agents/${tokenId}/image.svg`,
        services: registrationServices(publicUrl, tokenId),
        x402Support: true,
        active: true,
        registrations: [{ agentId: Number(registry.agentIdOf(tokenId)), agentRegistry: registry.agentRegistry() }],
        supportedTrust: [],
      };
    },
    async binding(tokenId) {
      await existingToken(collection, tokenId);
      const binding = await registry.readBinding(tokenId);
      return {
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
    },
    existingToken: (tokenId) => existingToken(collection, tokenId),
  };
}

import {
  AGENT_BINDING_METADATA_KEY,
  agentBindingsAbi,
  agentRegistryId,
  decodeAgentBindingMetadata,
  identityRegistryAbi,
  tokenStandardName,
} from "@agent-tools/contracts";
import { type Address, getAddress, type Log, type PublicClient, zeroAddress } from "viem";
import type { CollectionIndex } from "./collection-index.js";

/** ERC-8217 status of a token's agent, as of the collection index's snapshot. */
export interface LiveBinding {
  agentId: bigint;
  /** CAIP-10 address of the ERC-8004 Identity Registry: `eip155:<chainId>:<address>`. */
  agentRegistry: string;
  /** Whether the agent's `agent-binding` names a binding contract that binds it to this very token. */
  bound: boolean;
  /** Binding contract named by the registry's `agent-binding` metadata; null when the agent has none. */
  bindingContract: Address | null;
  standard: string | null;
  tokenContract: Address | null;
  boundTokenId: bigint | null;
  /** Current owner of the collection token. */
  owner: Address;
  /** The block this status is known to hold at (the snapshot's). */
  blockNumber: bigint;
}

/** What the registry and the binding contract say of an agent; changes only with their events. */
type RegistryBinding = Omit<LiveBinding, "owner" | "blockNumber">;

export interface AgentRegistryReader {
  /** Agent id of the collection's token: agent t is registered for token t (see docs/api.md, "Agents, rarity and clearance"). */
  agentIdOf(tokenId: number): bigint;
  agentRegistry(): string;
  /**
   * The token's binding: the registry's `agent-binding`, the binding contract's `bindingOf` and the token's owner.
   * Read from chain once per agent, then kept until an event of the registry or of the binding contract names the
   * agent (the collection index delivers those logs at each sync), so it is as current as the snapshot.
   */
  readBinding(tokenId: number): Promise<LiveBinding>;
}

export interface AgentRegistryReaderOptions {
  client: PublicClient;
  chainId: number;
  collection: Address;
  identityRegistry: Address;
  /** The collection index: its snapshot block, its owners and its logs of the watched contracts. */
  index: CollectionIndex;
}

export function createAgentRegistryReader(options: AgentRegistryReaderOptions): AgentRegistryReader {
  const { client, collection, identityRegistry, index } = options;
  const registryId = agentRegistryId(options.chainId, identityRegistry);
  const known = new Map<bigint, Promise<RegistryBinding>>();
  const watchedBindings = new Set<string>();

  /** Forgets what the logs touch: the agents their first topic names, or everything for a log without one. */
  const forget = (logs: Log[]) => {
    for (const log of logs) {
      const agent = log.topics[1];
      if (agent === undefined) {
        known.clear();
        return;
      }
      known.delete(BigInt(agent));
    }
  };
  index.watch(identityRegistry, forget);

  async function read(agentId: bigint, blockNumber: bigint): Promise<RegistryBinding> {
    const metadata = await client
      .readContract({
        address: identityRegistry,
        abi: identityRegistryAbi,
        functionName: "getMetadata",
        args: [agentId, AGENT_BINDING_METADATA_KEY],
        blockNumber,
      })
      // An agent that was never registered has no metadata: treat it as unbound.
      .catch(() => "0x" as const);
    const bindingContract = decodeAgentBindingMetadata(metadata) ?? null;
    let binding: { standard: number; tokenContract: Address; tokenId: bigint } | null = null;
    if (bindingContract) {
      const key = bindingContract.toLowerCase();
      if (!watchedBindings.has(key)) {
        watchedBindings.add(key);
        index.watch(bindingContract, forget);
      }
      binding = await client.readContract({
        address: bindingContract,
        abi: agentBindingsAbi,
        functionName: "bindingOf",
        args: [agentId],
        blockNumber,
      });
    }
    const tokenContract = binding && binding.tokenContract !== zeroAddress ? getAddress(binding.tokenContract) : null;
    return {
      agentId,
      agentRegistry: registryId,
      bound: tokenContract !== null && tokenContract === getAddress(collection) && binding!.tokenId === agentId,
      bindingContract: bindingContract ? getAddress(bindingContract) : null,
      standard: tokenContract ? (tokenStandardName(binding!.standard) ?? null) : null,
      tokenContract,
      boundTokenId: tokenContract ? binding!.tokenId : null,
    };
  }

  return {
    agentIdOf: (tokenId) => BigInt(tokenId),
    agentRegistry: () => registryId,
    async readBinding(tokenId) {
      const agentId = BigInt(tokenId);
      const blockNumber = index.syncedBlock();
      let pending = known.get(agentId);
      if (!pending) {
        pending = read(agentId, blockNumber);
        known.set(agentId, pending);
        // A failed read is not kept: the next request tries again.
        pending.catch(() => {
          if (known.get(agentId) === pending) known.delete(agentId);
        });
      }
      const token = index.token(tokenId);
      if (!token) throw new Error(`token ${tokenId} does not exist`);
      return { ...(await pending), owner: token.owner, blockNumber: index.syncedBlock() };
    },
  };
}

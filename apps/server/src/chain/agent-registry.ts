import {
  AGENT_BINDING_METADATA_KEY,
  agentBindingsAbi,
  agentCollectionAbi,
  agentRegistryId,
  decodeAgentBindingMetadata,
  identityRegistryAbi,
  tokenStandardName,
} from "@agent-tools/contracts";
import { type Address, getAddress, type PublicClient, zeroAddress } from "viem";

/** ERC-8217 status of a token's agent, read live at one block. */
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
  blockNumber: bigint;
}

export interface AgentRegistryReader {
  /** Agent id of the collection's token: agent t is registered for token t (see README, "Agents"). */
  agentIdOf(tokenId: number): bigint;
  agentRegistry(): string;
  /** Reads the registry's `agent-binding`, the binding contract's `bindingOf` and the token's owner at one block. */
  readBinding(tokenId: number): Promise<LiveBinding>;
}

export interface AgentRegistryReaderOptions {
  client: PublicClient;
  chainId: number;
  collection: Address;
  identityRegistry: Address;
}

export function createAgentRegistryReader(options: AgentRegistryReaderOptions): AgentRegistryReader {
  const { client, collection, identityRegistry } = options;
  const registryId = agentRegistryId(options.chainId, identityRegistry);

  return {
    agentIdOf: (tokenId) => BigInt(tokenId),
    agentRegistry: () => registryId,
    async readBinding(tokenId) {
      const agentId = BigInt(tokenId);
      const blockNumber = await client.getBlockNumber({ cacheTime: 0 });
      const [metadata, owner] = await Promise.all([
        client
          .readContract({
            address: identityRegistry,
            abi: identityRegistryAbi,
            functionName: "getMetadata",
            args: [agentId, AGENT_BINDING_METADATA_KEY],
            blockNumber,
          })
          // An agent that was never registered has no metadata: treat it as unbound.
          .catch(() => "0x" as const),
        client.readContract({
          address: collection,
          abi: agentCollectionAbi,
          functionName: "ownerOf",
          args: [BigInt(tokenId)],
          blockNumber,
        }),
      ]);
      const bindingContract = decodeAgentBindingMetadata(metadata) ?? null;
      let binding: { standard: number; tokenContract: Address; tokenId: bigint } | null = null;
      if (bindingContract) {
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
        bound:
          tokenContract !== null && tokenContract === getAddress(collection) && binding!.tokenId === BigInt(tokenId),
        bindingContract: bindingContract ? getAddress(bindingContract) : null,
        standard: tokenContract ? (tokenStandardName(binding!.standard) ?? null) : null,
        tokenContract,
        boundTokenId: tokenContract ? binding!.tokenId : null,
        owner: getAddress(owner),
        blockNumber,
      };
    },
  };
}

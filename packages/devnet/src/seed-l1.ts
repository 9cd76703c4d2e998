/**
 * L1 seeding (docs/decisions.md, "Devnet seeding"): the collection, the ERC-8004 identity registry and the ERC-8217 bindings,
 * deployed and operated by account 0; Multicall3 at its canonical address.
 */
import {
  agentBindingsAbi,
  agentBindingsBytecode,
  agentCollectionAbi,
  agentCollectionBytecode,
  type Clearance,
  clearanceCode,
  clearanceForTier,
  computeRarityTable,
  devnetOwnerIndex,
  generateCollectionTraits,
  identityRegistryAbi,
  identityRegistryBytecode,
  MULTICALL3_ADDRESS,
  multicall3DeployedBytecode,
  packTraits,
  type RarityTable,
  TOKEN_STANDARDS,
  traitTypeLabels,
  traitTypeNames,
} from "@agent-tools/contracts";
import { type Address, type Client, encodeDeployData, encodeFunctionData, getAddress } from "viem";
import { getBlockNumber, getCode, readContract } from "viem/actions";
import {
  DEFAULT_PUBLIC_URL,
  DEPLOY_NONCES,
  DEVNET_ACCOUNTS,
  DEVNET_LAST_REVEALED,
  DEVNET_TOKEN_COUNT,
  expectedDeployAddress,
  SEED_BATCH,
} from "./constants.js";
import { batches, Sender, setCode } from "./tx.js";

export interface SeedOptions {
  /** Receives one line per seeding step ("seeding L1: minted 6666 tokens (12 transactions)"). */
  log?: (line: string) => void;
}

export interface SeedL1Options extends SeedOptions {
  /** The server's public origin: the collection's base URI and the agents' URIs point there. */
  publicUrl?: string;
}

export interface L1SeedResult {
  chainId: number;
  addresses: { collection: Address; identityRegistry: Address; agentBindings: Address; multicall3: Address };
  /** `${publicUrl}/agents/info/` (tokenURI = base + id). */
  collectionBaseUri: string;
  /** Agent t's URI is `${agentUriBase}${t}${agentUriSuffix}`. */
  agentUriBase: string;
  agentUriSuffix: string;
  /** L1 block number after seeding. */
  blockNumber: number;
  /** Wall-clock milliseconds the seeding took. */
  durationMs: number;
}

/** The origin without trailing slashes. */
export function normalizePublicUrl(publicUrl: string): string {
  return publicUrl.replace(/\/+$/, "");
}

export interface DevnetCollectionSeed {
  /** Trait value indexes of token t at index t - 1 (all 6666, from the fixed seed). */
  traits: number[][];
  /** Rarity over the revealed tokens (1..6000); tokens above are `Unrevealed`. */
  rarity: RarityTable;
  /** Clearance token t gets at reveal (index t - 1); `Holder` for unrevealed tokens (never written). */
  clearances: Clearance[];
}

let collectionSeed: DevnetCollectionSeed | undefined;

/** The traits, rarity tiers and initial clearances the devnet reveals with (computed once, deterministic). */
export function devnetCollectionSeed(): DevnetCollectionSeed {
  if (collectionSeed === undefined) {
    const traits = generateCollectionTraits();
    const rarity = computeRarityTable(traits.map((t, i) => (i < DEVNET_LAST_REVEALED ? t : null)));
    const clearances = rarity.entries.map((entry) => clearanceForTier(entry.tier));
    collectionSeed = { traits, rarity, clearances };
  }
  return collectionSeed;
}

/** Address that owns token `tokenId` on the devnet. */
export function devnetOwnerOf(tokenId: number): Address {
  return DEVNET_ACCOUNTS[devnetOwnerIndex(tokenId)]!.address;
}

/**
 * Deploys and seeds the L1 contracts on a fresh chain reachable through `client` (any viem client: in-process
 * EIP-1193 provider or HTTP). The node must accept `hardhat_setCode`. Throws when account 0 has already sent a
 * transaction (the addresses would differ from DEVNET_ADDRESSES).
 */
export async function seedL1(client: Client, options: SeedL1Options = {}): Promise<L1SeedResult> {
  const started = performance.now();
  const log = options.log ?? (() => {});
  const publicUrl = normalizePublicUrl(options.publicUrl ?? DEFAULT_PUBLIC_URL);
  const collectionBaseUri = `${publicUrl}/agents/info/`;
  const agentUriBase = `${publicUrl}/.well-known/agents/`;
  const agentUriSuffix = ".json";
  const operator = DEVNET_ACCOUNTS[0]!;
  const tx = await Sender.create(client, operator.privateKey, "seeding L1");
  if (tx.nonce !== 0) {
    throw new Error(
      `seeding L1: account 0 (${operator.address}) has already sent ${tx.nonce} transactions; seedL1 needs a fresh chain`,
    );
  }

  const deploy = async (name: string, nonce: number, data: `0x${string}`): Promise<Address> => {
    const expected = expectedDeployAddress(nonce);
    if (tx.nonce !== nonce)
      throw new Error(`seeding L1: ${name} would be deployed with nonce ${tx.nonce}, not ${nonce}`);
    const receipt = await tx.send(`deploying ${name}`, { data });
    const address = receipt.contractAddress ? getAddress(receipt.contractAddress) : undefined;
    if (address !== expected) {
      throw new Error(`seeding L1: ${name} deployed at ${address}, expected ${expected}`);
    }
    return address;
  };

  const collection = await deploy(
    "AgentCollection",
    DEPLOY_NONCES.collection,
    encodeDeployData({
      abi: agentCollectionAbi,
      bytecode: agentCollectionBytecode,
      args: [operator.address, collectionBaseUri],
    }),
  );
  const identityRegistry = await deploy(
    "IdentityRegistry",
    DEPLOY_NONCES.identityRegistry,
    encodeDeployData({
      abi: identityRegistryAbi,
      bytecode: identityRegistryBytecode,
      args: [operator.address, agentUriBase, agentUriSuffix],
    }),
  );
  const agentBindings = await deploy(
    "AgentBindings",
    DEPLOY_NONCES.agentBindings,
    encodeDeployData({
      abi: agentBindingsAbi,
      bytecode: agentBindingsBytecode,
      args: [operator.address, identityRegistry],
    }),
  );
  await setCode(client, MULTICALL3_ADDRESS, multicall3DeployedBytecode);
  await tx.send("setAgentBindings", {
    to: identityRegistry,
    data: encodeFunctionData({ abi: identityRegistryAbi, functionName: "setAgentBindings", args: [agentBindings] }),
  });
  await tx.send("setTraitSchema", {
    to: collection,
    data: encodeFunctionData({
      abi: agentCollectionAbi,
      functionName: "setTraitSchema",
      args: [traitTypeNames, traitTypeLabels],
    }),
  });
  log(
    `seeding L1: deployed collection ${collection}, identity registry ${identityRegistry}, bindings ${agentBindings}`,
  );

  // Mint: token t to account ((t - 1) mod 9) + 1.
  const mintBatches = batches(1, DEVNET_TOKEN_COUNT, SEED_BATCH.mint);
  await tx.sendAll(
    mintBatches.map(([first, count]) => ({
      label: `mintBatch ${first}..${first + count - 1}`,
      tx: () => ({
        to: collection,
        data: encodeFunctionData({
          abi: agentCollectionAbi,
          functionName: "mintBatch",
          args: [Array.from({ length: count }, (_, i) => devnetOwnerOf(first + i)), BigInt(first)],
        }),
      }),
    })),
  );
  log(`seeding L1: minted ${DEVNET_TOKEN_COUNT} tokens (${mintBatches.length} transactions)`);

  // Reveal 1..6000 with their traits and the clearance of their tier.
  const seed = devnetCollectionSeed();
  const revealBatches = batches(1, DEVNET_LAST_REVEALED, SEED_BATCH.reveal);
  await tx.sendAll(
    revealBatches.map(([first, count]) => ({
      label: `reveal ${first}..${first + count - 1}`,
      tx: () => {
        const ids = Array.from({ length: count }, (_, i) => BigInt(first + i));
        const packed = ids.map((id) => packTraits(seed.traits[Number(id) - 1]!));
        const codes = ids.map((id) => clearanceCode(seed.clearances[Number(id) - 1]!));
        return {
          to: collection,
          data: encodeFunctionData({ abi: agentCollectionAbi, functionName: "reveal", args: [ids, packed, codes] }),
        };
      },
    })),
  );
  const elite = seed.clearances.slice(0, DEVNET_LAST_REVEALED).filter((c) => c === "Elite").length;
  const rare = seed.clearances.slice(0, DEVNET_LAST_REVEALED).filter((c) => c === "Rare").length;
  log(
    `seeding L1: revealed ${DEVNET_LAST_REVEALED} tokens (${elite} Elite, ${rare} Rare clearance); ` +
      `${DEVNET_TOKEN_COUNT - DEVNET_LAST_REVEALED} stay unrevealed`,
  );

  // ERC-8004 agents: agent t for the owner of token t.
  const registerBatches = batches(1, DEVNET_TOKEN_COUNT, SEED_BATCH.register);
  await tx.sendAll(
    registerBatches.map(([first, count]) => ({
      label: `registerBatch ${first}..${first + count - 1}`,
      tx: () => ({
        to: identityRegistry,
        data: encodeFunctionData({
          abi: identityRegistryAbi,
          functionName: "registerBatch",
          args: [Array.from({ length: count }, (_, i) => devnetOwnerOf(first + i))],
        }),
      }),
    })),
  );
  log(`seeding L1: registered ${DEVNET_TOKEN_COUNT} agents (${registerBatches.length} transactions)`);

  // ERC-8217: agent t bound to (ERC721, collection, token t); the registry records `agent-binding`.
  const standard = TOKEN_STANDARDS.indexOf("ERC721");
  const bindBatches = batches(1, DEVNET_TOKEN_COUNT, SEED_BATCH.bind);
  await tx.sendAll(
    bindBatches.map(([first, count]) => ({
      label: `bindRange ${first}..${first + count - 1}`,
      tx: () => ({
        to: agentBindings,
        data: encodeFunctionData({
          abi: agentBindingsAbi,
          functionName: "bindRange",
          args: [BigInt(first), BigInt(count), standard, collection, BigInt(first)],
        }),
      }),
    })),
  );
  log(`seeding L1: bound ${DEVNET_TOKEN_COUNT} agents to their tokens (${bindBatches.length} transactions)`);

  // Cheap end-to-end checks, so a seeding that went wrong fails here and not in a later test. They also stand for the
  // batches' receipts, which are not read (Sender.sendAll): each count is short if one batch failed.
  const [supply, revealed, agents, ranges, bindingsOfRegistry, multicallCode] = await Promise.all([
    readContract(client, { address: collection, abi: agentCollectionAbi, functionName: "totalSupply" }),
    readContract(client, { address: collection, abi: agentCollectionAbi, functionName: "revealedCount" }),
    readContract(client, { address: identityRegistry, abi: identityRegistryAbi, functionName: "totalAgents" }),
    readContract(client, { address: agentBindings, abi: agentBindingsAbi, functionName: "rangeCount" }),
    readContract(client, { address: identityRegistry, abi: identityRegistryAbi, functionName: "agentBindings" }),
    getCode(client, { address: MULTICALL3_ADDRESS }),
  ]);
  if (
    supply !== BigInt(DEVNET_TOKEN_COUNT) ||
    revealed !== BigInt(DEVNET_LAST_REVEALED) ||
    agents !== BigInt(DEVNET_TOKEN_COUNT) ||
    ranges !== BigInt(bindBatches.length) ||
    getAddress(bindingsOfRegistry) !== agentBindings ||
    multicallCode === undefined ||
    multicallCode === "0x"
  ) {
    throw new Error(
      `seeding L1: post-seeding check failed (supply ${supply}, revealed ${revealed}, agents ${agents}, ` +
        `binding ranges ${ranges}, bindings ${bindingsOfRegistry}, multicall3 code ${multicallCode ? "present" : "missing"})`,
    );
  }
  const blockNumber = Number(await getBlockNumber(client, { cacheTime: 0 }));
  return {
    chainId: tx.chainId,
    addresses: { collection, identityRegistry, agentBindings, multicall3: MULTICALL3_ADDRESS },
    collectionBaseUri,
    agentUriBase,
    agentUriSuffix,
    blockNumber,
    durationMs: Math.round(performance.now() - started),
  };
}

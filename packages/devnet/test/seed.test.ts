/**
 * What a user of the seeded devnet relies on (docs/decisions.md, "Devnet seeding"), checked on a fresh in-process devnet.
 */
import {
  AGENT_BINDING_METADATA_KEY,
  agentBindingsAbi,
  agentCollectionAbi,
  B20_CREATED_TOPIC,
  b20FactoryAbi,
  b20StablecoinTokenAbi,
  b20VariantOf,
  CLEARANCE_TRAIT_KEY,
  type Clearance,
  clearanceForTier,
  computeRarityTable,
  decodeAgentBindingMetadata,
  decodeClearance,
  decodeStablecoinEventParams,
  decodeTokenData,
  generateCollectionTraits,
  identityRegistryAbi,
  MULTICALL3_ADDRESS,
  type RarityTierName,
  traitTypeLabels,
  traitTypeNames,
  usdTokenAbi,
} from "@agent-tools/contracts";
import {
  type Address,
  type BaseError,
  ContractFunctionRevertedError,
  getAddress,
  keccak256,
  maxUint256,
  parseEventLogs,
  toHex,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  B20_SCHEDULE,
  B20_SCHEDULE_TIP,
  B20_WINDOWS,
  createInProcessDevnet,
  DEFAULT_PUBLIC_URL,
  DEVNET_ACCOUNTS,
  DEVNET_ADDRESSES,
  DEVNET_L1_CHAIN_ID,
  DEVNET_L2_CHAIN_ID,
  type InProcessDevnet,
} from "../src/index.js";

let devnet: InProcessDevnet;
const seedLines: string[] = [];

/** The wall clock's seconds when the seeding began and ended: L2's tip is stamped between them. */
const seeding = { from: 0, until: 0 };

beforeAll(async () => {
  const started = performance.now();
  seeding.from = Math.floor(Date.now() / 1000);
  devnet = await createInProcessDevnet({ log: (line) => seedLines.push(line) });
  seeding.until = Math.ceil(Date.now() / 1000);
  const total = Math.round(performance.now() - started);
  console.log(`in-process devnet: created and seeded in ${total} ms`, devnet.seedDurationMs);
});

afterAll(async () => {
  await devnet?.close();
});

const account = (index: number): Address => DEVNET_ACCOUNTS[index]!.address;

function collectionRead<const F extends "ownerOf" | "revealed" | "traitsOf" | "getTraitValue" | "tokenURI">(
  functionName: F,
  args: readonly unknown[],
) {
  return devnet.l1.publicClient.readContract({
    address: DEVNET_ADDRESSES.collection,
    abi: agentCollectionAbi,
    functionName,
    args,
  } as never) as Promise<unknown>;
}

describe("deployment", () => {
  it("has the fixed addresses on the right chains", async () => {
    expect(devnet.deployment.addresses).toEqual(DEVNET_ADDRESSES);
    expect(devnet.deployment.l1.chainId).toBe(DEVNET_L1_CHAIN_ID);
    expect(devnet.deployment.l2.chainId).toBe(DEVNET_L2_CHAIN_ID);
    expect(await devnet.l1.publicClient.getChainId()).toBe(31337);
    expect(await devnet.l2.publicClient.getChainId()).toBe(31338);
    expect(devnet.deployment.l1.rpcUrl).toBeUndefined();
    expect(devnet.deployment.accounts.map((a) => a.address)).toEqual(DEVNET_ACCOUNTS.map((a) => a.address));
    expect(devnet.deployment.publicUrl).toBe(DEFAULT_PUBLIC_URL);
    for (const [chain, address] of [
      [devnet.l1, DEVNET_ADDRESSES.collection],
      [devnet.l1, DEVNET_ADDRESSES.identityRegistry],
      [devnet.l1, DEVNET_ADDRESSES.agentBindings],
      [devnet.l1, MULTICALL3_ADDRESS],
      [devnet.l2, DEVNET_ADDRESSES.usdToken],
      [devnet.l2, DEVNET_ADDRESSES.b20Factory],
      [devnet.l2, MULTICALL3_ADDRESS],
      [devnet.l2, DEVNET_ADDRESSES.batchSettlement],
      [devnet.l2, DEVNET_ADDRESSES.erc3009DepositCollector],
      [devnet.l2, DEVNET_ADDRESSES.permit2],
      [devnet.l2, DEVNET_ADDRESSES.uptoPermit2Proxy],
    ] as const) {
      expect((await chain.publicClient.getCode({ address }))?.length ?? 0).toBeGreaterThan(2);
    }
  });

  it("reports the seeding steps", () => {
    expect(seedLines.some((l) => l.startsWith("seeding L1: minted 6666 tokens"))).toBe(true);
    expect(seedLines.some((l) => l.startsWith("seeding L2: created 40 B20 tokens"))).toBe(true);
    expect(seedLines.some((l) => l.startsWith("seeding L2: placed Permit2 and x402's upto proxy"))).toBe(true);
  });

  it("answers viem multicall through Multicall3 on both chains", async () => {
    const [owner1, revealed] = await devnet.l1.publicClient.multicall({
      allowFailure: false,
      contracts: [
        { address: DEVNET_ADDRESSES.collection, abi: agentCollectionAbi, functionName: "ownerOf", args: [1n] },
        { address: DEVNET_ADDRESSES.collection, abi: agentCollectionAbi, functionName: "revealedCount" },
      ],
    });
    expect(owner1).toBe(account(1));
    expect(revealed).toBe(6000n);
    const [name, decimals] = await devnet.l2.publicClient.multicall({
      allowFailure: false,
      contracts: [
        { address: DEVNET_ADDRESSES.usdToken, abi: usdTokenAbi, functionName: "name" },
        { address: DEVNET_ADDRESSES.usdToken, abi: usdTokenAbi, functionName: "decimals" },
      ],
    });
    expect([name, decimals]).toEqual(["USD Coin", 6]);
  });
});

describe("collection (L1)", () => {
  it("gives token t to account ((t - 1) mod 9) + 1", async () => {
    expect(await collectionRead("ownerOf", [1n])).toBe(account(1));
    expect(await collectionRead("ownerOf", [9n])).toBe(account(9));
    expect(await collectionRead("ownerOf", [10n])).toBe(account(1));
    expect(await collectionRead("ownerOf", [6666n])).toBe(account(6));
    const supply = await devnet.l1.publicClient.readContract({
      address: DEVNET_ADDRESSES.collection,
      abi: agentCollectionAbi,
      functionName: "totalSupply",
    });
    expect(supply).toBe(6666n);
    // eth_call shares the 2^24 gas cap of a transaction: read the owners in chunks.
    for (let from = 1; from <= 6666; from += 2222) {
      const owners = await devnet.l1.publicClient.readContract({
        address: DEVNET_ADDRESSES.collection,
        abi: agentCollectionAbi,
        functionName: "ownersRange",
        args: [BigInt(from), 2222n],
      });
      owners.forEach((owner, i) => {
        const tokenId = from + i;
        if (owner !== account(((tokenId - 1) % 9) + 1)) throw new Error(`token ${tokenId} owned by ${owner}`);
      });
    }
    expect(
      await devnet.l1.publicClient.readContract({
        address: DEVNET_ADDRESSES.collection,
        abi: agentCollectionAbi,
        functionName: "balanceOf",
        args: [account(0)],
      }),
    ).toBe(0n);
  });

  it("reveals tokens 1-6000 and leaves 6001-6666 unrevealed", async () => {
    const count = await devnet.l1.publicClient.readContract({
      address: DEVNET_ADDRESSES.collection,
      abi: agentCollectionAbi,
      functionName: "revealedCount",
    });
    expect(count).toBe(6000n);
    expect(await collectionRead("revealed", [6000n])).toBe(true);
    expect(await collectionRead("revealed", [6001n])).toBe(false);
    expect(await collectionRead("revealed", [6666n])).toBe(false);
    expect(await collectionRead("traitsOf", [6001n])).toEqual([]);
  });

  it("defines the trait schema of the contracts package", async () => {
    const types = await devnet.l1.publicClient.readContract({
      address: DEVNET_ADDRESSES.collection,
      abi: agentCollectionAbi,
      functionName: "traitTypes",
    });
    expect(types).toEqual(traitTypeNames);
    const labels = await devnet.l1.publicClient.readContract({
      address: DEVNET_ADDRESSES.collection,
      abi: agentCollectionAbi,
      functionName: "traitLabels",
      args: [4],
    });
    expect(labels).toEqual(traitTypeLabels[4]);
  });

  // Independent of the seeding code: recomputed here from the contracts package.
  const traits = generateCollectionTraits();
  const rarity = computeRarityTable(traits.map((t, i) => (i < 6000 ? t : null)));
  const firstOf = (tier: RarityTierName) => rarity.entries.find((e) => e.tier === tier)!.tokenId;

  it("sets each token's clearance from its computed tier (Elite, Rare and Holder examples)", async () => {
    const examples: [number, Clearance][] = [
      [firstOf("Legendary"), "Elite"],
      [firstOf("Epic"), "Elite"],
      [firstOf("Rare"), "Rare"],
      [firstOf("Uncommon"), "Holder"],
      [firstOf("Common"), "Holder"],
      [6001, "Holder"],
    ];
    for (const [tokenId, expected] of examples) {
      const tier = rarity.entries[tokenId - 1]!.tier;
      expect(clearanceForTier(tier)).toBe(expected);
      const value = (await collectionRead("getTraitValue", [BigInt(tokenId), CLEARANCE_TRAIT_KEY])) as `0x${string}`;
      expect(decodeClearance(value), `token ${tokenId} (${tier})`).toBe(expected);
      if (tokenId <= 6000) {
        expect(await collectionRead("traitsOf", [BigInt(tokenId)])).toEqual(traits[tokenId - 1]);
      }
    }
  });

  it("writes the traits and clearance of every token (tokenDataRange)", async () => {
    const counts: Record<Clearance, number> = { Holder: 0, Rare: 0, Elite: 0 };
    for (let from = 1; from <= 6666; from += 2222) {
      const words = await devnet.l1.publicClient.readContract({
        address: DEVNET_ADDRESSES.collection,
        abi: agentCollectionAbi,
        functionName: "tokenDataRange",
        args: [BigInt(from), 2222n],
      });
      words.forEach((word, i) => {
        const tokenId = from + i;
        const data = decodeTokenData(word, traitTypeNames.length);
        const entry = rarity.entries[tokenId - 1]!;
        const expected = clearanceForTier(entry.tier);
        const ok =
          data.revealed === tokenId <= 6000 &&
          data.clearance === expected &&
          JSON.stringify(data.traits) === JSON.stringify(tokenId <= 6000 ? traits[tokenId - 1] : []);
        if (!ok) throw new Error(`token ${tokenId}: ${JSON.stringify(data)} (tier ${entry.tier})`);
        counts[data.clearance]++;
      });
    }
    // Top 5% Elite, next 15% Rare of the 6000 revealed tokens.
    expect(counts).toEqual({ Elite: 300, Rare: 900, Holder: 5466 });
  });

  it("points token URIs at the public URL", async () => {
    expect(await collectionRead("tokenURI", [42n])).toBe(`${DEFAULT_PUBLIC_URL}/agents/info/42`);
  });
});

describe("ERC-7496 dynamic traits (L1)", () => {
  // ERC-7496 (ethereum/ERCs ERCS/erc-7496.md): "If a traitKey does not exist, the contract MUST revert with
  // TraitDoesNotExist(traitKey)"; the trait metadata says which traits exist.
  const key = keccak256(toHex("redeemed"));

  /** The custom error a call reverted with: its name and arguments. */
  async function revertOf(run: () => Promise<unknown>): Promise<{ name?: string; args?: readonly unknown[] }> {
    const error = await run().then(
      () => undefined,
      (e: unknown) => e as BaseError,
    );
    const reverted = error?.walk((e) => e instanceof ContractFunctionRevertedError) as
      | ContractFunctionRevertedError
      | undefined;
    return { name: reverted?.data?.errorName, args: reverted?.data?.args };
  }

  it("refuses to set or read a trait key the metadata does not define, with TraitDoesNotExist(traitKey)", async () => {
    const operator = devnet.l1.walletClient(0);
    const set = () =>
      devnet.l1.publicClient.simulateContract({
        account: operator.account,
        address: DEVNET_ADDRESSES.collection,
        abi: agentCollectionAbi,
        functionName: "setTrait",
        args: [1n, key, toHex(1, { size: 32 })],
      });
    expect(await revertOf(set)).toEqual({ name: "TraitDoesNotExist", args: [key] });
    expect(await revertOf(() => collectionRead("getTraitValue", [1n, key]))).toEqual({
      name: "TraitDoesNotExist",
      args: [key],
    });
  });

  it("takes a key once the operator's trait metadata update defines it, announced by TraitMetadataURIUpdated", async () => {
    const operator = devnet.l1.walletClient(0);
    const defined = await operator.writeContract({
      address: DEVNET_ADDRESSES.collection,
      abi: agentCollectionAbi,
      functionName: "setTraitMetadataURI",
      args: ["data:application/json,{}", [key]],
    });
    const receipt = await devnet.l1.publicClient.waitForTransactionReceipt({ hash: defined });
    expect(parseEventLogs({ abi: agentCollectionAbi, logs: receipt.logs }).map((log) => log.eventName)).toEqual([
      "TraitMetadataURIUpdated",
    ]);
    const hash = await operator.writeContract({
      address: DEVNET_ADDRESSES.collection,
      abi: agentCollectionAbi,
      functionName: "setTrait",
      args: [1n, key, toHex(1, { size: 32 })],
    });
    await devnet.l1.publicClient.waitForTransactionReceipt({ hash });
    expect(await collectionRead("getTraitValue", [1n, key])).toBe(toHex(1, { size: 32 }));
    // Back to the built-in metadata; the key stays defined.
    const restored = await operator.writeContract({
      address: DEVNET_ADDRESSES.collection,
      abi: agentCollectionAbi,
      functionName: "setTraitMetadataURI",
      args: [""],
    });
    await devnet.l1.publicClient.waitForTransactionReceipt({ hash: restored });
  });
});

describe("ERC-8004 agents and ERC-8217 bindings (L1)", () => {
  const registry = { address: DEVNET_ADDRESSES.identityRegistry, abi: identityRegistryAbi } as const;
  const bindings = { address: DEVNET_ADDRESSES.agentBindings, abi: agentBindingsAbi } as const;

  it("registers agents 1..6666 for the token owners, with URIs under the public URL", async () => {
    const client = devnet.l1.publicClient;
    expect(await client.readContract({ ...registry, functionName: "totalAgents" })).toBe(6666n);
    for (const t of [1n, 10n, 6666n]) {
      expect(await client.readContract({ ...registry, functionName: "ownerOf", args: [t] })).toBe(
        await collectionRead("ownerOf", [t]),
      );
    }
    expect(await client.readContract({ ...registry, functionName: "tokenURI", args: [7n] })).toBe(
      `${DEFAULT_PUBLIC_URL}/.well-known/agents/7.json`,
    );
  });

  it("binds agent t to (ERC721, collection, token t) and records agent-binding = bindings address", async () => {
    const client = devnet.l1.publicClient;
    expect(await client.readContract({ ...registry, functionName: "agentBindings" })).toBe(
      DEVNET_ADDRESSES.agentBindings,
    );
    expect(await client.readContract({ ...bindings, functionName: "identityRegistry" })).toBe(
      DEVNET_ADDRESSES.identityRegistry,
    );
    for (const t of [1, 999, 1000, 1001, 6000, 6001, 6666]) {
      const binding = await client.readContract({ ...bindings, functionName: "bindingOf", args: [BigInt(t)] });
      expect(binding).toEqual({ standard: 0, tokenContract: DEVNET_ADDRESSES.collection, tokenId: BigInt(t) });
      const metadata = await client.readContract({
        ...registry,
        functionName: "getMetadata",
        args: [BigInt(t), AGENT_BINDING_METADATA_KEY],
      });
      expect(decodeAgentBindingMetadata(metadata)).toBe(DEVNET_ADDRESSES.agentBindings);
      expect(await client.readContract({ ...bindings, functionName: "controllerOf", args: [BigInt(t)] })).toBe(
        account(((t - 1) % 9) + 1),
      );
    }
    expect(await client.readContract({ ...bindings, functionName: "isBound", args: [6667n] })).toBe(false);
  });
});

describe("USD payment token (L2)", () => {
  const usd = { address: DEVNET_ADDRESSES.usdToken, abi: usdTokenAbi } as const;

  it("is at the server's default PAYMENT_ASSET address", () => {
    expect(DEVNET_ADDRESSES.usdToken).toBe("0x5FbDB2315678afecb367f032d93F642f64180aa3");
  });

  it("gives accounts 1-9 1,000,000 USD each", async () => {
    const client = devnet.l2.publicClient;
    for (let i = 1; i <= 9; i++) {
      expect(await client.readContract({ ...usd, functionName: "balanceOf", args: [account(i)] })).toBe(
        1_000_000_000_000n,
      );
    }
    expect(await client.readContract({ ...usd, functionName: "balanceOf", args: [account(0)] })).toBe(0n);
    expect(await client.readContract({ ...usd, functionName: "totalSupply" })).toBe(9_000_000_000_000n);
  });

  it("has Permit2 approved for the most a uint256 holds by accounts 1-9 (the upto scheme's one-time approval)", async () => {
    const client = devnet.l2.publicClient;
    for (let i = 0; i <= 9; i++) {
      expect(
        await client.readContract({ ...usd, functionName: "allowance", args: [account(i), DEVNET_ADDRESSES.permit2] }),
        `account ${i}`,
      ).toBe(i === 0 ? 0n : maxUint256);
    }
  });

  it('has the EIP-712 domain "USD Coin" / "2" on chain 31338', async () => {
    const client = devnet.l2.publicClient;
    const [, name, version, chainId, verifyingContract] = await client.readContract({
      ...usd,
      functionName: "eip712Domain",
    });
    expect({ name, version, chainId, verifyingContract }).toEqual({
      name: "USD Coin",
      version: "2",
      chainId: 31338n,
      verifyingContract: DEVNET_ADDRESSES.usdToken,
    });
    expect(await client.readContract({ ...usd, functionName: "version" })).toBe("2");
    expect(await client.readContract({ ...usd, functionName: "decimals" })).toBe(6);
  });

  it("keeps L2 time near the wall clock, 2-second blocks behind the tip", async () => {
    const client = devnet.l2.publicClient;
    const tip = await client.getBlock({ blockTag: "latest" });
    expect(tip.number).toBe(BigInt(B20_SCHEDULE_TIP));
    // Stamped with the wall clock when the seeding ended, however long the seeding and this test took to come.
    expect(Number(tip.timestamp)).toBeGreaterThanOrEqual(seeding.from);
    expect(Number(tip.timestamp)).toBeLessThanOrEqual(seeding.until);
    const weekAgo = await client.getBlock({ blockNumber: BigInt(B20_SCHEDULE_TIP - B20_WINDOWS.week) });
    // 302,400 blocks of 2 s, give or take the seconds the seeding took and the last block's catch-up.
    expect(Number(tip.timestamp - weekAgo.timestamp)).toBeGreaterThanOrEqual(2 * B20_WINDOWS.week);
    expect(Number(tip.timestamp - weekAgo.timestamp)).toBeLessThan(2 * B20_WINDOWS.week + 600);
  });
});

describe("B20 tokens (L2)", () => {
  it("emits B20Created per scheduled token, in the scheduled blocks", async () => {
    const client = devnet.l2.publicClient;
    const logs = await client.getContractEvents({
      address: DEVNET_ADDRESSES.b20Factory,
      abi: b20FactoryAbi,
      eventName: "B20Created",
      fromBlock: 0n,
      toBlock: "latest",
    });
    expect(logs).toHaveLength(B20_SCHEDULE.length);
    expect(logs.length).toBeGreaterThanOrEqual(35);
    logs.forEach((log, i) => {
      const entry = B20_SCHEDULE[i]!;
      expect(log.topics[0]).toBe(B20_CREATED_TOPIC);
      expect(Number(log.blockNumber)).toBe(entry.blockNumber);
      expect(getAddress(log.args.token!)).toBe(entry.address);
      expect(log.args.variant).toBe(entry.variantId);
      expect(b20VariantOf(log.args.token!)).toBe(entry.variantId);
      expect(log.args.name).toBe(entry.name);
      expect(log.args.symbol).toBe(entry.symbol);
      expect(log.args.decimals).toBe(entry.variant === "ASSET" ? 18 : 6);
      // Published: empty for ASSET, abi.encode(B20StablecoinEventParams{version: 1, currency}) for STABLECOIN.
      expect(
        entry.variant === "STABLECOIN"
          ? decodeStablecoinEventParams(log.args.variantEventParams!)
          : log.args.variantEventParams,
      ).toBe(entry.variant === "STABLECOIN" ? entry.currency : "0x");
    });
    expect(devnet.deployment.b20Tokens.map((t) => t.address)).toEqual(B20_SCHEDULE.map((t) => t.address));
  });

  it("spreads the creations over the windows as the schedule says", async () => {
    const tip = Number(await devnet.l2.publicClient.getBlockNumber({ cacheTime: 0 }));
    expect(tip).toBe(720_000);
    expect(tip).toBeGreaterThan(700_000);
    const logs = await devnet.l2.publicClient.getLogs({
      address: DEVNET_ADDRESSES.b20Factory,
      fromBlock: 0n,
      toBlock: BigInt(tip),
    });
    const ages = logs.filter((l) => l.topics[0] === B20_CREATED_TOPIC).map((l) => tip - Number(l.blockNumber));
    const within = (blocks: number) => ages.filter((age) => age < blocks).length;
    expect(ages.length).toBe(40);
    expect(ages.length - within(B20_WINDOWS.fortnight)).toBe(4); // older than 14 days
    expect(within(B20_WINDOWS.fortnight)).toBe(36);
    expect(within(B20_WINDOWS.week)).toBe(22);
    expect(within(B20_WINDOWS.recent)).toBe(6);
    // The last 14 days' logs alone, as the radar asks for them.
    const recent = await devnet.l2.publicClient.getLogs({
      address: DEVNET_ADDRESSES.b20Factory,
      fromBlock: BigInt(tip - B20_WINDOWS.fortnight + 1),
      toBlock: BigInt(tip),
    });
    expect(recent.filter((l) => l.topics[0] === B20_CREATED_TOPIC)).toHaveLength(36);
  });

  it("initialises each token (ERC-20 reads, currency, initial supply at the holder)", async () => {
    const client = devnet.l2.publicClient;
    const created = await client.multicall({
      contracts: B20_SCHEDULE.map((token) => ({
        address: DEVNET_ADDRESSES.b20Factory,
        abi: b20FactoryAbi,
        functionName: "isB20Initialized",
        args: [token.address],
      })),
      allowFailure: false,
    });
    expect(created).toEqual(B20_SCHEDULE.map(() => true));
    const stablecoin = B20_SCHEDULE.find((t) => t.variant === "STABLECOIN")!;
    for (const token of [B20_SCHEDULE[0]!, B20_SCHEDULE[1]!, stablecoin, B20_SCHEDULE.at(-1)!]) {
      const read = <F extends "name" | "symbol" | "decimals" | "currency" | "balanceOf">(
        f: F,
        args?: readonly [Address],
      ) =>
        client.readContract({
          address: token.address,
          abi: b20StablecoinTokenAbi,
          functionName: f,
          args,
        } as never) as Promise<unknown>;
      expect(await read("name")).toBe(token.name);
      expect(await read("symbol")).toBe(token.symbol);
      expect(await read("decimals")).toBe(token.decimals);
      expect(await read("balanceOf", [account(token.holderIndex)])).toBe(token.initialSupply);
      // currency() is the Stablecoin variant's only (IB20Stablecoin); an asset has no such function.
      if (token.currency === undefined) await expect(read("currency")).rejects.toThrow();
      else expect(await read("currency")).toBe(token.currency);
    }
  });
});

describe("wallet clients", () => {
  it("send transactions from the test accounts", async () => {
    const wallet = devnet.l2.walletClient(3);
    const hash = await wallet.writeContract({
      address: DEVNET_ADDRESSES.usdToken,
      abi: usdTokenAbi,
      functionName: "transfer",
      args: [account(4), 1_000_000n],
    });
    const receipt = await devnet.l2.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");
    expect(
      await devnet.l2.publicClient.readContract({
        address: DEVNET_ADDRESSES.usdToken,
        abi: usdTokenAbi,
        functionName: "balanceOf",
        args: [account(4)],
      }),
    ).toBe(1_000_001_000_000n);
  });
});

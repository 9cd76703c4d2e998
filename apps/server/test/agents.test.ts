import {
  agentCollectionAbi,
  CLEARANCE_TRAIT_KEY,
  clearanceForTier,
  computeRarityTable,
  DEVNET_LAST_REVEALED,
  encodeClearance,
  generateCollectionTraits,
  packTraits,
} from "@agent-tools/contracts";
import { agentInfoSchema, bindingStatusSchema, registrationFileSchema } from "@agent-tools/schema";
import { createPublicClient, custom } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChainTestServer, PUBLIC_URL, startChainTestServer } from "./helpers/chain-server.js";

let t: ChainTestServer;
const get = async (path: string) => {
  const res = await fetch(`${t.server.url}${path}`);
  return { status: res.status, body: await res.json(), res };
};
const account = (index: number) => t.devnet.deployment.accounts[index]!.address;

// The tiers the seeding derived from the fixed-seed traits (the service must read the same from chain).
const expectedTable = computeRarityTable(
  generateCollectionTraits().map((traits, i) => (i + 1 <= DEVNET_LAST_REVEALED ? traits : null)),
);
const firstOfTier = (tier: string) => expectedTable.entries.find((e) => e.tier === tier)!.tokenId;

// Flipped by the outage test: the L1 RPC then fails every call, as an unreachable node would.
let l1Down = false;
/** JSON-RPC calls the service made to the collection chain. */
let rpcCalls: string[] = [];

beforeAll(async () => {
  t = await startChainTestServer({
    // The longest bound: the test clock follows real time, and on a loaded machine the rounds below outlasted the
    // default 2 s. Each test moves past the bound with outlastStaleness(), whatever it is.
    env: { CHAIN_MAX_STALENESS_MS: "600000" },
    l1Client: (devnet) =>
      createPublicClient({
        transport: custom(
          {
            request: (args) => {
              rpcCalls.push(args.method);
              return l1Down
                ? Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:8545"))
                : devnet.l1.provider.request(args);
            },
          },
          { retryCount: 0 },
        ),
      }),
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe("the public examples of the OpenAPI document (the reference page shows them)", () => {
  /** The 200 example the served document gives for a public route. */
  const exampleOf = async (path: string) => {
    const doc = (await get("/openapi.json")).body as {
      paths: Record<string, { get: { responses: { 200: { content: { "application/json": { example: unknown } } } } } }>;
    };
    return doc.paths[path]!.get.responses[200].content["application/json"].example;
  };

  it("are token 7's real answers on the embedded default's chains, not placeholders", async () => {
    expect(await exampleOf("/agents/info/{tokenId}")).toEqual((await get("/agents/info/7")).body);
    expect(await exampleOf("/.well-known/agents/{tokenId}.json")).toEqual(
      (await get("/.well-known/agents/7.json")).body,
    );
    // The block the status was read at moves with the chain.
    const { blockNumber, ...binding } = (await get("/agents/7/binding")).body as { blockNumber: string };
    expect(await exampleOf("/agents/{tokenId}/binding")).toEqual({ ...binding, blockNumber: expect.any(String) });
    expect(blockNumber).toMatch(/^\d+$/);
  });
});

describe("GET /agents/info/:tokenId", () => {
  it("answers a revealed agent's identity record from chain", async () => {
    const { status, body } = await get("/agents/info/1");
    expect(status).toBe(200);
    const info = agentInfoSchema.parse(body);
    expect(info.tokenId).toBe(1);
    expect(info.name).toBe("Agent #1");
    expect(info.owner).toBe(account(1));
    expect(Object.keys(info.traits)).toEqual(["Class", "Core", "Signal", "Mission", "Visor", "Aura"]);
    const expected = expectedTable.entries[0]!;
    expect(info.rarity).toEqual({
      tier: expected.tier,
      score: expected.score,
      rank: expected.rank,
      of: DEVNET_LAST_REVEALED,
    });
    expect(info.clearance).toBe(clearanceForTier(expected.tier));
    expect(info.registration).toEqual({
      agentId: "1",
      agentRegistry: `eip155:31337:${t.devnet.deployment.addresses.identityRegistry}`,
      registrationFile: `${PUBLIC_URL}/.well-known/agents/1.json`,
      binding: { bound: true, standard: "ERC-8217", statusUrl: `${PUBLIC_URL}/agents/1/binding` },
    });
  });

  it("reads clearance from the trait: an Elite token and a Rare token", async () => {
    const elite = await get(`/agents/info/${firstOfTier("Legendary")}`);
    expect(elite.body.clearance).toBe("Elite");
    expect(elite.body.rarity.tier).toBe("Legendary");
    const rare = await get(`/agents/info/${firstOfTier("Rare")}`);
    expect(rare.body.clearance).toBe("Rare");
  });

  it("gives 404 agent_not_revealed for an unrevealed token", async () => {
    const { status, body } = await get("/agents/info/6001");
    expect(status).toBe(404);
    expect(body.error.code).toBe("agent_not_revealed");
  });

  it.each(["0", "6667", "abc", "7.5", "-1", "1e3"])("gives 400 for token id %s", async (id) => {
    const { status, body } = await get(`/agents/info/${id}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details[0].field).toBe("");
  });
});

describe("GET /.well-known/agents/:tokenId.json", () => {
  it("serves an ERC-8004 registration file with the draft's fields", async () => {
    const { status, body } = await get("/.well-known/agents/7.json");
    expect(status).toBe(200);
    const file = registrationFileSchema.parse(body);
    expect(Object.keys(body).sort()).toEqual(
      [
        "type",
        "name",
        "description",
        "image",
        "services",
        "x402Support",
        "active",
        "registrations",
        "supportedTrust",
      ].sort(),
    );
    expect(file.type).toBe("https://eips.ethereum.org/EIPS/eip-8004#registration-v1");
    expect(file.x402Support).toBe(true);
    expect(file.registrations).toEqual([
      { agentId: 7, agentRegistry: `eip155:31337:${t.devnet.deployment.addresses.identityRegistry}` },
    ]);
    const endpoints = file.services.map((s) => s.endpoint);
    expect(endpoints).toContain(`${PUBLIC_URL}/intel`);
    expect(endpoints).toContain(`${PUBLIC_URL}/.well-known/x402`);
    // The registry's agent URI points here.
    const { identityRegistryAbi } = await import("@agent-tools/contracts");
    const uri = await t.devnet.l1.publicClient.readContract({
      address: t.devnet.deployment.addresses.identityRegistry,
      abi: identityRegistryAbi,
      functionName: "tokenURI",
      args: [7n],
    });
    expect(uri).toBe(`${PUBLIC_URL}/.well-known/agents/7.json`);
  });

  it("gives 404 for an unrevealed agent and 400 for a bad id", async () => {
    expect((await get("/.well-known/agents/6500.json")).body.error.code).toBe("agent_not_revealed");
    expect((await get("/.well-known/agents/0.json")).status).toBe(400);
    expect((await get("/.well-known/agents/7.txt")).status).toBe(404);
  });
});

describe("GET /agents/:tokenId/binding", () => {
  it("answers the live ERC-8217 status, also for an unrevealed token", async () => {
    const { status, body, res } = await get("/agents/6600/binding");
    expect(status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const binding = bindingStatusSchema.parse(body);
    expect(binding).toMatchObject({
      tokenId: 6600,
      agentId: "6600",
      bound: true,
      standard: "ERC-8217",
      bindingContract: t.devnet.deployment.addresses.agentBindings,
      tokenStandard: "ERC721",
      tokenContract: t.devnet.deployment.addresses.collection,
      boundTokenId: "6600",
      owner: account(((6600 - 1) % 9) + 1),
    });
    expect(BigInt(binding.blockNumber)).toBeGreaterThan(0n);
  });
});

describe("public GETs answer from memory in the steady state", () => {
  it("make no chain call once each record is known, within the staleness bound", async () => {
    const paths = ["/agents/info/3", "/.well-known/agents/3.json", "/agents/3/binding", "/agents/3/image.svg"];
    const status = async (path: string) => {
      const res = await fetch(`${t.server.url}${path}`);
      await res.arrayBuffer();
      return res.status;
    };
    for (const path of paths) expect(await status(path)).toBe(200);
    rpcCalls = [];
    for (let round = 0; round < 20; round++) {
      for (const path of paths) expect(await status(path)).toBe(200);
    }
    expect(rpcCalls).toEqual([]);
  });

  it("read the chain again, once, when the snapshot is older than the bound", async () => {
    rpcCalls = [];
    t.outlastStaleness();
    const answers = await Promise.all(Array.from({ length: 10 }, () => get("/agents/info/3")));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    // One sync shared by every waiting request: the block number, and no log query when no block was made.
    expect(rpcCalls).toEqual(["eth_blockNumber"]);
  });
});

describe("changes on chain are seen within the staleness bound", () => {
  it("a transfer changes the owner in /agents/info and /binding once the snapshot is older than the bound", async () => {
    const tokenId = 10;
    expect((await get(`/agents/info/${tokenId}`)).body.owner).toBe(account(1));
    const wallet = t.devnet.l1.walletClient(1);
    const hash = await wallet.writeContract({
      address: t.devnet.deployment.addresses.collection,
      abi: agentCollectionAbi,
      functionName: "transferFrom",
      args: [account(1), account(4), BigInt(tokenId)],
    });
    await t.devnet.l1.publicClient.waitForTransactionReceipt({ hash });
    // Within the bound, the snapshot answers (no chain call); past it, the next request sees the transfer.
    rpcCalls = [];
    expect((await get(`/agents/info/${tokenId}`)).body.owner).toBe(account(1));
    expect(rpcCalls).toEqual([]);
    t.outlastStaleness();
    expect((await get(`/agents/info/${tokenId}`)).body.owner).toBe(account(4));
    expect((await get(`/agents/${tokenId}/binding`)).body.owner).toBe(account(4));
  });

  it("an event of the identity registry naming an agent makes its binding be read again", async () => {
    const tokenId = 5;
    expect((await get(`/agents/${tokenId}/binding`)).body.bound).toBe(true);
    rpcCalls = [];
    expect((await get(`/agents/${tokenId}/binding`)).body.bound).toBe(true);
    expect(rpcCalls).toEqual([]);
    // The agent's owner (devnet account 5) sets a metadata entry: MetadataSet names agent 5.
    const { identityRegistryAbi } = await import("@agent-tools/contracts");
    const hash = await t.devnet.l1.walletClient(5).writeContract({
      address: t.devnet.deployment.addresses.identityRegistry,
      abi: identityRegistryAbi,
      functionName: "setMetadata",
      args: [BigInt(tokenId), "note", "0x01"],
    });
    await t.devnet.l1.publicClient.waitForTransactionReceipt({ hash });
    t.outlastStaleness();
    rpcCalls = [];
    const after = await get(`/agents/${tokenId}/binding`);
    expect(after.body.bound).toBe(true);
    expect(rpcCalls).toContain("eth_call");
    const block = await t.devnet.l1.publicClient.getBlockNumber();
    expect(after.body.blockNumber).toBe(block.toString());
  });

  it("the operator raising the clearance trait is seen once the snapshot is older than the bound", async () => {
    const tokenId = 19;
    const before = await get(`/agents/info/${tokenId}`);
    expect(before.body.clearance).not.toBe("Elite");
    const hash = await t.devnet.l1.walletClient(0).writeContract({
      address: t.devnet.deployment.addresses.collection,
      abi: agentCollectionAbi,
      functionName: "setTrait",
      args: [BigInt(tokenId), CLEARANCE_TRAIT_KEY, encodeClearance("Elite")],
    });
    await t.devnet.l1.publicClient.waitForTransactionReceipt({ hash });
    t.outlastStaleness();
    const after = await get(`/agents/info/${tokenId}`);
    expect(after.body.clearance).toBe("Elite");
    // Raising clearance does not change the rarity tier: the service reads the trait, not the tier.
    expect(after.body.rarity.tier).toBe(before.body.rarity.tier);
  });

  it("a reveal makes the agent visible and re-ranks the collection, once the snapshot is older than the bound", async () => {
    const tokenId = 6001;
    expect((await get(`/agents/info/${tokenId}`)).status).toBe(404);
    const hash = await t.devnet.l1.walletClient(0).writeContract({
      address: t.devnet.deployment.addresses.collection,
      abi: agentCollectionAbi,
      functionName: "reveal",
      args: [[BigInt(tokenId)], [packTraits(generateCollectionTraits()[tokenId - 1]!)], [1]],
    });
    await t.devnet.l1.publicClient.waitForTransactionReceipt({ hash });
    t.outlastStaleness();
    const { status, body } = await get(`/agents/info/${tokenId}`);
    expect(status).toBe(200);
    expect(body.rarity.of).toBe(DEVNET_LAST_REVEALED + 1);
    expect(t.chain.collection.rarityTable().ranked).toBe(DEVNET_LAST_REVEALED + 1);
  });
});

describe("the rarity table", () => {
  it("has 6666 entries with the tier shares of the design", () => {
    const table = t.chain.collection.rarityTable();
    expect(table.entries).toHaveLength(6666);
    const ranked = table.ranked;
    const count = (tier: string) => table.entries.filter((e) => e.tier === tier).length;
    expect(count("Legendary")).toBe(Math.round(ranked * 0.01));
    expect(count("Epic")).toBe(Math.round(ranked * 0.05) - Math.round(ranked * 0.01));
    expect(count("Rare")).toBe(Math.round(ranked * 0.2) - Math.round(ranked * 0.05));
    expect(count("Uncommon")).toBe(Math.round(ranked * 0.5) - Math.round(ranked * 0.2));
    expect(count("Unrevealed")).toBe(6666 - ranked);
  });
});

describe("when the collection chain cannot be read", () => {
  it("answers 503 upstream_unavailable with Retry-After, not a stack trace", async () => {
    // A snapshot older than the bound makes the next request sync, and the sync hits the outage.
    t.outlastStaleness();
    l1Down = true;
    try {
      const { status, body, res } = await get("/agents/info/2");
      expect(status).toBe(503);
      expect(body.error.code).toBe("upstream_unavailable");
      expect(res.headers.get("retry-after")).toBe("5");
    } finally {
      l1Down = false;
    }
    expect((await get("/agents/info/2")).status).toBe(200);
  });
});

/**
 * Sample answers for the OpenAPI document. Tests parse each one with its response schema,
 * so an example cannot drift from the contract.
 */
const holder = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const eth = (amount: string, usd: number) => ({ amount, currency: "ETH", decimals: 18, usd });

export const examples = {
  intel: {
    tokenId: 7,
    name: "Agent #7",
    rarity_tier: "Rare",
    rarity_score: 41.37,
    edition: "Genesis",
    traits: { Class: "Cartographer", Core: "Obsidian", Signal: "Low-band", Mission: "Recon" },
    brief:
      "Agent #7 is a Rare Cartographer (score 41.37, rank 912 of 6666). Its Obsidian core and low-band signal favour " +
      "quiet reconnaissance: watch new drops on Base before they trend.",
    caller: holder,
  },
  dropRadar: {
    type: "upcoming",
    generatedAt: "2026-11-22T12:00:00.000Z",
    count: 1,
    drops: [
      {
        slug: "night-owls",
        name: "Night Owls",
        chain: "base",
        imageUrl: "https://example.org/night-owls.png",
        openseaUrl: "https://opensea.io/collection/night-owls",
        contractAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        totalSupply: 1200,
        maxSupply: 5000,
        remaining: 3800,
        stages: [
          {
            name: "Allowlist",
            kind: "allowlist",
            startsAt: "2026-11-23T16:00:00.000Z",
            endsAt: "2026-11-24T16:00:00.000Z",
            price: eth("10000000000000000", 31.2),
            maxPerWallet: 2,
          },
        ],
        walletEligibility: { wallet: null, checked: false, eligible: null, stages: [], error: null },
      },
    ],
    brief: "1 upcoming drop: Night Owls on Base opens its allowlist stage in 28 hours at 0.01 ETH, 3800 of 5000 left.",
    caller: holder,
  },
  b20Radar: {
    generatedAt: "2026-11-22T12:00:00.000Z",
    count: 1,
    detectedCount: 1,
    truncated: false,
    fromBlock: "1000",
    toBlock: "44200",
    blocksBack: 43200,
    tokens: [
      {
        address: "0xB200000000000000000000000000000000000001",
        variant: "ASSET",
        name: "Harbor Credit",
        symbol: "HBC",
        decimals: 18,
        totalSupply: "1000000000000000000000000",
        currency: "",
        initialized: true,
        market: {
          priceUsd: 0.042,
          volumeH24: 182000,
          liquidityUsd: 61000,
          priceChangeH24: 12.5,
          txns24: 930,
          marketCap: 42000,
          risk: { level: "elevated", volToLiq: 2.98, flags: ["volume is 3x liquidity"] },
          url: "https://dexscreener.com/base/0xb200000000000000000000000000000000000001",
        },
      },
    ],
    brief:
      "1 B20 token deployed in the last 43200 blocks: Harbor Credit (HBC) trades $182k a day on $61k of liquidity.",
  },
  altchainRadar: {
    generatedAt: "2026-11-22T12:00:00.000Z",
    count: 1,
    tokens: [
      {
        address: "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0",
        symbol: "TIDE",
        name: "Tide",
        priceUsd: 1.84,
        volume24hUsd: 2400000,
        liquidityUsd: 900000,
        marketCapUsd: 18400000,
        priceChange24h: -6.1,
        txns24: 5120,
        risk: { level: "low", volToLiq: 2.67, flags: [] },
        url: "https://dexscreener.com/altchain/0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0",
      },
    ],
    brief: "Top token by 24h volume: TIDE, $2.4M traded on $900k liquidity, down 6.1%.",
    clearance: "Elite",
  },
  portfolio: {
    wallet: holder,
    chain: "ethereum",
    nftCount: 1,
    nfts: [
      {
        contract: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        identifier: "7",
        collection: "agent-tools-genesis",
        name: "Agent #7",
        imageUrl: null,
        openseaUrl: "https://opensea.io/assets/ethereum/0x5fbdb2315678afecb367f032d93f642f64180aa3/7",
        tokenStandard: "erc721",
        floorPrice: eth("250000000000000000", 780),
      },
    ],
    offersReceived: [],
    estimatedValueUsd: 780,
    brief: "1 NFT worth about $780 at collection floors; no offers received.",
    clearance: "Rare",
  },
  allowlistScan: {
    type: "all",
    generatedAt: "2026-11-22T12:00:00.000Z",
    scanned: 2,
    eligibleCount: 1,
    eligible: [
      {
        slug: "night-owls",
        name: "Night Owls",
        chain: "base",
        openseaUrl: "https://opensea.io/collection/night-owls",
        nextStageAt: "2026-11-23T16:00:00.000Z",
        stages: [{ stage: "Allowlist", eligible: true, reason: null }],
      },
    ],
    ineligible: [],
    brief: "Eligible for 1 of 2 active or upcoming drops: Night Owls' allowlist opens in 28 hours.",
    clearance: "Rare",
  },
  offerRadar: {
    count: 1,
    collections: [
      {
        slug: "night-owls",
        rank: 1,
        floor: eth("250000000000000000", 780),
        bestListings: [{ identifier: "88", price: eth("250000000000000000", 780), maker: holder, expiresAt: null }],
        collectionOffers: [{ price: eth("260000000000000000", 811), quantity: 3, maker: holder, expiresAt: null }],
        topBid: eth("260000000000000000", 811),
        bidAboveFloor: true,
        spreadPct: -4,
        error: null,
      },
    ],
    brief: "night-owls has a collection bid 4% above its 0.25 ETH floor: buy the floor and accept the bid.",
    clearance: "Elite",
  },
  dispatch: {
    generatedAt: "2026-11-22T12:00:00.000Z",
    mission: {
      id: "6f1c2b1e-4d7a-4f0e-9a51-2a3c5d8e7f10",
      tokenId: 3,
      tool: "allowlist-scan",
      params: { type: "upcoming", limit: 10, scanChains: true, eligibleOnly: false },
      status: "queued",
      requestedBy: holder,
      createdAt: "2026-11-22T12:00:00.000Z",
      runAt: "2026-11-23T08:00:00.000Z",
      startedAt: null,
      finishedAt: null,
      attempts: 0,
      result: null,
      error: null,
    },
    brief:
      "Mission queued for agent #3: allowlist-scan runs at 2026-11-23T08:00:00.000Z (in 20 hours). See its result with GET /dispatch?tokenId=3.",
  },
  missions: {
    tokenId: 3,
    generatedAt: "2026-11-23T09:00:00.000Z",
    counts: { queued: 0, running: 0, done: 1, failed: 0 },
    missions: [
      {
        id: "6f1c2b1e-4d7a-4f0e-9a51-2a3c5d8e7f10",
        tokenId: 3,
        tool: "allowlist-scan",
        params: { type: "upcoming", limit: 10, scanChains: true, eligibleOnly: false },
        status: "done",
        requestedBy: holder,
        createdAt: "2026-11-22T12:00:00.000Z",
        runAt: "2026-11-23T08:00:00.000Z",
        startedAt: "2026-11-23T08:00:00.412Z",
        finishedAt: "2026-11-23T08:00:01.118Z",
        attempts: 1,
        result: {
          type: "upcoming",
          generatedAt: "2026-11-23T08:00:01.100Z",
          scanned: 2,
          eligibleCount: 0,
          eligible: [],
          ineligible: [],
          brief: "Eligible for none of 2 active or upcoming drops.",
        },
        error: null,
      },
    ],
    brief: "Agent #3 has 1 mission: 1 done. The latest, allowlist-scan, finished at 2026-11-23T08:00:01.118Z.",
  },
} as const;

/**
 * Public answers about token 7 as the embedded default serves them at http://127.0.0.1:8402 (the devnet's fixed
 * seeding): the reference page shows real records, and a server test compares each with the live answer.
 */
export const publicExamples = {
  agentInfo: {
    tokenId: 7,
    name: "Agent #7",
    edition: "Genesis",
    owner: "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955",
    image: "http://127.0.0.1:8402/agents/7/image.svg",
    traits: {
      Class: "Scout",
      Core: "Copper",
      Signal: "Mid-band",
      Mission: "Liquidity",
      Visor: "Mirror",
      Aura: "Frost",
    },
    rarity: {
      tier: "Common",
      score: 14.9853,
      rank: 3056,
      of: 6000,
    },
    clearance: "Holder",
    registration: {
      agentId: "7",
      agentRegistry: "eip155:31337:0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
      registrationFile: "http://127.0.0.1:8402/.well-known/agents/7.json",
      binding: {
        bound: true,
        standard: "ERC-8217",
        statusUrl: "http://127.0.0.1:8402/agents/7/binding",
      },
    },
  },
  registrationFile: {
    type: "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
    name: "Agent #7",
    description:
      "Agent #7 is a Common token-bound agent of the Agent Tools collection: a Scout on Liquidity missions, rarity rank 3056. Clearance Holder.",
    image: "http://127.0.0.1:8402/agents/7/image.svg",
    services: [
      {
        name: "web",
        endpoint: "http://127.0.0.1:8402/agents/info/7",
      },
      {
        name: "OpenAPI",
        endpoint: "http://127.0.0.1:8402/openapi.json",
        version: "3.1.0",
      },
      {
        name: "MCP",
        endpoint: "http://127.0.0.1:8402/mcp",
        version: "2025-06-18",
      },
      {
        name: "A2A",
        endpoint: "http://127.0.0.1:8402/.well-known/agent-card.json",
        version: "1.0",
      },
      {
        name: "x402",
        endpoint: "http://127.0.0.1:8402/.well-known/x402",
        version: "2",
      },
      {
        name: "serviceIntel",
        endpoint: "http://127.0.0.1:8402/intel",
        version: "1.0.0",
      },
      {
        name: "serviceDropRadar",
        endpoint: "http://127.0.0.1:8402/drop-radar",
        version: "1.0.0",
      },
      {
        name: "serviceB20Radar",
        endpoint: "http://127.0.0.1:8402/b20-radar",
        version: "1.0.0",
      },
      {
        name: "serviceAltchainRadar",
        endpoint: "http://127.0.0.1:8402/altchain-radar",
        version: "1.0.0",
      },
      {
        name: "servicePortfolio",
        endpoint: "http://127.0.0.1:8402/portfolio",
        version: "1.0.0",
      },
      {
        name: "serviceAllowlistScan",
        endpoint: "http://127.0.0.1:8402/allowlist-scan",
        version: "1.0.0",
      },
      {
        name: "serviceOfferRadar",
        endpoint: "http://127.0.0.1:8402/offer-radar",
        version: "1.0.0",
      },
    ],
    x402Support: true,
    active: true,
    registrations: [
      {
        agentId: 7,
        agentRegistry: "eip155:31337:0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
      },
    ],
    supportedTrust: [],
  },
  bindingStatus: {
    tokenId: 7,
    agentId: "7",
    agentRegistry: "eip155:31337:0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
    bound: true,
    standard: "ERC-8217",
    bindingContract: "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0",
    tokenStandard: "ERC721",
    tokenContract: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    boundTokenId: "7",
    owner: "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955",
    blockNumber: "53",
  },
} as const;

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
} as const;

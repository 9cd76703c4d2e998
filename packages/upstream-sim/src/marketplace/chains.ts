/**
 * The marketplace's chains as the fixtures use them: OpenSea's chain slugs (its `ChainIdentifier` enum), the
 * native currency drops are priced in, and the wrapped token offers are made in.
 */

/** OpenSea's `ChainIdentifier` enum (opensea-api.json), in the document's order; a test keeps them in sync. */
export const OPENSEA_CHAIN_IDENTIFIERS = [
  "blast",
  "base",
  "ethereum",
  "zora",
  "arbitrum",
  "sei",
  "avalanche",
  "polygon",
  "optimism",
  "ape_chain",
  "flow",
  "b3",
  "soneium",
  "ronin",
  "bera_chain",
  "solana",
  "shape",
  "unichain",
  "gunzilla",
  "abstract",
  "animechain",
  "hyperevm",
  "somnia",
  "monad",
  "hyperliquid",
  "megaeth",
  "ink",
  "robinhood",
  "stablechain",
  "arc",
] as const;
export type OpenSeaChain = (typeof OPENSEA_CHAIN_IDENTIFIERS)[number];

export function isOpenSeaChain(value: string): value is OpenSeaChain {
  return (OPENSEA_CHAIN_IDENTIFIERS as readonly string[]).includes(value);
}

export interface ChainCurrency {
  chain: OpenSeaChain;
  /** Native currency symbol (drop prices, listings). */
  native: string;
  nativeName: string;
  /** Wrapped native token offers are made in. */
  wrapped: string;
  wrappedAddress: string;
  /** Fixture USD price of one native unit. */
  usd: number;
}

/** Fixture USD price of one ETH. */
export const ETH_USD = 3150.42;

export const NATIVE_CURRENCY_ADDRESS = "0x0000000000000000000000000000000000000000";

/** Chains that have fixture data (drops, collections or holdings). Fixture prices, not market quotes. */
export const MARKETPLACE_CHAINS: readonly ChainCurrency[] = [
  eth("ethereum", "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"),
  eth("base", "0x4200000000000000000000000000000000000006"),
  eth("arbitrum", "0x82af49447d8a07e3bd95bd0d56f35241523fbab1"),
  eth("optimism", "0x4200000000000000000000000000000000000006"),
  {
    chain: "polygon",
    native: "POL",
    nativeName: "Polygon Ecosystem Token",
    wrapped: "WETH",
    wrappedAddress: "0x7ceb23fd6bc0add59e62ac25578270cff1b9f619",
    usd: 0.2315,
  },
  eth("zora", "0x4200000000000000000000000000000000000006"),
  eth("blast", "0x4300000000000000000000000000000000000004"),
  {
    chain: "ape_chain",
    native: "APE",
    nativeName: "ApeCoin",
    wrapped: "WAPE",
    wrappedAddress: "0x48b62137edfa95a428d35c09e44256a739f6b557",
    usd: 0.6182,
  },
  eth("abstract", "0x3439153eb7af838ad19d56e1571fbd09333c2809"),
  eth("shape", "0x4200000000000000000000000000000000000006"),
  eth("unichain", "0x4200000000000000000000000000000000000006"),
  eth("soneium", "0x4200000000000000000000000000000000000006"),
  eth("ink", "0x4200000000000000000000000000000000000006"),
  {
    chain: "bera_chain",
    native: "BERA",
    nativeName: "Berachain",
    wrapped: "WBERA",
    wrappedAddress: "0x6969696969696969696969696969696969696969",
    usd: 2.415,
  },
  {
    chain: "ronin",
    native: "RON",
    nativeName: "Ronin",
    wrapped: "WRON",
    wrappedAddress: "0xe514d9deb7966c8be0ca922de8a064264ea6bcd4",
    usd: 0.5521,
  },
  {
    chain: "avalanche",
    native: "AVAX",
    nativeName: "Avalanche",
    wrapped: "WAVAX",
    wrappedAddress: "0xb31f66aa3c1e785363f0875a1b74e27b85fd66c7",
    usd: 24.12,
  },
];

function eth(chain: OpenSeaChain, wrappedAddress: string): ChainCurrency {
  return { chain, native: "ETH", nativeName: "Ether", wrapped: "WETH", wrappedAddress, usd: ETH_USD };
}

export function chainCurrency(chain: string): ChainCurrency {
  const found = MARKETPLACE_CHAINS.find((c) => c.chain === chain);
  if (!found) throw new Error(`no fixture currency for chain ${chain}`);
  return found;
}

/** USDC on Base: the one drop priced in an ERC-20. */
export const BASE_USDC_ADDRESS = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913";

/** Seaport 1.6, the protocol address of every fixture order. */
export const SEAPORT_ADDRESS = "0x0000000000000068f116a894984e2db1123eb395";
/** OpenSea's fee recipient. */
export const OPENSEA_FEE_RECIPIENT = "0x0000a26b00c1f0df003000390027140000faa719";
/** OpenSea's signed zone. */
export const OPENSEA_ZONE = "0x000056f7000000ece9003ca63978907a00ffd100";
/** OpenSea's conduit key. */
export const OPENSEA_CONDUIT_KEY = "0x0000007b02230091a7ed01230072f7006a004d60a8d4e71d599b8104250f0000";

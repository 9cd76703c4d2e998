/**
 * The marketplace's EVM chains, one row each: every fact the service keeps per chain. The ids are those of OpenSea's
 * `ChainIdentifier` enum (opensea-api.json; `solana` left out: wallets here are EVM addresses), in its order; the
 * marketplace answers 400 for any other chain.
 */
/**
 * `name`: how a brief names the chain (a chain without one is named by its id); `native`: the symbol of its native
 * currency (drop prices in `price_currency_address` 0x0); `drops`: the marketplace runs drops there, so `scanChains`
 * queries it on its own.
 */
const CHAINS: Record<string, { name?: string; native?: string; drops?: true }> = {
  blast: { name: "Blast", native: "ETH", drops: true },
  base: { name: "Base", native: "ETH", drops: true },
  ethereum: { name: "Ethereum", native: "ETH", drops: true },
  zora: { name: "Zora", native: "ETH", drops: true },
  arbitrum: { name: "Arbitrum", native: "ETH", drops: true },
  sei: { native: "SEI" },
  avalanche: { name: "Avalanche", native: "AVAX", drops: true },
  polygon: { name: "Polygon", native: "POL", drops: true },
  optimism: { name: "Optimism", native: "ETH", drops: true },
  ape_chain: { name: "ApeChain", native: "APE", drops: true },
  flow: { native: "FLOW" },
  b3: { native: "ETH" },
  soneium: { name: "Soneium", native: "ETH", drops: true },
  ronin: { name: "Ronin", native: "RON", drops: true },
  bera_chain: { name: "Berachain", native: "BERA", drops: true },
  shape: { name: "Shape", native: "ETH", drops: true },
  unichain: { name: "Unichain", native: "ETH", drops: true },
  gunzilla: {},
  abstract: { name: "Abstract", native: "ETH", drops: true },
  animechain: {},
  hyperevm: { native: "HYPE" },
  somnia: {},
  monad: { native: "MON" },
  hyperliquid: {},
  megaeth: {},
  ink: { name: "Ink", native: "ETH", drops: true },
  robinhood: {},
  stablechain: {},
  arc: {},
};

/** Every EVM chain the marketplace knows. */
export const MARKETPLACE_EVM_CHAINS: readonly string[] = Object.keys(CHAINS);

/** The chains `scanChains` queries one by one: those the marketplace runs drops on. */
export const KNOWN_DROP_CHAINS: readonly string[] = MARKETPLACE_EVM_CHAINS.filter((chain) => CHAINS[chain]?.drops);

/** "Ethereum", "ApeChain"; a chain without a name keeps its id. */
export function chainName(chain: string): string {
  return CHAINS[chain]?.name ?? chain;
}

/** The symbol of the chain's native currency, when known. */
export function nativeSymbol(chain: string): string | undefined {
  return CHAINS[chain]?.native;
}

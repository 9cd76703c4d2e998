/**
 * The EVM chains the marketplace runs drops on, with their names: `scanChains` queries them one by one (a chain
 * the marketplace stops knowing answers 400 and is skipped, not fatal), and the briefs name them.
 */
export const DROP_CHAINS = {
  ethereum: "Ethereum",
  base: "Base",
  arbitrum: "Arbitrum",
  optimism: "Optimism",
  polygon: "Polygon",
  zora: "Zora",
  blast: "Blast",
  ape_chain: "ApeChain",
  abstract: "Abstract",
  shape: "Shape",
  unichain: "Unichain",
  soneium: "Soneium",
  ink: "Ink",
  bera_chain: "Berachain",
  ronin: "Ronin",
  avalanche: "Avalanche",
} as const;

export type DropChain = keyof typeof DROP_CHAINS;

/** The chains `scanChains` queries one by one. */
export const KNOWN_DROP_CHAINS = Object.keys(DROP_CHAINS) as DropChain[];

/** "Ethereum", "ApeChain"; a chain the table does not know keeps its id. */
export function chainName(chain: string): string {
  return (DROP_CHAINS as Record<string, string>)[chain] ?? chain;
}

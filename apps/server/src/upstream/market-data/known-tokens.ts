/**
 * What the radars know about a market-data chain (DexScreener chain ids): its name, the search queries that find its
 * most traded pairs, and its stablecoins and wrapped natives by address, by which `classifyToken` sorts its tokens
 * (docs/api.md, "Market tools and their sources").
 */
import { type Address, getAddress } from "viem";

export type KnownKind = "stablecoin" | "wrapped_native";

export interface KnownToken {
  address: Address;
  symbol: string;
  name: string;
  kind: KnownKind;
}

export interface ChainProfile {
  chainId: string;
  /** Name for people: "BNB Smart Chain". */
  name: string;
  /** Search queries whose results together hold the chain's most traded pairs (its wrapped native, its main stable). */
  activityQueries: string[];
  /** Stablecoins and wrapped natives by address. */
  known: KnownToken[];
}

const known = (address: string, symbol: string, name: string, kind: KnownKind): KnownToken => ({
  address: getAddress(address),
  symbol,
  name,
  kind,
});

// biome-ignore format: one token per line reads as a table
const CHAINS: ChainProfile[] = [
  {
    chainId: "bsc",
    name: "BNB Smart Chain",
    activityQueries: ["WBNB", "USDT"],
    known: [
      known("0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c", "WBNB", "Wrapped BNB", "wrapped_native"),
      known("0x2170Ed0880ac9A755fd29B2688956BD959F933F8", "ETH", "Ethereum Token (bridged)", "wrapped_native"),
      known("0x7130d2A12B9BCbFAe4f2634d864A1Ee1Ce3Ead9c", "BTCB", "BTCB Token (bridged)", "wrapped_native"),
      known("0x55d398326f99059fF775485246999027B3197955", "USDT", "Tether USD", "stablecoin"),
      known("0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d", "USDC", "USD Coin", "stablecoin"),
      known("0xc5f0f7b66764F6ec8C8Dff7BA683102295E16409", "FDUSD", "First Digital USD", "stablecoin"),
      known("0xe9e7CEA3DedcA5984780Bafc599bD69ADd087D56", "BUSD", "Binance USD", "stablecoin"),
      known("0x1AF3F329e8BE154074D8769D1FFa4eE058B1DBc3", "DAI", "Dai Stablecoin", "stablecoin"),
    ],
  },
  {
    chainId: "base",
    name: "Base",
    activityQueries: ["WETH", "USDC"],
    known: [
      known("0x4200000000000000000000000000000000000006", "WETH", "Wrapped Ether", "wrapped_native"),
      known("0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf", "cbBTC", "Coinbase Wrapped BTC", "wrapped_native"),
      known("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "USDC", "USD Coin", "stablecoin"),
      known("0xd9aAEc86B65D86f6A7B5B1b0c42FFA531710b6CA", "USDbC", "USD Base Coin (bridged)", "stablecoin"),
      known("0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb", "DAI", "Dai Stablecoin", "stablecoin"),
      known("0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42", "EURC", "Euro Coin", "stablecoin"),
    ],
  },
  {
    chainId: "ethereum",
    name: "Ethereum",
    activityQueries: ["WETH", "USDT"],
    known: [
      known("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", "WETH", "Wrapped Ether", "wrapped_native"),
      known("0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599", "WBTC", "Wrapped BTC", "wrapped_native"),
      known("0xdAC17F958D2ee523a2206206994597C13D831ec7", "USDT", "Tether USD", "stablecoin"),
      known("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "USDC", "USD Coin", "stablecoin"),
      known("0x6B175474E89094C44Da98b954EedeAC495271d0F", "DAI", "Dai Stablecoin", "stablecoin"),
    ],
  },
];

const BY_ID = new Map(CHAINS.map((c) => [c.chainId, c]));

/** The profile of a chain; a chain the list does not know gets its id as name and generic queries. */
export function chainProfile(chainId: string): ChainProfile {
  return BY_ID.get(chainId) ?? { chainId, name: chainId, activityQueries: ["WETH", "USDT", "USDC"], known: [] };
}

// biome-ignore format: a list of symbols
const STABLE_SYMBOLS = new Set([
  "USDT", "USDC", "DAI", "BUSD", "FDUSD", "TUSD", "USDD", "USDP", "USDE", "USDS", "PYUSD", "FRAX", "LUSD", "GUSD",
  "USD1", "USDB", "USDBC", "EURC", "EURT", "EURS", "CRVUSD", "GHO", "RLUSD", "USD0", "SUSD", "MIM",
]);
// biome-ignore format: a list of symbols
const WRAPPED_NATIVE_SYMBOLS = new Set([
  "WBNB", "WETH", "WBTC", "BTCB", "CBBTC", "WSOL", "WMATIC", "WPOL", "WAVAX", "WFTM", "WCRO", "WMNT", "WHYPE",
]);

/** Price band (USD) a token must trade in for its stablecoin-like symbol to make it a stablecoin. */
const STABLE_PRICE_BAND = [0.5, 2] as const;

export type TokenClass =
  | { kind: "stablecoin" | "wrapped_native"; listed: boolean }
  | { kind: "impostor"; imitates: KnownToken }
  | { kind: "token" };

function looksStable(symbol: string, priceUsd: number | null): boolean {
  const s = symbol.toUpperCase();
  const stableSymbol = STABLE_SYMBOLS.has(s) || /^(USD|EUR)/.test(s) || /USD$/.test(s);
  return stableSymbol && priceUsd !== null && priceUsd >= STABLE_PRICE_BAND[0] && priceUsd <= STABLE_PRICE_BAND[1];
}

/**
 * Stablecoin, wrapped native, impostor of one of them, or an ordinary token, by these rules in this order:
 * 1. a token at an address of the chain's list is what the list says (bridged majors, such as ETH and BTCB on BNB Smart
 *    Chain, count as wrapped natives: wrapped natives of their home chain);
 * 2. a token with the symbol of a listed token of the same chain at another address imitates it (scam tokens copy
 *    "USDT"): it is no stablecoin or wrapped native, stays in the radar as an ordinary token, and its risk is raised
 *    to high with a flag naming the real token's address;
 * 3. off the list (other chains, new stablecoins), a stablecoin-like symbol (a well-known stablecoin symbol, or one
 *    beginning with USD/EUR or ending in USD) trading within {@link STABLE_PRICE_BAND} is a stablecoin, so a worthless
 *    copy of a stablecoin's symbol stays out of the class even on a chain the list does not cover; a wrapped-native
 *    symbol (WBNB, WETH, WBTC, BTCB, ...) is a wrapped native.
 * Everything else (community tokens, tokenized assets) is an ordinary token.
 */
export function classifyToken(
  chainId: string,
  token: { address: string; symbol: string; priceUsd: number | null },
): TokenClass {
  const { known: list } = chainProfile(chainId);
  const address = token.address.toLowerCase();
  const listed = list.find((k) => k.address.toLowerCase() === address);
  if (listed) return { kind: listed.kind, listed: true };
  const imitated = list.find((k) => k.symbol.toUpperCase() === token.symbol.toUpperCase());
  if (imitated) return { kind: "impostor", imitates: imitated };
  if (looksStable(token.symbol, token.priceUsd)) return { kind: "stablecoin", listed: false };
  if (WRAPPED_NATIVE_SYMBOLS.has(token.symbol.toUpperCase())) return { kind: "wrapped_native", listed: false };
  return { kind: "token" };
}

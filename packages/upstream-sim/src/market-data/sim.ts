/**
 * The market-data simulator: DexScreener's public API (no key) answering from the fixtures.
 *
 * "The most active tokens of a chain": DexScreener has no per-chain ranking endpoint. The simulator serves what a
 * client can combine on the real service:
 * - `GET /latest/dex/search?q=<symbol>`: up to 30 pairs whose base or quote token matches, across chains, most
 *   traded (24h volume) first. Querying a chain's wrapped native and main stablecoin (`WBNB`, `USDT` on bsc) and
 *   keeping `chainId === "bsc"` yields the chain's most active pairs;
 * - `GET /token-boosts/top/v1` (tokens with the most active boosts, all chains: filter by `chainId`), then
 *   `GET /tokens/v1/{chainId}/{up to 30 addresses}` for their pairs;
 * then rank by `volume.h24`. See the package README.
 */
import { cdnErrorPage, json } from "../core/http-helpers.js";
import {
  type Route,
  type RouteContext,
  type SimServer,
  type SimServerOptions,
  startSimServer,
} from "../core/sim-server.js";
import { type DexPairWire, type MarketDataFixture, marketDataFixture } from "./fixtures.js";

export type MarketDataSimOptions = SimServerOptions;

export interface MarketDataSim extends SimServer {
  /** The fixture the simulator answers from right now (it depends on the clock's minute). */
  fixture(): MarketDataFixture;
}

export const MARKET_DATA_ROUTES = {
  tokens: "/tokens/v1/{chainId}/{tokenAddresses}",
  tokenPairs: "/token-pairs/v1/{chainId}/{tokenAddress}",
  search: "/latest/dex/search",
  pairs: "/latest/dex/pairs/{chainId}/{pairAddresses}",
  boostsTop: "/token-boosts/top/v1",
  boostsLatest: "/token-boosts/latest/v1",
  profilesLatest: "/token-profiles/latest/v1",
} as const;

/** Addresses one `/tokens/v1` call accepts. */
export const MAX_TOKEN_ADDRESSES = 30;
/** Pairs one search (or `/token-pairs/v1` call) returns at most. */
export const MAX_SEARCH_PAIRS = 30;

const SCHEMA_VERSION = "1.0.0";

function sameAddress(chainId: string, a: string, b: string): boolean {
  return chainId === "solana" ? a === b : a.toLowerCase() === b.toLowerCase();
}

function byLiquidityDesc(a: DexPairWire, b: DexPairWire): number {
  return (b.liquidity?.usd ?? 0) - (a.liquidity?.usd ?? 0);
}

function involves(pair: DexPairWire, address: string): boolean {
  return (
    sameAddress(pair.chainId, pair.baseToken.address, address) ||
    sameAddress(pair.chainId, pair.quoteToken.address, address)
  );
}

const badRequest = (message: string) => json(400, { message });

export function marketDataRoutes(now: () => number): Route[] {
  const fx = () => marketDataFixture(now());
  return [
    {
      template: MARKET_DATA_ROUTES.tokens,
      handler: ({ params }: RouteContext) => {
        const chainId = params.chainId!;
        const addresses = params
          .tokenAddresses!.split(",")
          .map((a) => a.trim())
          .filter(Boolean);
        if (addresses.length === 0) return badRequest("tokenAddresses: at least one address is required");
        if (addresses.length > MAX_TOKEN_ADDRESSES) {
          return badRequest(`tokenAddresses: at most ${MAX_TOKEN_ADDRESSES} addresses per request`);
        }
        const onChain = fx().pairs.filter((p) => p.chainId === chainId);
        const seen = new Set<string>();
        const out: DexPairWire[] = [];
        for (const address of addresses) {
          const pairs = onChain
            .filter((p) => involves(p, address))
            .sort(byLiquidityDesc)
            .slice(0, MAX_SEARCH_PAIRS);
          for (const pair of pairs) {
            if (seen.has(pair.pairAddress)) continue;
            seen.add(pair.pairAddress);
            out.push(pair);
          }
        }
        return json(200, out);
      },
    },
    {
      template: MARKET_DATA_ROUTES.tokenPairs,
      handler: ({ params }: RouteContext) => {
        const { chainId, tokenAddress } = params as { chainId: string; tokenAddress: string };
        const pairs = fx()
          .pairs.filter((p) => p.chainId === chainId && involves(p, tokenAddress))
          .sort(byLiquidityDesc)
          .slice(0, MAX_SEARCH_PAIRS);
        return json(200, pairs);
      },
    },
    {
      template: MARKET_DATA_ROUTES.search,
      handler: ({ query }: RouteContext) => {
        const q = query.get("q")?.trim();
        if (!q) return badRequest("q: a search query is required");
        const terms = q
          .toLowerCase()
          .split(/[\s/]+/)
          .filter(Boolean);
        const matches = (pair: DexPairWire, term: string) =>
          [pair.baseToken, pair.quoteToken].some(
            (t) =>
              t.symbol.toLowerCase().includes(term) ||
              t.name.toLowerCase().includes(term) ||
              t.address.toLowerCase() === term,
          ) || pair.pairAddress.toLowerCase() === term;
        const pairs = fx()
          .pairs.filter((p) => terms.every((term) => matches(p, term)))
          .sort((a, b) => b.volume.h24 - a.volume.h24)
          .slice(0, MAX_SEARCH_PAIRS);
        return json(200, { schemaVersion: SCHEMA_VERSION, pairs });
      },
    },
    {
      template: MARKET_DATA_ROUTES.pairs,
      handler: ({ params }: RouteContext) => {
        const chainId = params.chainId!;
        const wanted = params
          .pairAddresses!.split(",")
          .map((a) => a.trim())
          .filter(Boolean);
        if (wanted.length > MAX_TOKEN_ADDRESSES) {
          return badRequest(`pairAddresses: at most ${MAX_TOKEN_ADDRESSES} addresses per request`);
        }
        const pairs = fx().pairs.filter(
          (p) => p.chainId === chainId && wanted.some((w) => sameAddress(chainId, p.pairAddress, w)),
        );
        return json(200, { schemaVersion: SCHEMA_VERSION, pairs: pairs.length > 0 ? pairs : null });
      },
    },
    { template: MARKET_DATA_ROUTES.boostsTop, handler: () => json(200, fx().boostsTop) },
    { template: MARKET_DATA_ROUTES.boostsLatest, handler: () => json(200, fx().boostsLatest) },
    { template: MARKET_DATA_ROUTES.profilesLatest, handler: () => json(200, fx().profilesLatest) },
  ];
}

/** Starts the market-data simulator (DexScreener) on 127.0.0.1 and a free port unless told otherwise. */
export async function createMarketDataSim(options: MarketDataSimOptions = {}): Promise<MarketDataSim> {
  let server: SimServer | undefined;
  const now = () => server?.now() ?? Date.now();
  server = await startSimServer(
    {
      name: "market-data-sim",
      routes: marketDataRoutes(() => now()),
      errorBody: (status) => {
        if (status === 429) {
          return { contentType: "application/json", text: JSON.stringify({ message: "Too Many Requests" }) };
        }
        if (status >= 502) {
          return { contentType: "text/html; charset=UTF-8", text: cdnErrorPage(status, "api.dexscreener.com") };
        }
        return { contentType: "application/json", text: JSON.stringify({ message: "Internal Server Error" }) };
      },
      notFound: () => json(404, { message: "Not Found" }),
    },
    options,
  );
  const sim = server;
  return Object.assign(sim, { fixture: () => marketDataFixture(sim.now()) });
}

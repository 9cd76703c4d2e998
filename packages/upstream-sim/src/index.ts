/**
 * @agent-tools/upstream-sim — local HTTP servers speaking the marketplace's (OpenSea API v2) and the market-data
 * aggregator's (DexScreener) wire formats from deterministic fixtures, with injectable latency and faults
 * (docs/architecture.md, "Upstream services").
 *
 * - `createMarketplaceSim()`: OpenSea v2 drops, drop detail, eligibility, account NFTs, offers received,
 *   collections, stats, best listings and collection offers, behind `x-api-key`.
 * - `createMarketDataSim()`: DexScreener tokens, token pairs, search, pairs, boosts and profiles.
 * - `startUpstreamSims()`: both, for the embedded default.
 * - `startFaultProxy()`: a reverse proxy in front of any origin that injects network and upstream faults.
 * - `startRpcProxy()`: a JSON-RPC proxy that behaves like a hosted RPC provider (latency, throttling in bursts,
 *   a cap on `eth_getLogs` ranges).
 * - `MARKETPLACE_FACTS`, `MARKET_DATA_FACTS`: what the fixtures contain, for tests.
 */
export {
  type ActiveFault,
  type Fault,
  FaultController,
  type FaultStatus,
  type MalformedKind,
  type RoutePattern,
} from "./core/faults.js";
export type { Clock, SimRequest, SimServer, SimServerOptions } from "./core/sim-server.js";
export { DEMO_WALLETS, MARKET_DATA_FACTS, MARKET_THRESHOLDS, MARKETPLACE_FACTS } from "./facts.js";
export { type FaultProxy, type ProxiedRequest, type ProxyFault, startFaultProxy } from "./fault-proxy.js";
export {
  ALT_CHAIN_ID,
  B20_CHAIN_ID,
  B20_MIN_MARKET_AGE_BLOCKS,
  type BoostWire,
  type DexPairWire,
  type MarketDataFixture,
  marketDataFixture,
  type TokenKind,
  type TokenProfileWire,
} from "./market-data/fixtures.js";
export {
  createMarketDataSim,
  MARKET_DATA_ROUTES,
  MAX_SEARCH_PAIRS,
  MAX_TOKEN_ADDRESSES,
  type MarketDataSim,
  type MarketDataSimOptions,
} from "./market-data/sim.js";
export {
  ETH_USD,
  isOpenSeaChain,
  MARKETPLACE_CHAINS,
  OPENSEA_CHAIN_IDENTIFIERS,
  type OpenSeaChain,
} from "./marketplace/chains.js";
export {
  type BuiltDrop,
  DROP_FEEDS,
  DROP_SPECS,
  type DropFeed,
  type DropKind,
  dropEligibility,
  OPEN_ENDED_STAGE_END,
  STALE_DROP_MIN_AGE_DAYS,
} from "./marketplace/drops.js";
export {
  type MarketplaceFixture,
  marketplaceFixture,
  parseWalletAccessToken,
  simWalletAccessToken,
} from "./marketplace/fixture.js";
export { offerUnitPrice } from "./marketplace/market.js";
export {
  createMarketplaceSim,
  MARKETPLACE_ROUTES,
  type MarketplaceSim,
  type MarketplaceSimOptions,
} from "./marketplace/sim.js";
export type * from "./marketplace/wire.js";
export { type RpcProxy, type RpcProxyOptions, type RpcProxyStats, startRpcProxy } from "./rpc-proxy.js";
export {
  DEFAULT_MARKET_DATA_PORT,
  DEFAULT_MARKETPLACE_PORT,
  DEFAULT_SIM_HOST,
  type StartUpstreamSimsOptions,
  startUpstreamSims,
  type UpstreamSims,
} from "./start.js";

/**
 * Both simulators at once, as the embedded default starts them.
 */
import type { Clock } from "./core/sim-server.js";
import { createMarketDataSim, type MarketDataSim } from "./market-data/sim.js";
import { createMarketplaceSim, type MarketplaceSim } from "./marketplace/sim.js";

export const DEFAULT_SIM_HOST = "127.0.0.1";
/** Ports the command line uses by default (`startUpstreamSims` defaults to free ports). */
export const DEFAULT_MARKETPLACE_PORT = 8411;
export const DEFAULT_MARKET_DATA_PORT = 8412;

export interface StartUpstreamSimsOptions {
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 0 (a free port). */
  marketplacePort?: number;
  /** Default 0 (a free port). */
  marketDataPort?: number;
  /** Delay added to every answer of both simulators (ms). Default 0. */
  latencyMs?: number;
  /** Clock the fixtures follow. Default `Date.now`. */
  now?: Clock;
  /** Marketplace API key to require (default: any non-empty `x-api-key`). */
  apiKey?: string;
  /** Requests a minute each marketplace API key may make, as the key's plan allows (default: no budget). */
  marketplaceKeyBudgetPerMinute?: number;
}

export interface UpstreamSims {
  marketplace: MarketplaceSim;
  marketData: MarketDataSim;
  /** `{ marketplace: "http://127.0.0.1:…", marketData: "http://127.0.0.1:…" }`. */
  urls: { marketplace: string; marketData: string };
  close(): Promise<void>;
}

export async function startUpstreamSims(options: StartUpstreamSimsOptions = {}): Promise<UpstreamSims> {
  const host = options.host ?? DEFAULT_SIM_HOST;
  const common = { host, latencyMs: options.latencyMs ?? 0, ...(options.now ? { now: options.now } : {}) };
  const marketplace = await createMarketplaceSim({
    ...common,
    port: options.marketplacePort ?? 0,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    ...(options.marketplaceKeyBudgetPerMinute !== undefined
      ? { rateLimit: { limit: options.marketplaceKeyBudgetPerMinute, windowMs: 60_000, perHeader: "x-api-key" } }
      : {}),
  });
  let marketData: MarketDataSim;
  try {
    marketData = await createMarketDataSim({ ...common, port: options.marketDataPort ?? 0 });
  } catch (error) {
    await marketplace.close();
    throw error;
  }
  return {
    marketplace,
    marketData,
    urls: { marketplace: marketplace.url, marketData: marketData.url },
    async close() {
      await Promise.all([marketplace.close(), marketData.close()]);
    },
  };
}

import type { RequestBudget } from "../limits/request-budget.js";
import { createUpstreamClient, type UpstreamClient, type UpstreamObserver } from "./upstream-client.js";

export interface MarketDataClientOptions {
  /** DexScreener API origin, for example `https://api.dexscreener.com`. */
  baseUrl: string;
  timeoutMs?: number;
  fetch?: typeof globalThis.fetch;
  observer?: UpstreamObserver;
  /** The key's requests a minute (none when undefined). */
  budget?: RequestBudget;
}

/** The market-data aggregator (DexScreener; 300 requests a minute) behind the upstream client. */
export function createMarketDataClient(options: MarketDataClientOptions): UpstreamClient {
  return createUpstreamClient({
    name: "the market-data aggregator",
    baseUrl: options.baseUrl,
    timeoutMs: options.timeoutMs ?? 5000,
    cacheTtlMs: 30_000,
    maxConcurrency: 4,
    maxQueue: 256,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.observer ? { observer: options.observer } : {}),
    ...(options.budget ? { budget: options.budget } : {}),
  });
}

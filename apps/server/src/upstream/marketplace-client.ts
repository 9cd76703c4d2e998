import type { RequestBudget } from "../limits/request-budget.js";
import { createUpstreamClient, type UpstreamClient, type UpstreamObserver } from "./upstream-client.js";

export interface MarketplaceClientOptions {
  /** OpenSea API v2 origin, for example `https://api.opensea.io`. */
  baseUrl: string;
  apiKey: string;
  timeoutMs?: number;
  fetch?: typeof globalThis.fetch;
  observer?: UpstreamObserver;
  /** The key's requests a minute (none when undefined). */
  budget?: RequestBudget;
}

/** The marketplace (OpenSea API v2, `x-api-key`) behind the upstream client's timeouts, retries, cache and breaker. */
export function createMarketplaceClient(options: MarketplaceClientOptions): UpstreamClient {
  return createUpstreamClient({
    name: "the marketplace",
    baseUrl: options.baseUrl,
    headers: { "x-api-key": options.apiKey },
    timeoutMs: options.timeoutMs ?? 5000,
    cacheTtlMs: 30_000,
    maxConcurrency: 8,
    // A drop radar call alone may ask some 120 things at once; past a few such calls, the caller is told to retry.
    maxQueue: 512,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.observer ? { observer: options.observer } : {}),
    ...(options.budget ? { budget: options.budget } : {}),
  });
}

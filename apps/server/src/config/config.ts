/**
 * The configuration of the service, read from environment variables (config-env.ts) under the rules of real
 * networks (config-rules.ts). See docs/configuration.md.
 */

import type { LimitSettings } from "../limits/call-limiter.js";
import type { FacilitatorEndpoint } from "../settlement/http-facilitators.js";
import { CHANNEL_DEFAULTS, DEFAULT_CONNECTION_LIMITS, type Env, envSchema } from "./config-env.js";
import { ConfigError, valueAsTold } from "./config-error.js";
import { configProblems, DEVNET, isLocalNetwork } from "./config-rules.js";
import { PUBLIC_TEST_ADDRESSES } from "./public-test-accounts.js";

export { DEFAULT_LIMITS } from "./config-env.js";

/** Requests a minute the upstreams' keys allow by default outside local chains (OpenSea's free key, DexScreener). */
export const DEFAULT_UPSTREAM_BUDGETS = { marketplace: 60, marketData: 300 };

export type Config = {
  port: number;
  host: string;
  /** Public origin of the service; SIWE messages and absolute links are bound to it. */
  publicUrl: string;
  /** True when `PUBLIC_URL` was not given: the origin is the address the server listens on ({@link withListenerUrl}). */
  publicUrlIsListenerUrl: boolean;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /**
   * Bounds on the connections of slow or greedy clients (server.ts): time to send the headers and the whole
   * request, and connections at once per client address (0: none; the default behind a proxy, TRUST_PROXY).
   */
  connections: { headersTimeoutMs: number; requestTimeoutMs: number; perAddress: number };
  logLevel: Env["LOG_LEVEL"];
  anonymousAccess: boolean;
  payment: {
    network: string;
    asset: string;
    assetName: string;
    assetVersion: string;
    payTo: string;
    maxTimeoutSeconds: number;
  };
  /**
   * The key that signs x402 offers (the price in each 402) and receipts (each settled call), EIP-712; none: neither
   * is signed (docs/decisions.md, "Receipts").
   */
  receiptSignerKey?: `0x${string}`;
  /**
   * Payment channels (x402's `batch-settlement`, docs/channels.md): offered beside `exact` when a channel key is set
   * (on local chains, a devnet key), unless `CHANNELS=off`. `key` authorizes claims and refunds and, with the
   * built-in facilitator, sends the channels' transactions.
   */
  channels?: {
    key: `0x${string}`;
    withdrawDelaySeconds: number;
    claimIntervalMs: number;
    claimBatchSize: number;
    holdMs: number;
  };
  /**
   * x402's `upto` scheme (docs/api.md, "Prices by the work done"): offered beside `exact` unless `UPTO=off`, when the
   * payment chain has x402's upto proxy and a facilitator settles the scheme (checked at start).
   */
  upto: boolean;
  /** The collection chain: the collection (ERC-721 + ERC-7496) and the ERC-8004 Identity Registry. */
  l1: {
    /** CAIP-2 id of the chain; its RPC must serve it (checked at start). */
    network: string;
    rpcUrl: string;
    collection: `0x${string}`;
    identityRegistry: `0x${string}`;
  };
  rpcTimeoutMs: number;
  /** Most blocks asked for in one `eth_getLogs` call (RPC providers cap the range). */
  rpcMaxLogRange: number;
  /** Oldest the collection snapshot may be when a request reads it; a follower keeps it younger. */
  chainMaxStalenessMs: number;
  /**
   * Who verifies and settles payments: x402 facilitators over HTTP, the first that answers in turn, or the built-in
   * facilitator sending settlements on the payment chain from its own keys (used in turn), up to `batch.maxSize`
   * in one transaction through the Multicall3 contract at `batch.contract` (1: each alone), waiting at most
   * `receiptTimeoutMs` for each settlement's receipt.
   */
  facilitator:
    | { kind: "http"; endpoints: FacilitatorEndpoint[] }
    | {
        kind: "local";
        rpcUrl: string;
        privateKeys: `0x${string}`[];
        receiptTimeoutMs: number;
        batch: { maxSize: number; windowMs: number; contract?: `0x${string}` };
      };
  /** The payment and B20 chain (Base). */
  l2: { rpcUrl: string };
  /** The durable store: a Postgres server (`DATABASE_URL`), else PGlite in `DATA_DIR`. */
  store: { kind: "postgres"; url: string } | { kind: "pglite"; dataDir: string };
  /** Who may read the operator views (the ledger); the payment recipient unless set. */
  operatorAddress: string;
  /**
   * Limits on the paid routes, per client address and per payer (docs/decisions.md, "Limits"), and the settlements
   * of one payer that may fail in an hour before its payments are refused for the rest of it.
   */
  limits: { perIp: LimitSettings; perPayer: LimitSettings; failedSettlementsPerHour: number };
  /**
   * Express's `trust proxy`: which proxies' `X-Forwarded-For` names the client (`false`: the socket's peer is the
   * client). Per-address limits count that client.
   */
  trustProxy: boolean | number | string;
  /** Port of `GET /metrics` (Prometheus), on HOST; no metrics when unset. `0` picks a free port. */
  metricsPort?: number;
  /** The mission worker; `concurrency` 0 runs no missions in this instance. */
  dispatch: { pollMs: number; concurrency: number; maxAttempts: number; retryBaseMs: number; leaseMs: number };
  upstream: {
    marketplaceUrl: string;
    marketplaceApiKey: string;
    marketDataUrl: string;
    b20ChainId: string;
    altchainId: string;
    timeoutMs: number;
    /** Requests a minute the API keys' plans allow, counted for every instance (0: no budget). */
    marketplaceRequestsPerMinute: number;
    marketDataRequestsPerMinute: number;
    /**
     * A JSON file of wallet addresses to the marketplace OAuth tokens (`read:eligibility`) those wallets granted the
     * service: the marketplace answers a wallet's eligibility only with its token.
     */
    eligibilityTokensFile?: string;
  };
};

/** `TRUST_PROXY` as Express takes it: a boolean, a hop count, or names and addresses. */
function parseTrustProxy(value: string): boolean | number | string {
  if (value === "true") return true;
  if (value === "false") return false;
  if (/^\d{1,2}$/.test(value)) return Number(value);
  return value;
}

export interface LoadConfigOptions {
  /**
   * The embedded default (`pnpm start`): it runs its own local chains and sets the payment recipient and the
   * facilitator key itself, so neither has to be given.
   */
  embedded?: boolean;
}

/** The facilitators over HTTP the environment names, in order, with their credentials. */
function facilitatorEndpoints(e: Env): FacilitatorEndpoint[] {
  const urls = e.FACILITATOR_URLS ?? (e.FACILITATOR_URL ? [e.FACILITATOR_URL] : []);
  return urls.map((url, i): FacilitatorEndpoint => {
    if (url === "cdp") return { kind: "cdp", apiKeyId: e.CDP_API_KEY_ID!, apiKeySecret: e.CDP_API_KEY_SECRET! };
    const apiKey = e.FACILITATOR_API_KEYS?.[i];
    return { kind: "url", url, ...(apiKey ? { apiKey } : {}) };
  });
}

/**
 * Reads and validates the configuration from environment variables (empty values count as unset). Outside the
 * embedded default, `PAY_TO` and a facilitator must be given; on a real network every address and upstream is
 * given too, and accounts of the public test mnemonic are refused.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  options: LoadConfigOptions = {},
): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""));
  // A value still in angle brackets is the example configuration's placeholder (deploy/agent-tools.env.example).
  const placeholders = Object.entries(present)
    .filter(([variable, value]) => variable in envSchema.shape && /^<.*>$/s.test(value!.trim()))
    .map(([variable]) => ({ variable, message: "is still the example configuration's placeholder: fill it in" }));
  if (placeholders.length > 0) throw new ConfigError(placeholders);
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const variable = String(issue.path[0] ?? "environment");
        return { variable, message: `${issue.message}${valueAsTold(variable, present[variable])}` };
      }),
    );
  }
  const e = parsed.data;
  const problems = configProblems(e, options);
  if (problems.length > 0) throw new ConfigError(problems);
  // The embedded default replaces the recipient with its devnet operator; this only fills the type.
  const payTo = e.PAY_TO ?? (PUBLIC_TEST_ADDRESSES[0] as string);
  const l2RpcUrl = e.L2_RPC_URL ?? DEVNET.l2RpcUrl;
  const local = isLocalNetwork(e.PAYMENT_NETWORK);
  const endpoints = facilitatorEndpoints(e);
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl: e.PUBLIC_URL ?? `http://${e.HOST.includes(":") ? `[${e.HOST}]` : e.HOST}:${e.PORT}`,
    publicUrlIsListenerUrl: e.PUBLIC_URL === undefined,
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    connections: {
      headersTimeoutMs: e.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      perAddress: e.MAX_CONNECTIONS_PER_IP ?? (e.TRUST_PROXY === "false" ? DEFAULT_CONNECTION_LIMITS.perAddress : 0),
    },
    ...(e.METRICS_PORT !== undefined ? { metricsPort: e.METRICS_PORT } : {}),
    logLevel: e.LOG_LEVEL,
    anonymousAccess: e.ANONYMOUS_ACCESS,
    payment: {
      network: e.PAYMENT_NETWORK,
      asset: e.PAYMENT_ASSET ?? DEVNET.usdToken,
      assetName: e.PAYMENT_ASSET_NAME,
      assetVersion: e.PAYMENT_ASSET_VERSION,
      payTo,
      maxTimeoutSeconds: e.PAYMENT_TIMEOUT_SECONDS,
    },
    ...receiptSigner(e.RECEIPT_SIGNER_PRIVATE_KEY, local),
    ...channels(e, local),
    upto: e.UPTO === "on",
    l1: {
      network: e.COLLECTION_NETWORK,
      rpcUrl: e.L1_RPC_URL ?? DEVNET.l1RpcUrl,
      collection: (e.COLLECTION_ADDRESS ?? DEVNET.collection) as `0x${string}`,
      identityRegistry: (e.IDENTITY_REGISTRY_ADDRESS ?? DEVNET.identityRegistry) as `0x${string}`,
    },
    rpcTimeoutMs: e.RPC_TIMEOUT_MS,
    rpcMaxLogRange: e.RPC_MAX_LOG_RANGE,
    chainMaxStalenessMs: e.CHAIN_MAX_STALENESS_MS,
    l2: { rpcUrl: l2RpcUrl },
    store: e.DATABASE_URL ? { kind: "postgres", url: e.DATABASE_URL } : { kind: "pglite", dataDir: e.DATA_DIR },
    operatorAddress: e.OPERATOR_ADDRESS ?? payTo,
    limits: {
      perIp: { ratePerSecond: e.PAID_RATE_PER_IP, concurrency: e.PAID_CONCURRENCY_PER_IP },
      perPayer: { ratePerSecond: e.PAID_RATE_PER_PAYER, concurrency: e.PAID_CONCURRENCY_PER_PAYER },
      failedSettlementsPerHour: e.PAYER_FAILED_SETTLEMENTS_PER_HOUR,
    },
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    dispatch: {
      pollMs: e.DISPATCH_POLL_MS,
      concurrency: e.DISPATCH_CONCURRENCY,
      maxAttempts: e.DISPATCH_MAX_ATTEMPTS,
      retryBaseMs: e.DISPATCH_RETRY_BASE_MS,
      leaseMs: e.DISPATCH_LEASE_MS,
    },
    upstream: {
      marketplaceUrl: e.MARKETPLACE_URL ?? DEVNET.marketplaceUrl,
      marketplaceApiKey: e.MARKETPLACE_API_KEY ?? DEVNET.marketplaceApiKey,
      marketDataUrl: e.MARKET_DATA_URL ?? DEVNET.marketDataUrl,
      b20ChainId: e.B20_CHAIN_ID,
      altchainId: e.ALTCHAIN_ID,
      timeoutMs: e.UPSTREAM_TIMEOUT_MS,
      // The local simulators ask for no budget; a real key has its plan's.
      marketplaceRequestsPerMinute:
        e.MARKETPLACE_REQUESTS_PER_MINUTE ?? (local ? 0 : DEFAULT_UPSTREAM_BUDGETS.marketplace),
      marketDataRequestsPerMinute:
        e.MARKET_DATA_REQUESTS_PER_MINUTE ?? (local ? 0 : DEFAULT_UPSTREAM_BUDGETS.marketData),
      ...(e.ELIGIBILITY_TOKENS_FILE ? { eligibilityTokensFile: e.ELIGIBILITY_TOKENS_FILE } : {}),
    },
    facilitator:
      endpoints.length > 0
        ? { kind: "http", endpoints }
        : {
            kind: "local",
            rpcUrl: l2RpcUrl,
            privateKeys: [
              ...new Set([
                ...(e.FACILITATOR_PRIVATE_KEYS ?? []),
                ...(e.FACILITATOR_PRIVATE_KEY ? [e.FACILITATOR_PRIVATE_KEY] : []),
              ]),
            ] as `0x${string}`[],
            receiptTimeoutMs: e.SETTLEMENT_RECEIPT_TIMEOUT_MS,
            batch: {
              maxSize: e.SETTLEMENT_BATCH_SIZE,
              windowMs: e.SETTLEMENT_BATCH_WINDOW_MS,
              ...(e.MULTICALL3_ADDRESS ? { contract: e.MULTICALL3_ADDRESS as `0x${string}` } : {}),
            },
          },
  };
}

/**
 * The configuration once the server's socket is bound at `listenerUrl`: without `PUBLIC_URL`, the public origin
 * is that address, so `PORT=0` gives links and sign-in messages the port actually picked.
 */
export function withListenerUrl(config: Config, listenerUrl: string): Config {
  return config.publicUrlIsListenerUrl ? { ...config, publicUrl: listenerUrl } : config;
}

/** The receipt signer's key: the one given, or on local chains the devnet's public test key (docs/decisions.md). */
/** The channel settings: none when channels are off or no key is set off local chains. */
function channels(e: Env, local: boolean): Pick<Config, "channels"> {
  const key = e.CHANNEL_PRIVATE_KEY ?? (local ? DEVNET.channelKey : undefined);
  if (e.CHANNELS === "off" || !key) return {};
  return {
    channels: {
      key: key as `0x${string}`,
      withdrawDelaySeconds: e.CHANNEL_WITHDRAW_DELAY,
      claimIntervalMs: e.CHANNEL_CLAIM_INTERVAL_MS,
      claimBatchSize: e.CHANNEL_CLAIM_BATCH_SIZE,
      holdMs: CHANNEL_DEFAULTS.holdMs,
    },
  };
}

function receiptSigner(key: string | undefined, local: boolean): Pick<Config, "receiptSignerKey"> {
  const chosen = key ?? (local ? DEVNET.receiptSignerKey : undefined);
  return chosen ? { receiptSignerKey: chosen as `0x${string}` } : {};
}

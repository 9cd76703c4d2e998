import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod";
import type { LimitSettings } from "./limits/call-limiter.js";
import { isPublicTestAddress, LOCAL_CHAIN_IDS, PUBLIC_TEST_ADDRESSES } from "./public-test-accounts.js";
import { DEFAULT_CONNECTION_LIMITS } from "./server.js";

const booleanFlag = z
  .enum(["true", "false", "1", "0"], { error: "must be true or false" })
  .transform((value) => value === "true" || value === "1");

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

const origin = z
  .string()
  .refine(isHttpUrl, { error: "must be an absolute http(s) URL" })
  .transform((value) => value.replace(/\/+$/, ""));

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, { error: "must be a 20-byte hex address" });
const privateKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, { error: "must be a 32-byte hex private key" });

/**
 * Addresses of the embedded devnet's L1 contracts: deterministic (deployer account 0, fixed nonces); a test
 * checks them against packages/devnet's deployment.
 */
export const DEVNET_L1 = {
  collection: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  identityRegistry: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
} as const;

/** The limits on the paid routes when none are configured (the defaults of the PAID_* variables). */
export const DEFAULT_LIMITS: { perIp: LimitSettings; perPayer: LimitSettings } = {
  perIp: { ratePerSecond: 200, concurrency: 128 },
  perPayer: { ratePerSecond: 50, concurrency: 16 },
};

/**
 * Environment variables the server reads, with their defaults. The defaults describe the embedded default
 * (local chains on loopback); each is documented in README.md.
 */
const envSchema = z.object({
  PORT: z.coerce
    .number({ error: "must be a port number" })
    .int({ error: "must be a port number" })
    .min(0, { error: "must be between 0 and 65535" })
    .max(65535, { error: "must be between 0 and 65535" })
    .default(8402),
  HOST: z.string().min(1).default("127.0.0.1"),
  PUBLIC_URL: origin.optional(),
  KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(300_000).default(65_000),
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(DEFAULT_CONNECTION_LIMITS.headersTimeoutMs),
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_CONNECTION_LIMITS.requestTimeoutMs),
  MAX_CONNECTIONS_PER_IP: z.coerce.number().int().min(0).max(1_000_000).optional(),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ANONYMOUS_ACCESS: booleanFlag.default(true),
  PAYMENT_NETWORK: z
    .string()
    .regex(/^eip155:[0-9]+$/, { error: "must be a CAIP-2 EVM chain id such as eip155:8453" })
    .default("eip155:31338"),
  PAYMENT_ASSET: address.default("0x5FbDB2315678afecb367f032d93F642f64180aa3"),
  PAYMENT_ASSET_NAME: z.string().min(1).default("USD Coin"),
  PAYMENT_ASSET_VERSION: z.string().min(1).default("2"),
  PAY_TO: address.optional(),
  PAYMENT_TIMEOUT_SECONDS: z.coerce.number().int().min(10).max(3600).default(120),
  L1_RPC_URL: z
    .string()
    .refine(isHttpUrl, { error: "must be an http(s) JSON-RPC URL" })
    .default("http://127.0.0.1:8545"),
  COLLECTION_ADDRESS: address.default(DEVNET_L1.collection),
  IDENTITY_REGISTRY_ADDRESS: address.default(DEVNET_L1.identityRegistry),
  RPC_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  CHAIN_MAX_STALENESS_MS: z.coerce.number().int().min(0).max(600_000).default(2000),
  FACILITATOR_URL: z.string().refine(isHttpUrl, { error: "must be an http(s) URL of an x402 facilitator" }).optional(),
  L2_RPC_URL: z
    .string()
    .refine(isHttpUrl, { error: "must be an http(s) JSON-RPC URL" })
    .default("http://127.0.0.1:8546"),
  MARKETPLACE_URL: z.string().refine(isHttpUrl, { error: "must be an http(s) URL" }).default("http://127.0.0.1:8411"),
  MARKETPLACE_API_KEY: z.string().min(1).default("local-sim"),
  MARKET_DATA_URL: z.string().refine(isHttpUrl, { error: "must be an http(s) URL" }).default("http://127.0.0.1:8412"),
  B20_CHAIN_ID: z
    .string()
    .regex(/^[a-z0-9-]{1,40}$/, { error: "must be a DexScreener chain id such as base" })
    .default("base"),
  ALTCHAIN_ID: z
    .string()
    .regex(/^[a-z0-9-]{1,40}$/, { error: "must be a DexScreener chain id such as bsc" })
    .default("bsc"),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, { error: "must be a postgres:// or postgresql:// connection URL" })
    .optional(),
  DATA_DIR: z.string().min(1).default(".agent-tools/data"),
  OPERATOR_ADDRESS: address.optional(),
  DISPATCH_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  DISPATCH_CONCURRENCY: z.coerce.number().int().min(0).max(64).default(4),
  DISPATCH_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(4),
  DISPATCH_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
  DISPATCH_LEASE_MS: z.coerce.number().int().min(1000).max(3_600_000).default(300_000),
  FACILITATOR_PRIVATE_KEY: privateKey.optional(),
  FACILITATOR_PRIVATE_KEYS: z
    .string()
    .transform((value) => value.split(",").map((key) => key.trim()))
    .pipe(z.array(privateKey, { error: "must be comma-separated 32-byte hex private keys" }).min(1))
    .optional(),
  SETTLEMENT_RECEIPT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  PAID_RATE_PER_IP: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_LIMITS.perIp.ratePerSecond),
  PAID_CONCURRENCY_PER_IP: z.coerce.number().int().min(1).max(100_000).default(DEFAULT_LIMITS.perIp.concurrency),
  PAID_RATE_PER_PAYER: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_LIMITS.perPayer.ratePerSecond),
  PAID_CONCURRENCY_PER_PAYER: z.coerce.number().int().min(1).max(100_000).default(DEFAULT_LIMITS.perPayer.concurrency),
  PAYER_FAILED_SETTLEMENTS_PER_HOUR: z.coerce.number().int().min(1).max(10_000).default(3),
  TRUST_PROXY: z
    .string()
    .regex(/^(true|false|loopback|linklocal|uniquelocal|\d{1,2}|[0-9a-fA-F.:/, ]+)$/, {
      error: "must be false, true, a number of proxy hops, loopback, or a comma-separated list of addresses/CIDRs",
    })
    .default("false"),
});

/**
 * The variables whose values a refusal may print: numbers, flags, addresses, names. Every other one (private keys,
 * URLs of databases, RPC endpoints, facilitators and upstreams, API keys) may hold a secret.
 */
const SHOWN_VALUES = new Set([
  "PORT",
  "HOST",
  "PUBLIC_URL",
  "DATA_DIR",
  "KEEP_ALIVE_TIMEOUT_MS",
  "HEADERS_TIMEOUT_MS",
  "REQUEST_TIMEOUT_MS",
  "MAX_CONNECTIONS_PER_IP",
  "METRICS_PORT",
  "LOG_LEVEL",
  "ANONYMOUS_ACCESS",
  "PAYMENT_NETWORK",
  "PAYMENT_ASSET",
  "PAYMENT_ASSET_NAME",
  "PAYMENT_ASSET_VERSION",
  "PAY_TO",
  "PAYMENT_TIMEOUT_SECONDS",
  "COLLECTION_ADDRESS",
  "IDENTITY_REGISTRY_ADDRESS",
  "RPC_TIMEOUT_MS",
  "CHAIN_MAX_STALENESS_MS",
  "B20_CHAIN_ID",
  "ALTCHAIN_ID",
  "UPSTREAM_TIMEOUT_MS",
  "OPERATOR_ADDRESS",
  "DISPATCH_POLL_MS",
  "DISPATCH_CONCURRENCY",
  "DISPATCH_MAX_ATTEMPTS",
  "DISPATCH_RETRY_BASE_MS",
  "DISPATCH_LEASE_MS",
  "SETTLEMENT_RECEIPT_TIMEOUT_MS",
  "PAID_RATE_PER_IP",
  "PAID_CONCURRENCY_PER_IP",
  "PAID_RATE_PER_PAYER",
  "PAID_CONCURRENCY_PER_PAYER",
  "PAYER_FAILED_SETTLEMENTS_PER_HOUR",
  "TRUST_PROXY",
]);

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
  logLevel: z.infer<typeof envSchema>["LOG_LEVEL"];
  anonymousAccess: boolean;
  payment: {
    network: string;
    asset: string;
    assetName: string;
    assetVersion: string;
    payTo: string;
    maxTimeoutSeconds: number;
  };
  /** The collection chain: the collection (ERC-721 + ERC-7496) and the ERC-8004 Identity Registry. */
  l1: {
    rpcUrl: string;
    collection: `0x${string}`;
    identityRegistry: `0x${string}`;
  };
  rpcTimeoutMs: number;
  /** Oldest the collection snapshot may be when a request reads it; a follower keeps it younger. */
  chainMaxStalenessMs: number;
  /**
   * Who verifies and settles payments: an x402 facilitator over HTTP, or the built-in facilitator sending
   * settlements on the payment chain from its own keys (used in turn), waiting at most `receiptTimeoutMs` for each
   * settlement's receipt.
   */
  facilitator:
    | { kind: "http"; url: string }
    | { kind: "local"; rpcUrl: string; privateKeys: `0x${string}`[]; receiptTimeoutMs: number };
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
  };
};

/** `TRUST_PROXY` as Express takes it: a boolean, a hop count, or names and addresses. */
function parseTrustProxy(value: string): boolean | number | string {
  if (value === "true") return true;
  if (value === "false") return false;
  if (/^\d{1,2}$/.test(value)) return Number(value);
  return value;
}

/** Thrown when the environment does not describe a valid configuration; its message names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super(`Invalid configuration: ${problems.map((p) => `${p.variable} ${p.message}`).join("; ")}`);
    this.name = "ConfigError";
  }
}

export interface LoadConfigOptions {
  /**
   * The embedded default (`pnpm start`): it runs its own local chains and sets the payment recipient and the
   * facilitator key itself, so neither has to be given.
   */
  embedded?: boolean;
}

/**
 * What a server on a real network must not start with: no payment recipient or facilitator, or an account of the
 * public test mnemonic (whose keys everyone has) outside a local chain. See docs/decisions.md, "Safe production
 * defaults".
 */
function unsafeSettings(e: z.infer<typeof envSchema>, options: LoadConfigOptions): ConfigError["problems"] {
  const problems: ConfigError["problems"] = [];
  if (!options.embedded) {
    if (!e.PAY_TO) {
      problems.push({ variable: "PAY_TO", message: "must be set: the address that receives payments" });
    }
    if (!e.FACILITATOR_URL && !e.FACILITATOR_PRIVATE_KEY && !e.FACILITATOR_PRIVATE_KEYS) {
      problems.push({
        variable: "FACILITATOR_URL",
        message: "or FACILITATOR_PRIVATE_KEY (or FACILITATOR_PRIVATE_KEYS) must be set to verify and settle payments",
      });
    }
  }
  const chainId = Number(e.PAYMENT_NETWORK.split(":")[1]);
  if (LOCAL_CHAIN_IDS.includes(chainId)) return problems;
  const publicTest = `is an account of the public test mnemonic, whose keys everyone has; it is refused on ${e.PAYMENT_NETWORK} (only local chains ${LOCAL_CHAIN_IDS.join(", ")} take it)`;
  for (const variable of ["PAY_TO", "OPERATOR_ADDRESS"] as const) {
    const value = e[variable];
    if (value && isPublicTestAddress(value)) problems.push({ variable, message: `${value} ${publicTest}` });
  }
  const keys = [
    ...(e.FACILITATOR_PRIVATE_KEY ? [["FACILITATOR_PRIVATE_KEY", e.FACILITATOR_PRIVATE_KEY] as const] : []),
    ...(e.FACILITATOR_PRIVATE_KEYS ?? []).map((key) => ["FACILITATOR_PRIVATE_KEYS", key] as const),
  ];
  for (const [variable, key] of keys) {
    const { address } = privateKeyToAccount(key as `0x${string}`);
    if (isPublicTestAddress(address))
      problems.push({ variable, message: `holds the key of ${address}, which ${publicTest}` });
  }
  return problems;
}

/**
 * Reads and validates the configuration from environment variables (empty values count as unset). Outside the
 * embedded default, `PAY_TO` and a facilitator must be given, and accounts of the public test mnemonic are
 * refused unless the payment chain is local.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  options: LoadConfigOptions = {},
): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const variable = String(issue.path[0] ?? "environment");
        // A value is shown only where it can hold no secret: keys, database and RPC URLs (which may carry an
        // API key or a password) are named, never printed.
        const value = present[variable];
        const shown = SHOWN_VALUES.has(variable)
          ? ` (got ${JSON.stringify(value ?? null)})`
          : value !== undefined && value !== value.trim()
            ? " (the value has spaces around it; its value is not shown)"
            : "";
        return { variable, message: `${issue.message}${shown}` };
      }),
    );
  }
  const e = parsed.data;
  const unsafe = unsafeSettings(e, options);
  if (unsafe.length > 0) throw new ConfigError(unsafe);
  // The embedded default replaces the recipient with its devnet operator; this only fills the type.
  const payTo = e.PAY_TO ?? (PUBLIC_TEST_ADDRESSES[0] as string);
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
      asset: e.PAYMENT_ASSET,
      assetName: e.PAYMENT_ASSET_NAME,
      assetVersion: e.PAYMENT_ASSET_VERSION,
      payTo,
      maxTimeoutSeconds: e.PAYMENT_TIMEOUT_SECONDS,
    },
    l1: {
      rpcUrl: e.L1_RPC_URL,
      collection: e.COLLECTION_ADDRESS as `0x${string}`,
      identityRegistry: e.IDENTITY_REGISTRY_ADDRESS as `0x${string}`,
    },
    rpcTimeoutMs: e.RPC_TIMEOUT_MS,
    chainMaxStalenessMs: e.CHAIN_MAX_STALENESS_MS,
    l2: { rpcUrl: e.L2_RPC_URL },
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
      marketplaceUrl: e.MARKETPLACE_URL,
      marketplaceApiKey: e.MARKETPLACE_API_KEY,
      marketDataUrl: e.MARKET_DATA_URL,
      b20ChainId: e.B20_CHAIN_ID,
      altchainId: e.ALTCHAIN_ID,
      timeoutMs: e.UPSTREAM_TIMEOUT_MS,
    },
    facilitator: e.FACILITATOR_URL
      ? { kind: "http", url: e.FACILITATOR_URL }
      : {
          kind: "local",
          rpcUrl: e.L2_RPC_URL,
          privateKeys: [
            ...new Set([
              ...(e.FACILITATOR_PRIVATE_KEYS ?? []),
              ...(e.FACILITATOR_PRIVATE_KEY ? [e.FACILITATOR_PRIVATE_KEY] : []),
            ]),
          ] as `0x${string}`[],
          receiptTimeoutMs: e.SETTLEMENT_RECEIPT_TIMEOUT_MS,
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

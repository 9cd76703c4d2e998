/**
 * The environment variables the server reads, as a Zod schema: each variable's form and its default where one is
 * safe everywhere. The devnet's addresses, RPC ports and simulators are not defaults here: config-rules.ts fills
 * them in on local chains only, and requires the variables elsewhere. Each is documented in docs/configuration.md.
 */
import { z } from "zod";
import type { LimitSettings } from "../limits/call-limiter.js";

const booleanFlag = z
  .enum(["true", "false", "1", "0"], { error: "must be true or false" })
  .transform((value) => value === "true" || value === "1");

/**
 * How long a client may take to send a request's headers, and its whole request (headers and a body of at most
 * 32 KiB), by default: far more than any client on any network needs, far less than a socket held open by a client
 * that trickles bytes to tie the server up (docs/threat-model.md, "Connections").
 */
export const DEFAULT_CONNECTION_LIMITS = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, perAddress: 256 };

/** Whether `value` is an absolute http(s) URL. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/**
 * The ports fetch refuses to connect to, whatever answers there: the "bad ports" of the Fetch standard
 * (https://fetch.spec.whatwg.org/#port-blocking). Node's fetch (undici) blocks the same list but does not export it,
 * so it is written out here; apps/server/test/config.test.ts checks that Node's fetch refuses each of them.
 */
export const FETCH_BAD_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** The port of an http(s) URL that fetch refuses (a bad port of the Fetch standard); undefined for any other. */
export function fetchBlockedPort(value: string): number | undefined {
  try {
    const url = new URL(value);
    const port = Number(url.port);
    return (url.protocol === "http:" || url.protocol === "https:") && FETCH_BAD_PORTS.has(port) ? port : undefined;
  } catch {
    return undefined;
  }
}

/** What a refusal says of a URL on a port fetch refuses: the port, why, and what to do. */
const blockedPortMessage = (value: unknown) =>
  `is on port ${fetchBlockedPort(String(value))}, which fetch refuses to connect to (a bad port of the Fetch ` +
  "standard): every request to it would fail; use another port";

/** A URL the service or its callers fetch: not on a port fetch refuses. */
const notOnBlockedPort = <T extends z.ZodType<string>>(schema: T) =>
  schema.refine((value) => fetchBlockedPort(value) === undefined, {
    error: (issue) => blockedPortMessage(issue.input),
  });

const origin = notOnBlockedPort(z.string().refine(isHttpUrl, { error: "must be an absolute http(s) URL" })).transform(
  (value) => value.replace(/\/+$/, ""),
);
const httpUrl = (what: string) =>
  notOnBlockedPort(z.string().refine(isHttpUrl, { error: `must be an http(s) URL of ${what}` }));
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, { error: "must be a 20-byte hex address" });
const privateKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, { error: "must be a 32-byte hex private key" });
const network = (example: string) =>
  z.string().regex(/^eip155:[0-9]+$/, { error: `must be a CAIP-2 EVM chain id such as ${example}` });
const commaList = (each: z.ZodString | z.ZodType<string, string>, says: string) =>
  z
    .string()
    .transform((value) => value.split(",").map((item) => item.trim()))
    .pipe(z.array(each, { error: says }).min(1));
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** The limits on the paid routes when none are configured (the defaults of the PAID_* variables). */
export const DEFAULT_LIMITS: { perIp: LimitSettings; perPayer: LimitSettings } = {
  perIp: { ratePerSecond: 200, concurrency: 128 },
  perPayer: { ratePerSecond: 50, concurrency: 16 },
};

/** The built-in facilitator's settlement settings when no variable sets them (the embedded default uses them too). */
export const SETTLEMENT_DEFAULTS = { receiptTimeoutMs: 30_000, batch: { maxSize: 50, windowMs: 100 } };

/**
 * Payment channels' defaults (docs/channels.md): a payer's timed withdrawal takes a day; the service claims every
 * minute, in batches of up to 50 channels; a call holds its channel at most two minutes.
 */
export const CHANNEL_DEFAULTS = {
  withdrawDelaySeconds: 86_400,
  claimIntervalMs: 60_000,
  claimBatchSize: 50,
  holdMs: 120_000,
};

/** The shortest time a price gives a payment to be settled in (`PAYMENT_TIMEOUT_SECONDS`). */
export const MIN_PAYMENT_TIMEOUT_SECONDS = 10;

export const envSchema = z.object({
  PORT: z.coerce
    .number({ error: "must be a port number" })
    .int({ error: "must be a port number" })
    .min(0, { error: "must be between 0 and 65535" })
    .max(65535, { error: "must be between 0 and 65535" })
    .default(8402),
  HOST: z.string().min(1).default("127.0.0.1"),
  PUBLIC_URL: origin.optional(),
  KEEP_ALIVE_TIMEOUT_MS: int(1000, 300_000).default(65_000),
  HEADERS_TIMEOUT_MS: int(100, 300_000).default(DEFAULT_CONNECTION_LIMITS.headersTimeoutMs),
  REQUEST_TIMEOUT_MS: int(100, 600_000).default(DEFAULT_CONNECTION_LIMITS.requestTimeoutMs),
  MAX_CONNECTIONS_PER_IP: int(0, 1_000_000).optional(),
  METRICS_PORT: int(0, 65535).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ANONYMOUS_ACCESS: booleanFlag.default(true),
  // The payment chain (Base) and what is paid there.
  PAYMENT_NETWORK: network("eip155:8453").default("eip155:31338"),
  PAYMENT_ASSET: address.optional(),
  PAYMENT_ASSET_NAME: z.string().min(1).default("USD Coin"),
  PAYMENT_ASSET_VERSION: z.string().min(1).default("2"),
  PAY_TO: address.optional(),
  PAYMENT_TIMEOUT_SECONDS: int(MIN_PAYMENT_TIMEOUT_SECONDS, 3600).default(120),
  L2_RPC_URL: httpUrl("a JSON-RPC endpoint").optional(),
  // The collection chain (Ethereum).
  COLLECTION_NETWORK: network("eip155:1").default("eip155:31337"),
  L1_RPC_URL: httpUrl("a JSON-RPC endpoint").optional(),
  COLLECTION_ADDRESS: address.optional(),
  IDENTITY_REGISTRY_ADDRESS: address.optional(),
  RPC_TIMEOUT_MS: int(100, 120_000).default(10_000),
  RPC_MAX_LOG_RANGE: int(10, 1_000_000).default(10_000),
  CHAIN_MAX_STALENESS_MS: int(0, 600_000).default(2000),
  // Who verifies and settles: facilitators over HTTP, in order, or the built-in one with keys of its own.
  FACILITATOR_URL: httpUrl("an x402 facilitator").optional(),
  FACILITATOR_URLS: commaList(
    notOnBlockedPort(
      z.string().refine((entry) => entry === "cdp" || isHttpUrl(entry), {
        error: "must be comma-separated http(s) URLs of x402 facilitators, or cdp for Coinbase's",
      }),
    ),
    "must be comma-separated http(s) URLs of x402 facilitators, or cdp for Coinbase's",
  ).optional(),
  FACILITATOR_API_KEYS: z
    .string()
    .transform((value) => value.split(",").map((item) => item.trim()))
    .optional(),
  CDP_API_KEY_ID: z.string().min(1).optional(),
  CDP_API_KEY_SECRET: z.string().min(1).optional(),
  FACILITATOR_PRIVATE_KEY: privateKey.optional(),
  FACILITATOR_PRIVATE_KEYS: commaList(privateKey, "must be comma-separated 32-byte hex private keys").optional(),
  SETTLEMENT_RECEIPT_TIMEOUT_MS: int(100, 600_000).default(SETTLEMENT_DEFAULTS.receiptTimeoutMs),
  SETTLEMENT_BATCH_SIZE: int(1, 200).default(SETTLEMENT_DEFAULTS.batch.maxSize),
  SETTLEMENT_BATCH_WINDOW_MS: int(0, 10_000).default(SETTLEMENT_DEFAULTS.batch.windowMs),
  MULTICALL3_ADDRESS: address.optional(),
  RECEIPT_SIGNER_PRIVATE_KEY: privateKey.optional(),
  // Payment channels (x402's batch-settlement): the key that authorizes the channels' claims and refunds (and, with
  // the built-in facilitator, sends their transactions); its bounds.
  CHANNEL_PRIVATE_KEY: privateKey.optional(),
  CHANNELS: z.enum(["on", "off"], { error: "must be on or off" }).default("on"),
  CHANNEL_WITHDRAW_DELAY: int(900, 2_592_000).default(CHANNEL_DEFAULTS.withdrawDelaySeconds),
  CHANNEL_CLAIM_INTERVAL_MS: int(1000, 3_600_000).default(CHANNEL_DEFAULTS.claimIntervalMs),
  CHANNEL_CLAIM_BATCH_SIZE: int(1, 200).default(CHANNEL_DEFAULTS.claimBatchSize),
  // x402's upto scheme (a Permit2 authorization of up to the price, settled for the work done).
  UPTO: z.enum(["on", "off"], { error: "must be on or off" }).default("on"),
  // The upstreams.
  MARKETPLACE_URL: httpUrl("the marketplace's API").optional(),
  MARKETPLACE_API_KEY: z.string().min(1).optional(),
  MARKETPLACE_REQUESTS_PER_MINUTE: int(0, 1_000_000).optional(),
  ELIGIBILITY_TOKENS_FILE: z.string().min(1).optional(),
  MARKET_DATA_URL: httpUrl("the market-data API").optional(),
  MARKET_DATA_REQUESTS_PER_MINUTE: int(0, 1_000_000).optional(),
  B20_CHAIN_ID: z
    .string()
    .regex(/^[a-z0-9-]{1,40}$/, { error: "must be a DexScreener chain id such as base" })
    .default("base"),
  ALTCHAIN_ID: z
    .string()
    .regex(/^[a-z0-9-]{1,40}$/, { error: "must be a DexScreener chain id such as bsc" })
    .default("bsc"),
  UPSTREAM_TIMEOUT_MS: int(100, 60_000).default(5000),
  // The store.
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, { error: "must be a postgres:// or postgresql:// connection URL" })
    .optional(),
  DATA_DIR: z.string().min(1).default(".agent-tools/data"),
  EMBEDDED_STORE: booleanFlag.default(false),
  OPERATOR_ADDRESS: address.optional(),
  // Missions.
  DISPATCH_POLL_MS: int(10, 60_000).default(1000),
  DISPATCH_CONCURRENCY: int(0, 64).default(4),
  DISPATCH_MAX_ATTEMPTS: int(1, 10).default(4),
  DISPATCH_RETRY_BASE_MS: int(10, 3_600_000).default(30_000),
  DISPATCH_LEASE_MS: int(1000, 3_600_000).default(300_000),
  // Limits.
  PAID_RATE_PER_IP: int(1, 1_000_000).default(DEFAULT_LIMITS.perIp.ratePerSecond),
  PAID_CONCURRENCY_PER_IP: int(1, 100_000).default(DEFAULT_LIMITS.perIp.concurrency),
  PAID_RATE_PER_PAYER: int(1, 1_000_000).default(DEFAULT_LIMITS.perPayer.ratePerSecond),
  PAID_CONCURRENCY_PER_PAYER: int(1, 100_000).default(DEFAULT_LIMITS.perPayer.concurrency),
  PAYER_FAILED_SETTLEMENTS_PER_HOUR: int(1, 10_000).default(3),
  TRUST_PROXY: z
    .string()
    .regex(/^(true|false|loopback|linklocal|uniquelocal|\d{1,2}|[0-9a-fA-F.:/, ]+)$/, {
      error: "must be false, true, a number of proxy hops, loopback, or a comma-separated list of addresses/CIDRs",
    })
    .default("false"),
});

/** The environment as the schema reads it. */
export type Env = z.infer<typeof envSchema>;

/**
 * How a configuration that cannot be used is refused: one problem per variable, naming it and the rule it breaks,
 * and its value only where the value can hold no secret (docs/threat-model.md, "Secrets").
 */

/** Thrown when the environment does not describe a valid configuration; its message names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super(`Invalid configuration: ${problems.map((p) => `${p.variable} ${p.message}`).join("; ")}`);
    this.name = "ConfigError";
  }
}

/**
 * The variables whose values a refusal may print: numbers, flags, addresses, names. Every other one (private keys,
 * URLs of databases, RPC endpoints, facilitators and upstreams, API keys) may hold a secret.
 */
const SHOWN_VALUES = new Set([
  "PORT",
  "HOST",
  "PUBLIC_URL",
  "DATA_DIR",
  "EMBEDDED_STORE",
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
  "SETTLEMENT_BATCH_SIZE",
  "SETTLEMENT_BATCH_WINDOW_MS",
  "MULTICALL3_ADDRESS",
  "PAID_RATE_PER_IP",
  "PAID_CONCURRENCY_PER_IP",
  "PAID_RATE_PER_PAYER",
  "PAID_CONCURRENCY_PER_PAYER",
  "PAYER_FAILED_SETTLEMENTS_PER_HOUR",
  "TRUST_PROXY",
  "COLLECTION_NETWORK",
  "RPC_MAX_LOG_RANGE",
  "MARKETPLACE_REQUESTS_PER_MINUTE",
  "MARKET_DATA_REQUESTS_PER_MINUTE",
  "ELIGIBILITY_TOKENS_FILE",
  "CHANNELS",
  "CHANNEL_WITHDRAW_DELAY",
  "CHANNEL_CLAIM_INTERVAL_MS",
  "CHANNEL_CLAIM_BATCH_SIZE",
  "UPTO",
]);

/** What a refusal says of a variable's value: the value itself where it holds no secret, else at most a hint. */
export function valueAsTold(variable: string, value: string | undefined): string {
  if (SHOWN_VALUES.has(variable)) return ` (got ${JSON.stringify(value ?? null)})`;
  if (value !== undefined && value !== value.trim()) return " (the value has spaces around it; its value is not shown)";
  return "";
}

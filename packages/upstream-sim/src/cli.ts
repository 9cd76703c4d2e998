#!/usr/bin/env node
/**
 * agent-tools-upstream-sim: serves the marketplace (OpenSea API v2) and market-data (DexScreener) simulators on
 * loopback until SIGINT/SIGTERM, and prints their base URLs.
 *
 *   agent-tools-upstream-sim [--marketplace-port 8411] [--market-data-port 8412] [--latency-ms 0] [--host 127.0.0.1]
 *
 * Environment: MARKETPLACE_SIM_PORT, MARKET_DATA_SIM_PORT, UPSTREAM_SIM_LATENCY_MS, UPSTREAM_SIM_HOST (flags win).
 */
import { parseArgs } from "node:util";
import { MARKET_DATA_FACTS, MARKETPLACE_FACTS } from "./facts.js";
import {
  DEFAULT_MARKET_DATA_PORT,
  DEFAULT_MARKETPLACE_PORT,
  DEFAULT_SIM_HOST,
  startUpstreamSims,
  type UpstreamSims,
} from "./start.js";

const USAGE = `Usage: agent-tools-upstream-sim [options]

Serves local simulators of the marketplace (OpenSea API v2, needs any x-api-key) and of the market-data
aggregator (DexScreener) from deterministic fixtures, on loopback.

Options:
  --marketplace-port <port>   marketplace port (env MARKETPLACE_SIM_PORT, default ${DEFAULT_MARKETPLACE_PORT}; 0 = free)
  --market-data-port <port>   market-data port (env MARKET_DATA_SIM_PORT, default ${DEFAULT_MARKET_DATA_PORT}; 0 = free)
  --latency-ms <ms>           delay added to every answer (env UPSTREAM_SIM_LATENCY_MS, default 0)
  --api-key <key>             accept only this marketplace API key (default: any non-empty key)
  --host <address>            interface to listen on (env UPSTREAM_SIM_HOST, default ${DEFAULT_SIM_HOST})
  -h, --help                  show this help`;

class UsageError extends Error {}

function parseNumber(value: string, name: string, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) > max) throw new UsageError(`${name} must be an integer from 0 to ${max}`);
  return Number(value);
}

function summary(sims: UpstreamSims): string {
  const d = MARKETPLACE_FACTS.drops;
  return [
    "",
    "Agent Tools upstream simulators are running.",
    "",
    `  marketplace (OpenSea API v2)  ${sims.urls.marketplace}   send any x-api-key header`,
    `  market data (DexScreener)     ${sims.urls.marketData}`,
    "",
    `  drops: ${d.live.length} live, ${d.upcoming.length} upcoming, ${d.ended.length} ended, ${d.undated.length} undated, ${d.stale.length} stale on ${MARKETPLACE_FACTS.dropChains.length} chains`,
    `  market data: ${MARKET_DATA_FACTS.b20.withMarket.length} B20 tokens on "${MARKET_DATA_FACTS.b20ChainId}", second chain "${MARKET_DATA_FACTS.altChainId}"`,
    "",
    "Press Ctrl+C to stop.",
  ].join("\n");
}

async function main(): Promise<number> {
  let values: ReturnType<typeof parse>;
  const parse = () =>
    parseArgs({
      options: {
        "marketplace-port": { type: "string" },
        "market-data-port": { type: "string" },
        "latency-ms": { type: "string" },
        "api-key": { type: "string" },
        host: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  let options: Parameters<typeof startUpstreamSims>[0];
  try {
    values = parse();
    if (values.help) {
      console.log(USAGE);
      return 0;
    }
    const env = (name: string) => (process.env[name] ? process.env[name] : undefined);
    const marketplacePort = values["marketplace-port"] ?? env("MARKETPLACE_SIM_PORT");
    const marketDataPort = values["market-data-port"] ?? env("MARKET_DATA_SIM_PORT");
    const latency = values["latency-ms"] ?? env("UPSTREAM_SIM_LATENCY_MS");
    options = {
      host: values.host ?? env("UPSTREAM_SIM_HOST") ?? DEFAULT_SIM_HOST,
      marketplacePort:
        marketplacePort === undefined
          ? DEFAULT_MARKETPLACE_PORT
          : parseNumber(marketplacePort, "--marketplace-port", 65535),
      marketDataPort:
        marketDataPort === undefined
          ? DEFAULT_MARKET_DATA_PORT
          : parseNumber(marketDataPort, "--market-data-port", 65535),
      latencyMs: latency === undefined ? 0 : parseNumber(latency, "--latency-ms", 600_000),
      ...(values["api-key"] ? { apiKey: values["api-key"] } : {}),
    };
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }

  let sims: UpstreamSims;
  try {
    sims = await startUpstreamSims(options);
  } catch (error) {
    console.error(`agent-tools-upstream-sim: could not start: ${(error as Error).message}`);
    return 1;
  }
  console.log(summary(sims));
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await sims.close();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

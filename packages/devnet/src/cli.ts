#!/usr/bin/env node
/**
 * agent-tools-devnet: serves the two seeded devnet chains on loopback until SIGINT/SIGTERM.
 *
 *   agent-tools-devnet [--l1-port 8545] [--l2-port 8546] [--public-url http://127.0.0.1:8402] [--host 127.0.0.1]
 *
 * Environment: L1_PORT, L2_PORT, PUBLIC_URL, DEVNET_HOST (flags win).
 */
import { parseArgs } from "node:util";
import { B20_SCHEDULE_TIP } from "./b20-schedule.js";
import {
  DEFAULT_HOST,
  DEFAULT_L1_PORT,
  DEFAULT_L2_PORT,
  DEFAULT_PUBLIC_URL,
  DEVNET_LAST_REVEALED,
  DEVNET_TOKEN_COUNT,
  DEVNET_USD_PER_ACCOUNT,
} from "./constants.js";
import { type RunningDevnet, startDevnet } from "./devnet.js";

const USAGE = `Usage: agent-tools-devnet [options]

Starts the Agent Tools devnet: L1 (chain 31337: collection, ERC-8004 registry, ERC-8217 bindings) and
L2 (chain 31338: USD payment token, x402 channels and upto, B20 factory and tokens), seeded, with JSON-RPC on loopback.

Options:
  --l1-port <port>      L1 JSON-RPC port (env L1_PORT, default ${DEFAULT_L1_PORT}; 0 picks a free port)
  --l2-port <port>      L2 JSON-RPC port (env L2_PORT, default ${DEFAULT_L2_PORT}; 0 picks a free port)
  --public-url <url>    the API server's public origin the token and agent URIs point to
                        (env PUBLIC_URL, default ${DEFAULT_PUBLIC_URL})
  --host <address>      interface to listen on (env DEVNET_HOST, default ${DEFAULT_HOST})
  -q, --quiet           print only the summary, not the seeding steps
  -h, --help            show this help`;

class UsageError extends Error {}

function parsePort(value: string, name: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new UsageError(`${name} must be a port number (0-65535)`);
  return Number(value);
}

function parsePublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--public-url must be an absolute http(s) URL (got ${JSON.stringify(value)})`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--public-url must be an http(s) URL (got ${JSON.stringify(value)})`);
  }
  return value.replace(/\/+$/, "");
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function summary(devnet: RunningDevnet): string {
  const d = devnet.deployment;
  const pad = (s: string, n: number) => s.padEnd(n);
  const lines = [
    "",
    "Agent Tools devnet is running.",
    "",
    "Chains (JSON-RPC)",
    `  L1  chain ${d.l1.chainId}  ${d.l1.rpcUrl}   collection, ERC-8004 registry, ERC-8217 bindings`,
    `  L2  chain ${d.l2.chainId}  ${d.l2.rpcUrl}   USD payment token, x402 channels and upto, B20 factory and ${d.b20Tokens.length} tokens`,
    "",
    "Contracts",
    `  ${pad("L1 collection", 22)}${d.addresses.collection}  (${DEVNET_TOKEN_COUNT} tokens, 1-${DEVNET_LAST_REVEALED} revealed)`,
    `  ${pad("L1 identity registry", 22)}${d.addresses.identityRegistry}  (ERC-8004, agent t = token t)`,
    `  ${pad("L1 agent bindings", 22)}${d.addresses.agentBindings}  (ERC-8217)`,
    `  ${pad("L2 USD token", 22)}${d.addresses.usdToken}  (PAYMENT_ASSET, "USD Coin" v2, 6 decimals)`,
    `  ${pad("L2 B20 factory", 22)}${d.addresses.b20Factory}  (tip at block ${B20_SCHEDULE_TIP})`,
    `  ${pad("L2 batch settlement", 22)}${d.addresses.batchSettlement}  (x402 batch-settlement channels)`,
    `  ${pad("L2 EIP-3009 collector", 22)}${d.addresses.erc3009DepositCollector}  (its deposit collector)`,
    `  ${pad("L2 Permit2", 22)}${d.addresses.permit2}  (accounts 1-9 approved it for the USD token)`,
    `  ${pad("L2 upto proxy", 22)}${d.addresses.uptoPermit2Proxy}  (x402 upto payments through Permit2)`,
    `  ${pad("Multicall3 (both)", 22)}${d.addresses.multicall3}`,
    `  token URIs ${d.collectionBaseUri}<id>, agent URIs ${d.agentUriBase}<id>${d.agentUriSuffix}`,
    "",
    "Demo accounts — DEVNET ONLY: these are the publicly known test keys of the mnemonic",
    '"test test test test test test test test test test test junk". Never use them on a real network',
    "and never send real funds to them.",
  ];
  for (const account of d.accounts) {
    const role =
      account.index === 0
        ? "operator (deploys, owns the contracts; default PAY_TO)"
        : `tokens ${account.index}, ${account.index + 9}, ${account.index + 18}, ...; ${DEVNET_USD_PER_ACCOUNT.toLocaleString("en-US")} USD`;
    lines.push(`  #${account.index}  ${account.address}  ${account.privateKey}`);
    lines.push(`      ${role}`);
  }
  lines.push("", "Press Ctrl+C to stop.");
  return lines.join("\n");
}

function parseFlags() {
  return parseArgs({
    options: {
      "l1-port": { type: "string" },
      "l2-port": { type: "string" },
      "public-url": { type: "string" },
      host: { type: "string" },
      quiet: { type: "boolean", short: "q" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  }).values;
}
type ParsedFlags = ReturnType<typeof parseFlags>;

async function main(): Promise<number> {
  let values: ParsedFlags;
  try {
    values = parseFlags();
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const env = (name: string) => (process.env[name] === "" ? undefined : process.env[name]);
  let options: { host: string; l1Port: number; l2Port: number; publicUrl: string };
  try {
    const l1 = values["l1-port"] ?? env("L1_PORT");
    const l2 = values["l2-port"] ?? env("L2_PORT");
    const publicUrl = values["public-url"] ?? env("PUBLIC_URL");
    options = {
      host: values.host ?? env("DEVNET_HOST") ?? DEFAULT_HOST,
      l1Port: l1 === undefined ? DEFAULT_L1_PORT : parsePort(l1, values["l1-port"] ? "--l1-port" : "L1_PORT"),
      l2Port: l2 === undefined ? DEFAULT_L2_PORT : parsePort(l2, values["l2-port"] ? "--l2-port" : "L2_PORT"),
      publicUrl: publicUrl === undefined ? DEFAULT_PUBLIC_URL : parsePublicUrl(publicUrl),
    };
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    throw error;
  }
  if (!isLoopback(options.host)) {
    console.warn(
      `warning: listening on ${options.host}, not loopback: anyone who reaches it can send transactions from the unlocked test accounts`,
    );
  }

  let devnet: RunningDevnet | undefined;
  let stopping = false;
  const stopped = new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      if (devnet === undefined || stopping) {
        // Still starting (nothing to hand back but the process), or a second signal: leave now.
        console.error(`${signal}: exiting`);
        process.exit(130);
      }
      stopping = true;
      console.log(`\n${signal}: stopping the devnet...`);
      devnet.close().then(
        () => {
          console.log("devnet stopped");
          resolve(0);
        },
        (error: unknown) => {
          console.error(`error while stopping: ${(error as Error).message}`);
          resolve(1);
        },
      );
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });

  const started = performance.now();
  try {
    devnet = await startDevnet({
      ...options,
      ...(values.quiet ? {} : { log: (line: string) => console.log(line) }),
    });
  } catch (error) {
    console.error(`agent-tools-devnet: ${(error as Error).message}`);
    return 1;
  }
  console.log(`seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  console.log(summary(devnet));
  return await stopped;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

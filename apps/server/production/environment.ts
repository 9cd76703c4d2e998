/**
 * The production rehearsal's world (`pnpm test:production`): what a real deployment meets, on this machine.
 *
 * - Two chains that say they are Ethereum (1) and Base (8453) and mine on an interval (every 3 s and every 0.5 s,
 *   a quarter of the real 12 s and 2 s), each behind a JSON-RPC proxy that adds latency, throttles in bursts and caps
 *   `eth_getLogs` ranges, as hosted providers do.
 * - x402's reference facilitator over HTTP in a process of its own, behind a bearer key, listed second after a
 *   facilitator that cannot be reached. It carries `exact` payments and `batch-settlement` channels, so the server
 *   offers channels through it, with a channel key of the rehearsal's own.
 * - The upstream simulators, the marketplace enforcing its API key's budget per minute.
 * - Postgres, and accounts of the rehearsal's own (the public test accounts are refused on these chain ids).
 * - The server built (`dist/main.js`), configured from `deploy/agent-tools.env.example` with only the rehearsal's
 *   URLs, addresses and keys filled in, and started with the systemd unit's own command (`deploy/agent-tools.service`).
 *   One setting is given outside that file, in the process's environment (as a systemd drop-in would):
 *   {@link REHEARSAL_OVERRIDES}, the channel claim pass every 2 s instead of every minute, so that the rehearsal sees
 *   the service claim its channel's calls within seconds.
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { usdTokenAbi } from "@agent-tools/contracts";
import { type DevnetProcess, spawnDevnetProcess } from "@agent-tools/devnet";
import {
  type RpcProxy,
  simWalletAccessToken,
  startRpcProxy,
  startUpstreamSims,
  type UpstreamSims,
} from "@agent-tools/upstream-sim";
import { type Address, createPublicClient, createWalletClient, http, type PublicClient, parseEther } from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { freePort, type ScriptProcess, spawnCollected, waitForOutput } from "../src/startup/embedded-process.js";
import { startTestPostgres, type TestPostgres } from "../test/helpers/test-postgres.js";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
export const EXAMPLE_CONFIG = join(repo, "deploy/agent-tools.env.example");
export const SYSTEMD_UNIT = join(repo, "deploy/agent-tools.service");

/** The chains' block times: a quarter of Ethereum's 12 s and Base's 2 s. */
export const BLOCK_MS = { l1: 3000, l2: 500 };
/** The marketplace key's requests a minute, as the simulator enforces them and the server is told. */
export const MARKETPLACE_BUDGET = 240;
/** Most blocks one eth_getLogs may span at the rehearsal's "provider" (and RPC_MAX_LOG_RANGE says so). */
export const RPC_LOG_RANGE = 2000;
/**
 * The server's settings that differ from the example configuration's, given in its process's environment: only the
 * claim pass's interval (the example keeps the default, a minute; the rehearsal would otherwise wait for it).
 */
export const REHEARSAL_OVERRIDES: Readonly<Record<string, string>> = { CHANNEL_CLAIM_INTERVAL_MS: "2000" };

/** A participant of the session: its key (for the command line's key file) and its account. */
export interface Wallet {
  key: `0x${string}`;
  account: PrivateKeyAccount;
}

const walletOf = (key: `0x${string}`): Wallet => ({ key, account: privateKeyToAccount(key) });

export interface Production {
  /** The service's origin (PUBLIC_URL). */
  url: string;
  metricsUrl: string;
  server: ScriptProcess;
  devnet: DevnetProcess;
  sims: UpstreamSims;
  rpc: { l1: RpcProxy; l2: RpcProxy };
  /** The chains as the rehearsal reads them (directly, not through the proxies). */
  l1: PublicClient;
  l2: PublicClient;
  asset: Address;
  payTo: Address;
  /** The address of RECEIPT_SIGNER_PRIVATE_KEY: offers and receipts are signed by it. */
  receiptSigner: Address;
  /** The address of CHANNEL_PRIVATE_KEY: the channels' receiver authorizer, published in every 402. */
  channelAuthorizer: Address;
  /** The reference facilitator's account: it sends the settlements and the channels' transactions. */
  facilitator: Address;
  /** Reads the ledger. */
  operator: Wallet;
  /** Devnet account `index`: accounts 1-9 hold the tokens (account i holds token i) and USD. */
  holder(index: number): Wallet;
  /** Payers of the rehearsal's own, funded with USD. */
  payers: Wallet[];
  /** A payer of the rehearsal's own, funded with USD, that pays over a payment channel only. */
  channelPayer: Wallet;
  /** The configuration file the server runs with, and the example's variables it changed. */
  configFile: string;
  filledIn: string[];
  /** Starts the server again with the unit's command, after `stop()`. */
  start(): Promise<void>;
  /** The unit's stop: SIGTERM, and waits for the exit. */
  stop(): Promise<void>;
  /** Resident memory of the server process, in bytes (from /proc). */
  rss(): number;
  close(): Promise<void>;
}

/** JSON-RPC through `fetch`: the devnet's own methods (mining mode, impersonation) are not in viem's actions. */
async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const answer = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result;
}

/** The example configuration with `values` in place of its own: every other line as it is, no variable added. */
export function fillIn(example: string, values: Record<string, string>): { text: string; changed: string[] } {
  const seen = new Set<string>();
  const text = example
    .split("\n")
    .map((line) => {
      const match = /^([A-Z0-9_]+)=/.exec(line);
      if (!match || !(match[1]! in values)) return line;
      seen.add(match[1]!);
      return `${match[1]}=${values[match[1]!]}`;
    })
    .join("\n");
  const missing = Object.keys(values).filter((name) => !seen.has(name));
  if (missing.length > 0) throw new Error(`the example configuration has no ${missing.join(", ")}`);
  return { text, changed: [...seen] };
}

/** The systemd unit's command, working directory and stop signal. */
export function unitCommand(unit: string): { command: string[]; workingDirectory: string; envFile: string } {
  const value = (key: string) => new RegExp(`^${key}=(.+)$`, "m").exec(unit)?.[1]?.trim();
  const exec = value("ExecStart");
  const workingDirectory = value("WorkingDirectory");
  if (!exec || !workingDirectory) throw new Error("the unit has no ExecStart or WorkingDirectory");
  const command = exec.split(/\s+/);
  const envFile = command.find((arg) => arg.startsWith("--env-file="))?.slice("--env-file=".length);
  if (!envFile) throw new Error("the unit's ExecStart reads no --env-file");
  return { command, workingDirectory, envFile };
}

export async function startProduction(): Promise<Production> {
  const temp = mkdtempSync(join(tmpdir(), "agent-tools-production-"));
  const cleanups: (() => Promise<unknown> | unknown)[] = [() => rmSync(temp, { recursive: true, force: true })];
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  };
  try {
    const postgres = (await startTestPostgres()) as TestPostgres;
    if (!postgres) throw new Error("no Postgres server installed (npm run setup -- --with-postgres)");
    cleanups.push(() => postgres.stop());
    const devnet = await spawnDevnetProcess({
      host: "127.0.0.1",
      l1Port: 0,
      l2Port: 0,
      chainIds: { l1: 1, l2: 8453 },
      log: () => {},
    });
    cleanups.push(() => devnet.close());
    const { deployment } = devnet;
    const l1Url = deployment.l1.rpcUrl;
    const l2Url = deployment.l2.rpcUrl;
    const l1 = createPublicClient({ transport: http(l1Url) }) as PublicClient;
    const l2 = createPublicClient({ transport: http(l2Url) }) as PublicClient;
    const asset = deployment.addresses.usdToken as Address;

    // Accounts of the rehearsal's own: on chain ids 1 and 8453 the public test keys are refused.
    const operator = walletOf(generatePrivateKey());
    const payTo = privateKeyToAccount(generatePrivateKey()).address;
    const facilitatorKey = generatePrivateKey();
    const payers = Array.from({ length: 7 }, () => walletOf(generatePrivateKey()));
    const channelPayer = walletOf(generatePrivateKey());
    const funder = createWalletClient({
      account: privateKeyToAccount(deployment.accounts[0]!.privateKey),
      transport: http(l2Url),
    });
    const funded = [
      await funder.sendTransaction({
        chain: null,
        to: privateKeyToAccount(facilitatorKey).address,
        value: parseEther("10"),
      }),
      await funder.writeContract({
        chain: null,
        address: asset,
        abi: usdTokenAbi,
        functionName: "mintBatch",
        args: [[...payers, channelPayer].map((p) => p.account.address), 1_000n * 10n ** 6n],
      }),
    ];
    for (const hash of funded) await l2.waitForTransactionReceipt({ hash });
    // From here on the chains mine on an interval, as real ones do.
    await rpc(l1Url, "evm_setAutomine", [false]);
    await rpc(l1Url, "evm_setIntervalMining", [BLOCK_MS.l1]);
    await rpc(l2Url, "evm_setAutomine", [false]);
    await rpc(l2Url, "evm_setIntervalMining", [BLOCK_MS.l2]);

    // The service reads the chains through "providers": latency, throttling bursts, a cap on log ranges.
    const provider = { latencyMs: 40, throttle: { every: 60, length: 2 }, maxLogRange: RPC_LOG_RANGE };
    const rpcProxies = { l1: await startRpcProxy(l1Url, provider), l2: await startRpcProxy(l2Url, provider) };
    cleanups.push(
      () => rpcProxies.l1.close(),
      () => rpcProxies.l2.close(),
    );

    const marketplaceKey = "rehearsal-opensea-key";
    const sims = await startUpstreamSims({
      host: "127.0.0.1",
      apiKey: marketplaceKey,
      marketplaceKeyBudgetPerMinute: MARKETPLACE_BUDGET,
    });
    cleanups.push(() => sims.close());

    // x402's reference facilitator, second in line after one that cannot be reached.
    const facilitatorApiKey = "rehearsal-facilitator-bearer-key";
    const reference = spawnReferenceFacilitator({
      RPC_URL: l2Url,
      PRIVATE_KEY: facilitatorKey,
      NETWORK: "eip155:8453",
      API_KEY: facilitatorApiKey,
    });
    cleanups.push(() => stopProcess(reference.child));
    const [, referenceUrl] = await waitForOutput(
      reference,
      /reference facilitator on (http:\/\/\S+)/,
      60_000,
      "the reference facilitator",
    );
    const deadFacilitator = `http://127.0.0.1:${await freePort()}`;

    // Wallets that granted the service the marketplace's read:eligibility: the holders of the rehearsal.
    const eligibilityFile = join(temp, "eligibility-tokens.json");
    writeFileSync(
      eligibilityFile,
      JSON.stringify(
        Object.fromEntries(deployment.accounts.slice(1, 10).map((a) => [a.address, simWalletAccessToken(a.address)])),
      ),
    );

    const receiptSignerKey = generatePrivateKey();
    // The channels' receiver authorizer: it signs the service's claims and refunds, which the reference facilitator
    // sends. A key of its own (the devnet's channel account is of the public test mnemonic, refused on chain 8453).
    const channelKey = generatePrivateKey();
    const port = await freePort();
    const metricsPort = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const { text, changed } = fillIn(readFileSync(EXAMPLE_CONFIG, "utf8"), {
      PORT: String(port),
      PUBLIC_URL: url,
      METRICS_PORT: String(metricsPort),
      PAY_TO: payTo,
      OPERATOR_ADDRESS: operator.account.address,
      PAYMENT_ASSET: asset,
      L2_RPC_URL: rpcProxies.l2.url,
      FACILITATOR_URLS: `${deadFacilitator},${referenceUrl}`,
      FACILITATOR_API_KEYS: `,${facilitatorApiKey}`,
      CDP_API_KEY_ID: "",
      CDP_API_KEY_SECRET: "",
      RECEIPT_SIGNER_PRIVATE_KEY: receiptSignerKey,
      CHANNEL_PRIVATE_KEY: channelKey,
      L1_RPC_URL: rpcProxies.l1.url,
      COLLECTION_ADDRESS: deployment.addresses.collection,
      IDENTITY_REGISTRY_ADDRESS: deployment.addresses.identityRegistry,
      MARKETPLACE_URL: sims.urls.marketplace,
      MARKETPLACE_API_KEY: marketplaceKey,
      MARKETPLACE_REQUESTS_PER_MINUTE: String(MARKETPLACE_BUDGET),
      ELIGIBILITY_TOKENS_FILE: eligibilityFile,
      MARKET_DATA_URL: sims.urls.marketData,
      DATABASE_URL: await postgres.createDatabase(),
    });
    const configFile = join(temp, "agent-tools.env");
    writeFileSync(configFile, text, { mode: 0o600 });

    // The unit's command, with the rehearsal's configuration file in place of /etc/agent-tools/agent-tools.env.
    const unit = unitCommand(readFileSync(SYSTEMD_UNIT, "utf8"));
    const [executable, ...args] = unit.command;
    const node = existsSync(executable!) ? executable! : process.execPath;
    const command = args.map((arg) => (arg === `--env-file=${unit.envFile}` ? `--env-file=${configFile}` : arg));
    let server: ScriptProcess | undefined;
    const production: Production = {
      url,
      metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
      get server() {
        return server!;
      },
      devnet,
      sims,
      rpc: rpcProxies,
      l1,
      l2,
      asset,
      payTo,
      receiptSigner: privateKeyToAccount(receiptSignerKey).address,
      channelAuthorizer: privateKeyToAccount(channelKey).address,
      facilitator: privateKeyToAccount(facilitatorKey).address,
      operator,
      holder: (index) => walletOf(deployment.accounts[index]!.privateKey),
      payers,
      channelPayer,
      configFile,
      filledIn: changed,
      async start() {
        server = spawnCollected(node, command, { ...REHEARSAL_OVERRIDES }, repo);
        await waitForOutput(server, /Agent Tools API on /, 120_000, "the server");
      },
      async stop() {
        if (server) await stopProcess(server.child);
      },
      rss() {
        const status = readFileSync(`/proc/${server!.child.pid}/status`, "utf8");
        return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      },
      close,
    };
    cleanups.push(() => production.stop());
    await production.start();
    return production;
  } catch (error) {
    await close();
    throw error;
  }
}

/** production/reference-facilitator.ts in a process of its own (its environment as that file says). */
export function spawnReferenceFacilitator(env: Record<string, string>): ScriptProcess {
  const script = fileURLToPath(new URL("./reference-facilitator.ts", import.meta.url));
  return spawnCollected(process.execPath, ["--import", "tsx", script], env);
}

/** SIGTERM (the unit's KillSignal), and waits for the exit. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
}

/**
 * The environment the reliability suite runs against, as a user runs it: the chains in a process of their own, the
 * upstream simulators behind fault-injecting proxies, and the built server (`dist/main.js`) in a child process on
 * a PGlite data directory that outlives restarts and SIGKILLs.
 */
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { usdTokenAbi } from "@agent-tools/contracts";
import { type DevnetProcess, spawnDevnetProcess } from "@agent-tools/devnet";
import {
  LEDGER_ENTRIES_PATH,
  type LedgerPage,
  type LedgerReport,
  ledgerPageSchema,
  ledgerReportSchema,
} from "@agent-tools/schema";
import { type FaultProxy, startFaultProxy, startUpstreamSims, type UpstreamSims } from "@agent-tools/upstream-sim";
import type { PaymentRequired } from "@x402/core/types";
import { type Address, createPublicClient, http, type PrivateKeyAccount, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { runNodeScript, type ScriptProcess, waitForOutput } from "../src/startup/embedded-process.js";
import { deploymentEnv } from "../test/helpers/deployment-env.js";
import { paymentHeader, signInHeader } from "../test/helpers/x402-client.js";

const mainScript = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const memoryProbe = fileURLToPath(new URL("./memory-probe.mjs", import.meta.url));

/** Memory of the server process, in bytes: resident, and live after a full garbage collection. */
export interface MemoryFigures {
  rss: number;
  /** What V8 has reserved for its heap (used or not). */
  heapTotal: number;
  heapUsed: number;
  external: number;
  /** Seconds since the server process started. */
  uptime: number;
}

/**
 * How long one upstream call may take in the money side's server (UPSTREAM_TIMEOUT_MS), where hung and trickling
 * upstreams are the point: short, so that each fault ends quickly. The endurance side runs with the shipped default,
 * as its load generator shares a process with the simulated upstreams and may hold their answers back on a busy
 * machine.
 */
export const UPSTREAM_TIMEOUT_MS = 1500;

export interface ServerProcess extends ScriptProcess {
  url: string;
  pid: number;
}

export interface Environment {
  devnet: DevnetProcess;
  sims: UpstreamSims;
  proxies: { marketplace: FaultProxy; marketData: FaultProxy };
  l2: PublicClient;
  network: string;
  asset: Address;
  payTo: Address;
  server: ServerProcess;
  /** Devnet account `index` (1-9 hold tokens and USD; 0 is the operator and payee). */
  account(index: number): PrivateKeyAccount;
  /** Starts the server (again) on the same data directory, with `env` on top of the suite's. */
  start(env?: Record<string, string>): Promise<ServerProcess>;
  /** Resolves once the server is up: at once while it runs, after the next start while it is stopped. */
  serverUp(): Promise<void>;
  /** SIGTERM, and waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
  /** A fresh sign-in of `account` for `path` of the server, on the collection chain. */
  signIn(account: PrivateKeyAccount, path: string): Promise<string>;
  /** A PAYMENT-SIGNATURE paying a 402's first requirement from `account`, signed by x402's own client. */
  pay(account: PrivateKeyAccount, paymentRequired: PaymentRequired): Promise<string>;
  /** USD token balance, in units. */
  balance(address: Address): Promise<bigint>;
  /** The operator's ledger, read as the operator. */
  ledger(): Promise<LedgerReport>;
  /** Every entry of the operator's book (today's window), page by page. */
  ledgerEntries(): Promise<LedgerPage["entries"]>;
  /** The server process's memory after a full garbage collection (reliability/memory-probe.mjs). */
  memory(): Promise<MemoryFigures>;
  close(): Promise<void>;
}

export interface EnvironmentOptions {
  /** The server's UPSTREAM_TIMEOUT_MS (default: the shipped one). */
  upstreamTimeoutMs?: number;
}

export async function startEnvironment(options: EnvironmentOptions = {}): Promise<Environment> {
  const temp = mkdtempSync(join(tmpdir(), "agent-tools-reliability-"));
  const devnet = await spawnDevnetProcess({ host: "127.0.0.1", l1Port: 0, l2Port: 0, log: () => {} });
  const sims = await startUpstreamSims({ host: "127.0.0.1" });
  const proxies = {
    marketplace: await startFaultProxy(sims.urls.marketplace),
    marketData: await startFaultProxy(sims.urls.marketData),
  };
  const { deployment } = devnet;
  const l2 = createPublicClient({ transport: http(deployment.l2.rpcUrl!) }) as PublicClient;
  const network = `eip155:${deployment.l2.chainId}`;
  const asset = deployment.addresses.usdToken as Address;
  const payTo = deployment.accounts[0]!.address as Address;
  const account = (index: number) => privateKeyToAccount(deployment.accounts[index]!.privateKey);
  const baseEnv: Record<string, string> = {
    PORT: "0",
    LOG_LEVEL: "info",
    DATA_DIR: join(temp, "data"),
    ...deploymentEnv(deployment),
    FACILITATOR_PRIVATE_KEY: deployment.accounts[0]!.privateKey,
    MARKETPLACE_URL: proxies.marketplace.url,
    MARKET_DATA_URL: proxies.marketData.url,
    ...(options.upstreamTimeoutMs ? { UPSTREAM_TIMEOUT_MS: String(options.upstreamTimeoutMs) } : {}),
    DISPATCH_POLL_MS: "100",
    DISPATCH_RETRY_BASE_MS: "100",
    DISPATCH_MAX_ATTEMPTS: "2",
    // The suite is one address sending on behalf of many clients: the per-address limits are lifted, the per-payer
    // ones are as shipped.
    PAID_RATE_PER_IP: "1000000",
    PAID_CONCURRENCY_PER_IP: "100000",
    // The built server as shipped, with a probe that reports its live memory when asked (SIGUSR2).
    NODE_OPTIONS: `--expose-gc --import ${memoryProbe}`,
  };

  const env = {} as Environment;
  const pending = () => {
    let resolve = () => {};
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    return { promise, resolve };
  };
  let up = pending();
  async function start(extra: Record<string, string> = {}): Promise<ServerProcess> {
    const proc = runNodeScript(mainScript, { ...baseEnv, ...extra });
    const [, url] = await waitForOutput(proc, /Agent Tools API on (http:\/\/\S+)/, 120_000, "the server");
    env.server = { ...proc, url: url!, pid: proc.child.pid! };
    up.resolve();
    return env.server;
  }
  async function exit(signal: NodeJS.Signals): Promise<void> {
    const { child } = env.server;
    if (child.exitCode !== null || child.signalCode !== null) return;
    up = pending();
    const exited = once(child, "exit");
    child.kill(signal);
    await exited;
  }

  Object.assign(env, {
    devnet,
    sims,
    proxies,
    l2,
    network,
    asset,
    payTo,
    account,
    start,
    serverUp: () => up.promise,
    stop: () => exit("SIGTERM"),
    kill: () => exit("SIGKILL"),
    signIn: (who: PrivateKeyAccount, path: string) =>
      signInHeader(who, `${env.server.url}${path}`, `eip155:${deployment.l1.chainId}`),
    pay: (who: PrivateKeyAccount, paymentRequired: PaymentRequired) =>
      paymentHeader(who, l2, paymentRequired, { network, asset }),
    balance: (address: Address) =>
      l2.readContract({ address: asset, abi: usdTokenAbi, functionName: "balanceOf", args: [address] }),
    async ledger() {
      const url = `${env.server.url}/operator/ledger?limit=500`;
      const signIn = await signInHeader(account(0), url, `eip155:${deployment.l1.chainId}`);
      const res = await fetch(url, { headers: { "SIGN-IN-WITH-X": signIn } });
      if (res.status !== 200) throw new Error(`the operator ledger answered ${res.status}: ${await res.text()}`);
      return ledgerReportSchema.parse(await res.json());
    },
    async ledgerEntries() {
      const entries: LedgerPage["entries"] = [];
      let after: string | null = null;
      do {
        const url = `${env.server.url}${LEDGER_ENTRIES_PATH}?limit=1000${after ? `&after=${after}` : ""}`;
        const signIn = await signInHeader(account(0), url, `eip155:${deployment.l1.chainId}`);
        const res = await fetch(url, { headers: { "SIGN-IN-WITH-X": signIn } });
        if (res.status !== 200) throw new Error(`the operator's book answered ${res.status}: ${await res.text()}`);
        const page = ledgerPageSchema.parse(await res.json());
        entries.push(...page.entries);
        after = page.next;
      } while (after);
      return entries;
    },
    async memory() {
      // Only what the process prints after the signal is looked at: the answer to this request.
      const seen = env.server.output().length;
      process.kill(env.server.pid, "SIGUSR2");
      const [, figures] = await waitForOutput(
        { ...env.server, output: () => env.server.output().slice(seen) },
        /memory-probe (\{[^\n]*\})\n/,
        30_000,
        "the memory probe",
      );
      return JSON.parse(figures!) as MemoryFigures;
    },
    async close() {
      await exit("SIGTERM").catch(() => undefined);
      await proxies.marketplace.close();
      await proxies.marketData.close();
      await sims.close();
      await devnet.close();
      rmSync(temp, { recursive: true, force: true });
    },
  } satisfies Omit<Environment, "server">);
  await start();
  return env;
}

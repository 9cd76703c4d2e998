/**
 * The deployment `pnpm test:scale` runs: one devnet (the chains in a process of their own), the upstream simulators,
 * one throwaway Postgres cluster, three instances of the built server (`dist/main.js`, each with its own facilitator
 * key, all on one database) and nginx in front of them. nginx has two sites: `url` balances over the three
 * instances, `singleUrl` sends everything to the first one (the one-instance figures, through the same proxy).
 */
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { usdTokenAbi } from "@agent-tools/contracts";
import { type DevnetProcess, spawnDevnetProcess } from "@agent-tools/devnet";
import { type FaultProxy, startFaultProxy, startUpstreamSims, type UpstreamSims } from "@agent-tools/upstream-sim";
import type { PaymentRequired } from "@x402/core/types";
import pg from "pg";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  http,
  type PrivateKeyAccount,
  type PublicClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { freePort, runNodeScript, type ScriptProcess, waitForOutput } from "../src/startup/embedded-process.js";
import { deploymentEnv } from "../test/helpers/deployment-env.js";
import { startTestPostgres, type TestPostgres } from "../test/helpers/test-postgres.js";
import { paymentHeader, signInHeader } from "../test/helpers/x402-client.js";
import { type LoadBalancer, startNginx } from "./nginx.js";

const mainScript = fileURLToPath(new URL("../dist/main.js", import.meta.url));

/** Devnet accounts whose keys the instances settle with, one each (account 0 is also the payee and operator). */
const FACILITATOR_ACCOUNTS = [0, 8, 9];

/** The limits every instance runs with (the per-payer rate is what the test checks across instances). */
export const SCALE_LIMITS = {
  /** Calls per second one payer may start, counted across instances. */
  payerRate: 20,
  payerConcurrency: 256,
};

export interface Instance {
  index: number;
  /** Its own origin (bypassing the proxy). */
  url: string;
  process: ScriptProcess;
  /** Starts it (again) on the same port. */
  start(): Promise<void>;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
  /** Resolves once it is up: at once while it runs, after the next start while it is down. */
  up(): Promise<void>;
}

export interface Cluster {
  devnet: DevnetProcess;
  sims: UpstreamSims;
  /** The marketplace simulator as the instances reach it: through a proxy that can slow its answers. */
  marketplace: FaultProxy;
  postgres: TestPostgres;
  /** The database every instance shares (for the test's own checks). */
  db: pg.Pool;
  l2: PublicClient;
  network: string;
  asset: Address;
  payTo: Address;
  instances: Instance[];
  proxy: LoadBalancer;
  /** nginx over the three instances: the public origin. */
  url: string;
  /** nginx over the first instance only. */
  singleUrl: string;
  /** Devnet account `index` (1-9 hold tokens and USD; account i holds token i). */
  account(index: number): PrivateKeyAccount;
  /** Fresh accounts, each funded with USD on the payment chain (payers with no token). */
  payers: PrivateKeyAccount[];
  /** A fresh sign-in of `account` for `path` of the public origin, on the collection chain. */
  signIn(account: PrivateKeyAccount, path: string): Promise<string>;
  /** A PAYMENT-SIGNATURE paying a 402's first requirement, signed by x402's own client. */
  pay(account: PrivateKeyAccount, paymentRequired: PaymentRequired): Promise<string>;
  close(): Promise<void>;
}

export async function startCluster(options: { freshPayers: number }): Promise<Cluster> {
  const postgres = await startTestPostgres();
  if (!postgres) throw new Error("no Postgres server installed (npm run setup -- --with-postgres)");
  const databaseUrl = await postgres.createDatabase();
  const devnet = await spawnDevnetProcess({ host: "127.0.0.1", l1Port: 0, l2Port: 0, log: () => {} });
  const sims = await startUpstreamSims({ host: "127.0.0.1" });
  const marketplace = await startFaultProxy(sims.urls.marketplace);
  const { deployment } = devnet;
  const l2 = createPublicClient({ transport: http(deployment.l2.rpcUrl!) }) as PublicClient;
  const network = `eip155:${deployment.l2.chainId}`;
  const asset = deployment.addresses.usdToken as Address;
  const account = (index: number) => privateKeyToAccount(deployment.accounts[index]!.privateKey);
  const payTo = account(0).address;

  // Payers of our own, funded before any instance settles with the operator's key (one sender per key).
  const payers = Array.from({ length: options.freshPayers }, () => privateKeyToAccount(generatePrivateKey()));
  const operator = createWalletClient({ account: account(0), transport: http(deployment.l2.rpcUrl!) });
  const funding = await operator.writeContract({
    chain: null,
    address: asset,
    abi: usdTokenAbi,
    functionName: "mintBatch",
    args: [payers.map((p) => p.address), 1_000_000n * 10n ** 6n],
  });
  await l2.waitForTransactionReceipt({ hash: funding });

  const ports = await Promise.all(FACILITATOR_ACCOUNTS.map(() => freePort()));
  const origins = ports.map((port) => `http://127.0.0.1:${port}`);
  const proxy = await startNginx([{ upstreams: origins }, { upstreams: [origins[0]!] }]);
  const [url, singleUrl] = proxy.urls as [string, string];

  const baseEnv: Record<string, string> = {
    HOST: "127.0.0.1",
    PUBLIC_URL: url,
    TRUST_PROXY: "loopback",
    DATABASE_URL: databaseUrl,
    ...deploymentEnv(deployment),
    MARKETPLACE_URL: marketplace.url,
    MARKET_DATA_URL: sims.urls.marketData,
    DISPATCH_POLL_MS: "100",
    // A mission whose instance was killed is run again once its lease ends: seconds here, not the default minutes.
    DISPATCH_LEASE_MS: "4000",
    // The kill test holds the marketplace's answers back while it kills an instance: the calls waiting on them must
    // not give up meanwhile, however slow the machine.
    UPSTREAM_TIMEOUT_MS: "30000",
    // Every client of the test comes from one address: the per-address limits are lifted; the per-payer rate is
    // the one under test.
    PAID_RATE_PER_IP: "1000000",
    PAID_CONCURRENCY_PER_IP: "100000",
    PAID_RATE_PER_PAYER: String(SCALE_LIMITS.payerRate),
    PAID_CONCURRENCY_PER_PAYER: String(SCALE_LIMITS.payerConcurrency),
    // Settlements gather into batches for up to 200 ms: a kill falls between a batch's send and its receipt.
    SETTLEMENT_BATCH_WINDOW_MS: "200",
  };

  const instances = FACILITATOR_ACCOUNTS.map((facilitator, index): Instance => {
    let resolveUp = () => {};
    let upPromise = Promise.resolve();
    const instance: Instance = {
      index,
      url: origins[index]!,
      process: undefined as unknown as ScriptProcess,
      async start() {
        instance.process = runNodeScript(mainScript, {
          ...baseEnv,
          PORT: String(ports[index]),
          FACILITATOR_PRIVATE_KEY: deployment.accounts[facilitator]!.privateKey,
        });
        await waitForOutput(instance.process, /Agent Tools API on /, 120_000, `instance ${index}`);
        resolveUp();
      },
      async kill() {
        const { child } = instance.process;
        if (child.exitCode !== null || child.signalCode !== null) return;
        upPromise = new Promise((resolve) => {
          resolveUp = resolve;
        });
        const exited = once(child, "exit");
        child.kill("SIGKILL");
        await exited;
      },
      up: () => upPromise,
    };
    return instance;
  });
  // One after the other: the first applies the migrations, the others find them applied. A start that fails takes
  // down what was started, so no process outlives the failed suite.
  try {
    for (const instance of instances) await instance.start();
  } catch (error) {
    for (const instance of instances) instance.process?.child.kill("SIGKILL");
    await proxy.close();
    await marketplace.close();
    await sims.close();
    await devnet.close();
    await postgres.stop();
    throw error;
  }

  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const l1ChainId = `eip155:${deployment.l1.chainId}`;
  const signIn = (who: PrivateKeyAccount, path: string) => signInHeader(who, `${url}${path}`, l1ChainId);
  return {
    devnet,
    sims,
    marketplace,
    postgres,
    db,
    l2,
    network,
    asset,
    payTo,
    instances,
    proxy,
    url,
    singleUrl,
    account,
    payers,
    signIn,
    pay: (who, paymentRequired) => paymentHeader(who, l2, paymentRequired, { network, asset }),
    async close() {
      await proxy.close();
      for (const instance of instances) {
        const { child } = instance.process;
        if (child.exitCode !== null || child.signalCode !== null) continue;
        const exited = once(child, "exit");
        child.kill("SIGTERM");
        await exited;
      }
      await db.end();
      await marketplace.close();
      await sims.close();
      await devnet.close();
      await postgres.stop();
    },
  };
}

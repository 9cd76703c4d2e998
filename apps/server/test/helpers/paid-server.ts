import { createInProcessDevnet, type InProcessDevnet } from "@agent-tools/devnet";
import { simWalletAccessToken, startUpstreamSims, type UpstreamSims } from "@agent-tools/upstream-sim";
import type { PaymentRequired } from "@x402/core/types";
import pino from "pino";
import type { PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod";
import { createApp } from "../../src/app.js";
import { chainDeps, paymentDeps, toolDeps } from "../../src/compose.js";
import { type Config, loadConfig } from "../../src/config.js";
import { createMissionWorker, type MissionWorker } from "../../src/missions/mission-worker.js";
import type { PaymentService } from "../../src/payment/payment-service.js";
import {
  createAuthorizationReader,
  createSettlementReconciler,
  type ReconcileResult,
} from "../../src/payment/reconcile-settlements.js";
import { listen, type RunningServer } from "../../src/server.js";
import type { Database } from "../../src/store/database.js";
import { createMissionQueue, type MissionQueue } from "../../src/store/mission-queue.js";
import { createSettlementLedger, type SettlementLedger } from "../../src/store/settlement-ledger.js";
import { createSignInNonceStore } from "../../src/store/sign-in-nonces.js";
import { createTools } from "../../src/tools/index.js";
import type { ToolDeps, ToolSet } from "../../src/tools/types.js";
import { createTestClock } from "./test-clock.js";
import { openTestDatabase } from "./test-database.js";
import { paymentHeader, signInHeader } from "./x402-client.js";

export const PUBLIC_URL = "http://127.0.0.1:8402";

export interface PaidTestServer {
  devnet: InProcessDevnet;
  server: RunningServer;
  config: Config;
  payments: PaymentService;
  sims: UpstreamSims;
  toolDeps: ToolDeps;
  tools: ToolSet;
  chain: Awaited<ReturnType<typeof chainDeps>>;
  db: Database;
  ledger: SettlementLedger;
  queue: MissionQueue;
  worker: MissionWorker;
  /** Moves the collection index's clock past its staleness bound: the next request reads the chain again. */
  outlastStaleness(): void;
  /** One pass of the settlement reconciler (every pending claim, whatever its age). */
  reconcile(): Promise<ReconcileResult>;
  /**
   * Another instance of the app on the same store, chain and tools (as another process would be), with `payments`
   * of its own: a second in-memory replay guard, another facilitator, other settings. The caller closes it.
   */
  instance(payments: PaymentService): Promise<RunningServer>;
  /** GETs a path of the server. */
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  /** POSTs a JSON body to a path of the server (always on its real ephemeral port). */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** USD token balance of an address, in units. */
  balance(address: `0x${string}`): Promise<bigint>;
  /** A fresh SIGN-IN-WITH-X header signed by devnet account `index` for `path`. */
  signIn(
    index: number,
    path: string,
    overrides?: { domain?: string; uri?: string; issuedAt?: string; nonce?: string; chainId?: string },
  ): Promise<string>;
  /** A PAYMENT-SIGNATURE header paying the first requirement of a 402 answer, from devnet account `index`. */
  pay(index: number, paymentRequired: PaymentRequired): Promise<string>;
  /**
   * Clears the simulators' faults and makes one successful call through each upstream client: the clients'
   * circuit breakers open after 5 failures in a row, and one success resets the count, so a fault case never
   * leaks into the next test.
   */
  resetUpstream(): Promise<void>;
  close(): Promise<void>;
}

/** A seeded devnet, the app with payments on it (in-process facilitator on L2), on 127.0.0.1. */
export async function startPaidTestServer(
  options: {
    tools?: ToolSet;
    env?: Record<string, string>;
    simLatencyMs?: number;
    /** Devnet accounts whose keys the built-in facilitator settles with, in turn (default: account 0). */
    facilitatorKeys?: number[];
    /** Options of the payment collaborators (the built-in facilitator's signature recovery, ...). */
    payments?: Parameters<typeof paymentDeps>[3];
    /** The mission worker's settings (default: polls every 100 ms, retries after 50 ms, 100 ms, ...). */
    worker?: Partial<Parameters<typeof createMissionWorker>[0]>;
  } = {},
): Promise<PaidTestServer> {
  const [devnet, sims, db] = await Promise.all([
    createInProcessDevnet({ publicUrl: PUBLIC_URL }),
    startUpstreamSims({ latencyMs: options.simLatencyMs ?? 0 }),
    openTestDatabase(),
  ]);
  const ledger = createSettlementLedger(db);
  const queue = createMissionQueue(db);
  const { addresses, accounts } = devnet.deployment;
  const config = loadConfig({
    PORT: "0",
    PUBLIC_URL,
    COLLECTION_ADDRESS: addresses.collection,
    IDENTITY_REGISTRY_ADDRESS: addresses.identityRegistry,
    PAYMENT_ASSET: addresses.usdToken,
    PAYMENT_NETWORK: `eip155:${devnet.l2.chainId}`,
    PAY_TO: accounts[0]!.address,
    FACILITATOR_PRIVATE_KEYS: (options.facilitatorKeys ?? [0]).map((index) => accounts[index]!.privateKey).join(","),
    MARKETPLACE_URL: sims.urls.marketplace,
    MARKET_DATA_URL: sims.urls.marketData,
    ...options.env,
  });
  const clock = createTestClock();
  const chain = await chainDeps(devnet.l1.publicClient as unknown as PublicClient, config, { now: clock.now });
  const payments = await paymentDeps(
    {
      ...config,
      // The payment chain is the in-process L2 passed below, not an RPC URL.
      facilitator: { ...config.facilitator, rpcUrl: "http://unused" } as typeof config.facilitator,
    },
    devnet.l1.chainId,
    { ledger, signIns: createSignInNonceStore(db) },
    { l2: devnet.l2.publicClient as unknown as PublicClient, ...options.payments },
  );
  const deps = toolDeps(config, devnet.l2.publicClient as unknown as PublicClient, (wallet) =>
    simWalletAccessToken(wallet),
  );
  let worker: MissionWorker | undefined;
  const tools = {
    // The same deps object the tests hold, so a test may swap a source (eligibilityToken) afterwards.
    ...createTools(Object.assign(deps, { missions: { queue, wake: () => worker?.wake() } })),
    ...options.tools,
  };
  const logger = pino({ level: "silent" });
  worker = createMissionWorker({
    queue,
    tools,
    collection: chain.collection,
    logger,
    pollMs: 100,
    retryBaseMs: 50,
    ...options.worker,
  });
  worker.start();
  const reconciler = createSettlementReconciler({
    ledger,
    reader: createAuthorizationReader(devnet.l2.publicClient as unknown as PublicClient),
    network: config.payment.network,
    logger,
  });
  const app = createApp({ config, logger, chain, payments, tools });
  const server = await listen(app, "127.0.0.1", 0);
  const usd = devnet.deployment.addresses.usdToken;

  return {
    devnet,
    server,
    config,
    payments,
    sims,
    toolDeps: deps,
    tools,
    chain,
    db,
    ledger,
    queue,
    worker,
    outlastStaleness: () => clock.advance(config.chainMaxStalenessMs + 1),
    reconcile: () => reconciler.reconcile({ graceMs: 0 }),
    get: (path, headers = {}) => fetch(`${server.url}${path}`, { headers }),
    post: (path, body, headers = {}) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      }),
    balance: async (address) =>
      devnet.l2.publicClient.readContract({
        address: usd,
        abi: [
          {
            type: "function",
            name: "balanceOf",
            stateMutability: "view",
            inputs: [{ name: "a", type: "address" }],
            outputs: [{ type: "uint256" }],
          },
        ] as const,
        functionName: "balanceOf",
        args: [address],
      }),
    signIn: (index, path, overrides = {}) =>
      signInHeader(
        privateKeyToAccount(accounts[index]!.privateKey),
        `${PUBLIC_URL}${path}`,
        overrides.chainId ?? `eip155:${devnet.l1.chainId}`,
        overrides,
      ),
    pay: (index, paymentRequired) =>
      paymentHeader(
        privateKeyToAccount(accounts[index]!.privateKey),
        devnet.l2.publicClient as unknown as PublicClient,
        paymentRequired,
        { network: `eip155:${devnet.l2.chainId}`, asset: usd },
      ),
    instance: (other) => listen(createApp({ config, logger, chain, payments: other, tools }), "127.0.0.1", 0),
    async resetUpstream() {
      sims.marketplace.faults.clear();
      sims.marketData.faults.clear();
      const fresh = { fresh: crypto.randomUUID() };
      await Promise.all([
        deps.marketplace.get("/api/v2/collections/lumen-apes", { query: fresh, schema: z.unknown() }),
        deps.marketData.get("/latest/dex/search", { query: { q: "WBNB", ...fresh }, schema: z.unknown() }),
      ]);
    },
    async close() {
      await server.close();
      await worker?.stop();
      await db.close();
      await Promise.all([devnet.close(), sims.close()]);
    },
  };
}

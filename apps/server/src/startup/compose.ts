import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Express } from "express";
import type { Logger } from "pino";
import { createPublicClient, http, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createAgentRegistryReader } from "../chain/agent-registry.js";
import { createB20Scanner } from "../chain/b20-scanner.js";
import { createCollectionIndex } from "../chain/collection-index.js";
import type { Config } from "../config/config.js";
import { postgresRateCounter, type RateCounter } from "../limits/call-limiter.js";
import { createRequestBudget } from "../limits/request-budget.js";
import { type MetricsServer, startMetricsServer } from "../metrics/metrics-server.js";
import { createServiceMetrics, PENDING_CLAIM_STALE_MS, type ServiceMetrics } from "../metrics/service-metrics.js";
import { createMissionWorker, type MissionWorker } from "../missions/mission-worker.js";
import type { PaymentService } from "../paid-call/payment-service.js";
import { createRefusalCounts } from "../paid-call/refusal-counts.js";
import type { RecoverTypedDataSigner } from "../schemes/exact/authorization-signer.js";
import {
  createSettlementFinder,
  createSettlementReconciler,
  routeSettlementFinders,
  type SettlementReconciler,
} from "../schemes/exact/reconcile-settlements.js";
import { createRefundRecorder } from "../schemes/exact/record-refund.js";
import { createUptoSettlementFinder, isUptoClaim } from "../schemes/upto/upto-settlements.js";
import { createFailoverFacilitator } from "../settlement/http-facilitators.js";
import { createA2aTaskStore } from "../store/a2a-tasks.js";
import { createChannelStore } from "../store/channels.js";
import type { Database } from "../store/database.js";
import { lockFacilitatorKeys } from "../store/facilitator-key-locks.js";
import { createMissionQueue, type MissionQueue } from "../store/mission-queue.js";
import { openDatabase } from "../store/open-database.js";
import { createOperatorSessionStore } from "../store/operator-sessions.js";
import { createSettlementLedger, type SettlementLedger } from "../store/settlement-ledger.js";
import { createSignInNonceStore } from "../store/sign-in-nonces.js";
import { createTools } from "../tools/index.js";
import type { ToolDeps, ToolSet } from "../tools/types.js";
import { readEligibilityTokens } from "../upstream/eligibility-tokens.js";
import { createMarketDataClient } from "../upstream/market-data-client.js";
import { createMarketplaceClient } from "../upstream/marketplace-client.js";
import { createUpstreamHealthBoard, type UpstreamHealthBoard } from "../upstream/upstream-health.js";
import { type AppDeps, createApp } from "./app.js";
import { type ChannelParts, channelParts, checkChannelContract, withChannelFacilitator } from "./compose-channels.js";
import { checkBatchContract, checkedHttpFacilitators, paymentDeps } from "./compose-payments.js";
import { uptoSettler } from "./compose-upto.js";
import { expectChain } from "./startup-checks.js";

/** Builds a viem client for a JSON-RPC URL with the configured timeout and a short retry on transient errors. */
export function rpcClient(url: string, timeoutMs: number): PublicClient {
  return createPublicClient({ transport: http(url, { timeout: timeoutMs, retryCount: 2, retryDelay: 200 }) });
}

/** The chain collaborators of the app, from clients the caller made (real RPC, devnet or in-process). */
export async function chainDeps(
  l1: PublicClient,
  config: Pick<Config, "l1"> & Partial<Pick<Config, "chainMaxStalenessMs" | "rpcMaxLogRange">>,
  options: {
    now?: () => number;
    /** L1's chain id when the caller has read it already. */
    chainId?: number;
  } = {},
): Promise<NonNullable<AppDeps["chain"]>> {
  const chainId = options.chainId ?? (await l1.getChainId());
  const collection = createCollectionIndex({
    client: l1,
    collection: config.l1.collection,
    ...(config.chainMaxStalenessMs !== undefined ? { maxStalenessMs: config.chainMaxStalenessMs } : {}),
    ...(config.rpcMaxLogRange !== undefined ? { maxLogRange: BigInt(config.rpcMaxLogRange) } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const registry = createAgentRegistryReader({
    client: l1,
    chainId,
    collection: config.l1.collection,
    identityRegistry: config.l1.identityRegistry,
    index: collection,
  });
  // Load the collection before the first request, so no caller waits for it.
  await collection.sync();
  return { collection, registry };
}

/** The market tools' sources: marketplace, market-data aggregator, B20 chain. */
export function toolDeps(
  config: Pick<Config, "upstream"> & Partial<Pick<Config, "rpcMaxLogRange">>,
  l2: PublicClient,
  eligibilityToken: ToolDeps["eligibilityToken"] = () => undefined,
  metrics?: ServiceMetrics,
  rates?: RateCounter,
  health?: UpstreamHealthBoard,
): ToolDeps {
  const { upstream } = config;
  // Each client reports to the console's board (and through it to the metrics), or to the metrics alone.
  const observerOf = (name: string, budgetPerMinute: number | undefined) => {
    const next = metrics?.upstream(name);
    return health ? health.observer(name, budgetPerMinute, next) : next;
  };
  const marketplaceObserver = observerOf("marketplace", upstream.marketplaceRequestsPerMinute);
  const marketDataObserver = observerOf("market-data", upstream.marketDataRequestsPerMinute);
  // Each key's requests a minute, as its plan allows; on Postgres, one count for every instance.
  const marketplaceBudget = createRequestBudget(upstream.marketplaceRequestsPerMinute, {
    name: "marketplace",
    key: upstream.marketplaceApiKey,
    ...(rates ? { rates } : {}),
  });
  const marketDataBudget = createRequestBudget(upstream.marketDataRequestsPerMinute, {
    name: "market_data",
    key: upstream.marketDataUrl,
    ...(rates ? { rates } : {}),
  });
  return {
    marketplace: createMarketplaceClient({
      baseUrl: upstream.marketplaceUrl,
      apiKey: upstream.marketplaceApiKey,
      timeoutMs: upstream.timeoutMs,
      ...(marketplaceObserver ? { observer: marketplaceObserver } : {}),
      ...(marketplaceBudget ? { budget: marketplaceBudget } : {}),
    }),
    marketData: createMarketDataClient({
      baseUrl: upstream.marketDataUrl,
      timeoutMs: upstream.timeoutMs,
      ...(marketDataObserver ? { observer: marketDataObserver } : {}),
      ...(marketDataBudget ? { budget: marketDataBudget } : {}),
    }),
    b20: createB20Scanner({
      client: l2,
      ...(config.rpcMaxLogRange !== undefined ? { maxLogRange: BigInt(config.rpcMaxLogRange) } : {}),
    }),
    b20ChainId: upstream.b20ChainId,
    altchainId: upstream.altchainId,
    eligibilityToken,
  };
}

/**
 * The clients the service is built from, when the caller made them: production passes none (each is built from the
 * configuration), the embedded default and the tests pass their own. The upstreams are reached over HTTP at the
 * configured URLs; a test points them at its simulators. See docs/architecture.md, "Composition".
 */
export interface ServiceClients {
  /** The collection chain (default: a JSON-RPC client of `L1_RPC_URL`). */
  l1?: PublicClient;
  /** The payment and B20 chain (default: JSON-RPC clients of `L2_RPC_URL` and of the facilitator's RPC). */
  l2?: PublicClient;
  /** The store (default: opened from `DATABASE_URL` / `DATA_DIR`). The service closes it. */
  db?: Database;
  /** The clock the collection snapshot's age is read by, in milliseconds (tests move it ahead). */
  clock?: () => number;
  /** The marketplace access token of a wallet, for eligibility reads (default: none). */
  eligibilityToken?: ToolDeps["eligibilityToken"];
  /** Tools that replace the built ones (a test's tool whose upstream is down). */
  tools?: ToolSet;
  /** The payments' signature recovery (tests count it). */
  recoverSigner?: RecoverTypedDataSigner;
  /** `METRICS_PORT` bound already (the server binds its ports before anything else); else bound at start. */
  metricsServer?: MetricsServer;
  /** Told each step of composing and starting as it begins, in words (the embedded default prints them). */
  progress?: (step: string) => void;
}

/** The composed service: the app, and what runs beside it (mission worker, settlement reconciler, store). */
export interface Service {
  app: Express;
  chain: NonNullable<AppDeps["chain"]>;
  db: Database;
  payments: PaymentService;
  /** The tools' sources (marketplace, market data, B20 scanner, ...), as the tools were built with them. */
  toolDeps: ToolDeps;
  tools: ToolSet;
  ledger: SettlementLedger;
  queue: MissionQueue;
  worker: MissionWorker;
  reconciler: SettlementReconciler;
  /** Payment channels, when the service offers them: their store and claimer (docs/channels.md). */
  channels?: ChannelParts;
  /** `http://<host>:<port>/metrics` once started, when METRICS_PORT is set. */
  metricsUrl?: string;
  /** Starts the background work: the collection follower, the first reconciliation pass, then the mission worker. */
  start(): Promise<void>;
  /** Stops the background work, waits for missions running here, closes the store. */
  close(): Promise<void>;
}

/** The whole service from validated configuration and the clients the caller made (none in production). */
export async function composeService(loaded: Config, logger: Logger, clients: ServiceClients = {}): Promise<Service> {
  // The configuration as loaded, less the channels when no facilitator over HTTP can carry them (below).
  let config = loaded;
  const l1 = clients.l1 ?? rpcClient(config.l1.rpcUrl, config.rpcTimeoutMs);
  const l2 = clients.l2 ?? rpcClient(config.l2.rpcUrl, config.rpcTimeoutMs);
  const progress = clients.progress ?? (() => {});
  progress("checking that each chain's RPC answers and serves the chain configured");
  // Each RPC answers, and serves the chain it is configured for, before anything is built on it.
  const l1ChainId = await expectChain(l1, {
    network: config.l1.network,
    variable: "L1_RPC_URL",
    networkVariable: "COLLECTION_NETWORK",
    what: "the collection chain",
    url: config.l1.rpcUrl,
  });
  await expectChain(l2, {
    network: config.payment.network,
    variable: "L2_RPC_URL",
    networkVariable: "PAYMENT_NETWORK",
    what: "the payment chain",
    url: config.l2.rpcUrl,
  });
  const paymentsLogger = logger.child({ component: "payments" });
  const facilitators = await checkedHttpFacilitators(config, paymentsLogger);
  config = await withChannelFacilitator(config, facilitators, paymentsLogger);
  await checkBatchContract(config, l2);
  await checkChannelContract(config, l2);
  const upto = await uptoSettler(config, l2, facilitators, paymentsLogger);
  progress("reading the collection from the collection chain (every token's owner and traits)");
  const chain = await chainDeps(l1, config, { chainId: l1ChainId, ...(clients.clock ? { now: clients.clock } : {}) });
  if (!clients.db) progress("opening the database");
  const db = clients.db ?? (await openDatabase(config.store));
  // On Postgres, the request rates are counted for all instances on the database at once, and no two instances
  // settle with one facilitator key.
  const rates = db.pool ? postgresRateCounter(db.pool) : undefined;
  const keyLocks =
    db.pool && config.facilitator.kind === "local"
      ? await lockFacilitatorKeys(
          db.pool,
          config.facilitator.privateKeys.map((key) => privateKeyToAccount(key).address),
        ).catch(async (error: unknown) => {
          if (!clients.db) await db.close();
          throw error;
        })
      : undefined;
  const ledger = createSettlementLedger(db);
  const signIns = createSignInNonceStore(db);
  const a2aTasks = createA2aTaskStore(db);
  const operatorSessions = createOperatorSessionStore(db);
  const queue = createMissionQueue(db);
  const channelStore = config.channels ? createChannelStore(db) : undefined;
  const upstreamHealth = createUpstreamHealthBoard();
  // Claims pending, by whether a call could still hold them: read at scrape time and by the operator console.
  const pendingSettlements = () => ledger.pendingByAge(new Date(Date.now() - PENDING_CLAIM_STALE_MS));
  // Metrics only when an operator asked for them (METRICS_PORT). Refusals by reason are counted either way: the
  // operator console shows them.
  const refusalCounts = createRefusalCounts();
  const metrics =
    config.metricsPort !== undefined
      ? createServiceMetrics({
          missionQueue: () => queue.depth(),
          collectionLagBlocks: async () =>
            Number((await l1.getBlockNumber({ cacheTime: 0 })) - chain.collection.syncedBlock()),
          pendingSettlements,
          ...(channelStore ? { channelTotals: () => channelStore.totals() } : {}),
        })
      : undefined;
  const channels = channelParts(config, {
    store: channelStore ?? createChannelStore(db),
    ...(facilitators.length > 0 ? { httpFacilitator: createFailoverFacilitator(facilitators) } : {}),
    chain: l2,
    // On PGlite the data directory serves one process at a time: a process restarted on it is the same claimer and
    // takes its lease back at once. On Postgres each process is one of several.
    instance: db.kind === "pglite" ? "pglite" : `${hostname()}:${process.pid}:${randomUUID()}`,
    logger: logger.child({ component: "channels" }),
  });
  const payments = await paymentDeps(
    config,
    l1ChainId,
    { ledger, signIns },
    {
      logger: paymentsLogger,
      facilitators,
      ...(channels ? { channels } : {}),
      ...(upto ? { upto } : {}),
      ...(clients.l2 ? { l2: clients.l2 } : {}),
      ...(clients.recoverSigner ? { recoverSigner: clients.recoverSigner } : {}),
      ...(rates ? { rates } : {}),
      ...(metrics ? { metrics } : {}),
    },
  );
  // The dispatch tool wakes the worker, and the worker runs the tools: the two are tied once both exist.
  let wakeWorker = () => {};
  const eligibilityToken =
    clients.eligibilityToken ??
    (config.upstream.eligibilityTokensFile
      ? await readEligibilityTokens(config.upstream.eligibilityTokensFile)
      : undefined);
  const sources = toolDeps(config, l2, eligibilityToken, metrics, rates, upstreamHealth);
  const tools: ToolSet = {
    ...createTools(Object.assign(sources, { missions: { queue, wake: () => wakeWorker() } })),
    ...clients.tools,
  };
  const worker = createMissionWorker({
    queue,
    tools,
    collection: chain.collection,
    logger: logger.child({ component: "missions" }),
    ...config.dispatch,
  });
  wakeWorker = () => worker.wake();
  const maxLogRange = BigInt(config.rpcMaxLogRange);
  const reconciler = createSettlementReconciler({
    ledger,
    // An `upto` claim is read from Permit2's nonces, whether or not the service takes `upto` now; any other is an
    // EIP-3009 authorization's.
    finder: routeSettlementFinders(
      [{ owns: isUptoClaim, finder: createUptoSettlementFinder({ client: l2, maxLogRange }) }],
      createSettlementFinder({ client: l2, maxLogRange }),
    ),
    network: config.payment.network,
    logger: logger.child({ component: "ledger" }),
  });
  const recordRefund = createRefundRecorder({
    ledger,
    client: l2,
    network: config.payment.network,
    asset: config.payment.asset,
    logger: logger.child({ component: "ledger" }),
  });
  const app = createApp({
    config,
    logger,
    chain,
    payments,
    tools,
    recordRefund,
    ...(metrics ? { metrics } : {}),
    refusalCounts,
    ...(rates ? { rates } : {}),
    a2aTasks,
    console: {
      sessions: operatorSessions,
      missionQueue: () => queue.depth(),
      pendingSettlements,
      upstreams: () => upstreamHealth.snapshot(),
      refusals: () => refusalCounts.byReason(),
    },
  });
  if (metrics) worker.onOutcome(({ tool, outcome }) => metrics.missions.inc({ tool, outcome }));
  let metricsServer: MetricsServer | undefined = clients.metricsServer;
  const chainLog = logger.child({ component: "chain" });
  let stopFollowing = () => {};
  let sweeper: NodeJS.Timeout | undefined;
  const service: Service = {
    app,
    chain,
    db,
    payments,
    toolDeps: sources,
    tools,
    ledger,
    queue,
    worker,
    reconciler,
    ...(channels ? { channels } : {}),
    async start() {
      if (metrics && config.metricsPort !== undefined) {
        if (metricsServer) metricsServer.serve(metrics.registry);
        else metricsServer = await startMetricsServer(metrics.registry, config.host, config.metricsPort);
        service.metricsUrl = metricsServer.url;
      }
      // Requests answer from the collection snapshot; the follower keeps it younger than the staleness bound.
      stopFollowing = chain.collection.follow({
        onError: (error) => chainLog.warn({ err: error }, "could not follow the collection chain"),
      });
      // Claims left pending by a crash are settled on chain or given back before new work starts.
      progress("settling the payments a stop cut short, if any, then starting the mission worker");
      const reconciled = await reconciler.reconcile({ graceMs: 0 });
      if (reconciled.settled + reconciled.dropped > 0) logger.warn(reconciled, "reconciled cut-short settlements");
      reconciler.start(60_000);
      await channels?.claimer.prepare();
      channels?.claimer.start();
      // Spent sign-in nonces are kept past their messages' validity window, then dropped; A2A tasks a day.
      sweeper = setInterval(() => {
        signIns
          .sweep(new Date())
          .catch((error: unknown) => logger.warn({ err: error }, "could not sweep sign-in nonces"));
        a2aTasks.sweep(new Date()).catch((error: unknown) => logger.warn({ err: error }, "could not sweep A2A tasks"));
        operatorSessions
          .sweep(new Date())
          .catch((error: unknown) => logger.warn({ err: error }, "could not sweep operator sessions"));
      }, 60_000);
      sweeper.unref();
      worker.start();
    },
    async close() {
      stopFollowing();
      clearInterval(sweeper);
      reconciler.stop();
      await channels?.claimer.stop();
      await worker.stop();
      await metricsServer?.close();
      await keyLocks?.release();
      await db.close();
    },
  };
  return service;
}

import { spawnDevnetProcess } from "@agent-tools/devnet/process";
import { withListenerUrl } from "../config/config.js";
import { SETTLEMENT_DEFAULTS } from "../config/config-env.js";
import { StartupError } from "../errors/startup-error.js";
import { type Database, storeDescription } from "../store/database.js";
import { openDatabase, type StoreConfig } from "../store/open-database.js";
import { claimDataDirectory, pgliteOpening, setAsideDatabase } from "../store/pglite.js";
import { exitOnStartFailure, loadConfigOrExit, stopOnSignals } from "./lifecycle.js";
import { createLogger } from "./logger.js";
import { openListener } from "./server.js";
import { portRefusal } from "./startup-checks.js";

type Say = (line: string) => void;

/** Seconds since `since` (performance.now()), to a tenth. */
const secondsSince = (since: number) => ((performance.now() - since) / 1000).toFixed(1);

/**
 * Opens the store, saying what it does: on a first start on this machine, Postgres' initdb runs in WebAssembly,
 * the longest step of that start (docs/decisions.md, "Memory").
 */
async function openStore(store: StoreConfig, say: Say): Promise<Database> {
  const started = performance.now();
  if (store.kind === "pglite") {
    // The chains are new at each start: the book of the chains before is moved aside, not opened
    // (docs/decisions.md, "The embedded default's book").
    const earlier = setAsideDatabase(store.dataDir);
    if (earlier) say(`  data: the earlier start's database, whose chains are gone, moved to ${earlier}`);
    const opening = pgliteOpening(store.dataDir);
    say(
      opening === "create"
        ? "  data: creating the database; the first start on this machine runs Postgres' initdb in WebAssembly (about 5 s of CPU, kept for later starts)..."
        : opening === "copy"
          ? "  data: creating the database from the copy kept by an earlier start..."
          : "  data: opening the database...",
    );
  } else say("  data: connecting to Postgres...");
  const db = await openDatabase(store);
  if (store.kind === "postgres" && (await holdsAnEarlierBook(db))) {
    await db.close();
    throw new StartupError(
      "DATABASE_URL",
      "the database holds payments, channels or missions of an earlier start of the embedded default, whose chains " +
        "are gone (each start makes new ones); give the embedded default an empty database, or leave DATABASE_URL " +
        "unset to keep its book in DATA_DIR, which each start moves aside.",
    );
  }
  say(`  data: ready in ${secondsSince(started)} s`);
  return db;
}

/** True when a Postgres database already holds a book: the embedded default's chains, new, would not match it. */
async function holdsAnEarlierBook(db: Database): Promise<boolean> {
  const [row] = await db.query<{ held: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM settlements) OR EXISTS (SELECT 1 FROM channels)
       OR EXISTS (SELECT 1 FROM missions) AS held`,
  );
  return row?.held === true;
}

/** The marketplace and market-data simulators, on ports of their own. */
async function startSims(say: Say) {
  const sim = await import("@agent-tools/upstream-sim");
  const sims = await sim.startUpstreamSims({
    host: "127.0.0.1",
    marketplacePort: Number(process.env.MARKETPLACE_SIM_PORT ?? 0),
    marketDataPort: Number(process.env.MARKET_DATA_SIM_PORT ?? 0),
  });
  say(`  simulators: marketplace ${sims.urls.marketplace}, market data ${sims.urls.marketData}`);
  return { sims, sim };
}

/**
 * The embedded default (`pnpm start`): local chains on loopback, deployed and seeded, and the server wired to
 * them. Everything runs on this machine; nothing reaches a real network. The chains start first, in a process of
 * their own; while they are seeded, this process opens the database, loads the server and starts the simulators.
 * Each step prints a line as it begins or ends.
 */
async function main(): Promise<void> {
  const loaded = loadConfigOrExit({ embedded: true });
  const say: Say = (line: string) => process.stdout.write(`${line}\n`);
  say("Starting the embedded default: local chains, seeded, and the Agent Tools server.");
  // A data directory another process holds is refused now, not after the chains are seeded.
  if (loaded.store.kind === "pglite") {
    try {
      claimDataDirectory(loaded.store.dataDir);
    } catch (error) {
      exitOnStartFailure(error);
    }
  }
  // The server's socket is bound first: its address (PORT=0 picks one) is the public origin the chains are seeded
  // with, and a port already taken is reported before anything else starts.
  const running = await openListener(loaded.host, loaded.port, {
    keepAliveTimeoutMs: loaded.keepAliveTimeoutMs,
    headersTimeoutMs: loaded.connections.headersTimeoutMs,
    requestTimeoutMs: loaded.connections.requestTimeoutMs,
    connectionsPerAddress: loaded.connections.perAddress,
  }).catch(portRefusal("PORT", loaded.host, loaded.port));
  const config = withListenerUrl(loaded, running.url);
  // The chains run in a process of their own: their EVM works on the other core, never in this event loop.
  say(
    "  chains: starting two local chains (Hardhat EDR) in a process of their own, then deploying and seeding them...",
  );
  const devnetStarting = spawnDevnetProcess({
    host: "127.0.0.1",
    l1Port: Number(process.env.L1_PORT ?? 8545),
    l2Port: Number(process.env.L2_PORT ?? 8546),
    publicUrl: config.publicUrl,
    portHint: "set L1_PORT and L2_PORT to other ports, or 0 for free ones",
    log: (line: string) => say(`  ${line}`),
  });
  // While the chains start and are seeded: the database, the server's modules and the simulators.
  const [devnet, db, { composeService }, { withHealthCheck }, { sims, sim }] = await Promise.all([
    devnetStarting,
    openStore(loaded.store, say),
    import("./compose.js"),
    import("./app.js"),
    startSims(say),
  ]);
  const { deployment } = devnet;
  const embeddedConfig = {
    ...config,
    l1: {
      network: `eip155:${deployment.l1.chainId}`,
      rpcUrl: deployment.l1.rpcUrl,
      collection: deployment.addresses.collection,
      identityRegistry: deployment.addresses.identityRegistry,
    },
    payment: {
      ...config.payment,
      network: `eip155:${deployment.l2.chainId}`,
      asset: deployment.addresses.usdToken,
      payTo: deployment.accounts[0]!.address,
    },
    l2: { rpcUrl: deployment.l2.rpcUrl },
    upstream: { ...config.upstream, marketplaceUrl: sims.urls.marketplace, marketDataUrl: sims.urls.marketData },
    // The built-in facilitator settles on the local L2 from the operator account (a devnet key).
    facilitator: {
      kind: "local" as const,
      rpcUrl: deployment.l2.rpcUrl,
      privateKeys: [deployment.accounts[0]!.privateKey],
      ...(loaded.facilitator.kind === "local"
        ? { receiptTimeoutMs: loaded.facilitator.receiptTimeoutMs, batch: loaded.facilitator.batch }
        : SETTLEMENT_DEFAULTS),
    },
  };
  const logger = createLogger(config.logLevel);
  // The simulated marketplace answers eligibility for any wallet, as if each had authorized the service.
  const service = await composeService(embeddedConfig, logger, {
    db,
    eligibilityToken: (wallet) => sim.simWalletAccessToken(wallet),
    progress: (step) => say(`  server: ${step}...`),
  });
  const { app, chain } = service;
  running.serve(withHealthCheck(app));
  await service.start();

  say("");
  // Counted from this process's start (performance.now()), as the lines above were printed.
  say(`Agent Tools is up in ${secondsSince(0)} s.`);
  say(`  API            ${config.publicUrl}   (reference at /, health at /healthz, OpenAPI at /openapi.json)`);
  if (service.metricsUrl) say(`  metrics        ${service.metricsUrl}`);
  say(`  L1 (collection) ${deployment.l1.rpcUrl}  chain ${deployment.l1.chainId}`);
  say(`  L2 (payments)   ${deployment.l2.rpcUrl}  chain ${deployment.l2.chainId}`);
  say(`  collection      ${deployment.addresses.collection}`);
  say(`  identity reg.   ${deployment.addresses.identityRegistry}`);
  say(`  USD token       ${deployment.addresses.usdToken}`);
  say(
    service.db.kind === "pglite"
      ? `  data           ${service.db.location}  (PGlite: the ledger, the channels and the missions of these chains; the next start moves them aside)`
      : `  data           ${storeDescription(service.db)}  (the ledger and the missions)`,
  );
  say("");
  say("Demo accounts. DEVNET ONLY: these keys are public test keys; never use them on a real network.");
  for (const account of deployment.accounts) {
    const role =
      account.index === 0
        ? "operator: receives payments, reads the ledger (agent-tools ledger)"
        : `holds tokens ${account.index}, ${account.index + 9}, ${account.index + 18}, ... and 1,000,000 USD`;
    say(`  #${account.index} ${account.address} ${account.privateKey}  ${role}`);
  }
  // A token of each clearance, and the demo account holding it, for trying the gated tools.
  const holderOf = (tokenId: number) =>
    deployment.accounts.find((a) => a.address === chain.collection.token(tokenId)?.owner)?.index ?? "?";
  const firstWith = (clearance: string) =>
    chain.collection.rarityTable().entries.find((e) => chain.collection.token(e.tokenId)?.clearance === clearance)!
      .tokenId;
  for (const clearance of ["Elite", "Rare", "Holder"]) {
    const tokenId = firstWith(clearance);
    say(`  ${clearance.padEnd(6)} clearance: token ${tokenId}, held by account #${holderOf(tokenId)}`);
  }
  say("  Tokens 6001-6666 are not revealed yet.");
  say(
    `  Collections the simulated marketplace knows (offer-radar --slug): ${sim.MARKETPLACE_FACTS.collections.established.slice(0, 6).join(", ")}, ...`,
  );
  say("");
  // The CLI and the docs' examples read the service's address from this variable (README, "Once the service runs").
  say("Point the CLI and the docs' examples at it, in each terminal you use them from:");
  // The RPC lets the CLI check a payment channel on chain when its record is behind the service's (docs/channels.md).
  say(`  export AGENT_TOOLS_BASE_URL=${config.publicUrl} AGENT_TOOLS_RPC_URL=${deployment.l2.rpcUrl}`);
  say(`Try: curl ${config.publicUrl}/agents/info/1`);

  stopOnSignals(logger, async () => {
    await running.close();
    await service.close();
    await Promise.all([devnet.close(), sims.close()]);
  });
}

main().catch(exitOnStartFailure);

/**
 * The server side of the bench, in a child process of bench/run.ts (so the load generator never shares an event
 * loop with the servers): a fresh seeded in-process devnet, our app with payments on it, a bare Express 5 app and
 * the reference @x402/express app on the same facilitator, each on 127.0.0.1 with an ephemeral port. It reports
 * what the loader needs over IPC and closes everything when told to.
 */
import { createInProcessDevnet } from "@agent-tools/devnet";
import type { Network } from "@x402/core/types";
import pino from "pino";
import type { PublicClient } from "viem";
import { createApp } from "../src/app.js";
import { chainDeps, paymentDeps } from "../src/compose.js";
import { loadConfig } from "../src/config.js";
import { listen } from "../src/server.js";
import { migrate } from "../src/store/migrations.js";
import { openMemoryPglite } from "../src/store/pglite.js";
import { createSettlementLedger } from "../src/store/settlement-ledger.js";
import { intelTool } from "../src/tools/intel.js";
import { asFacilitatorClient, bareExpressApp, referenceApp } from "./apps.js";
import type { FromHost, ToHost } from "./protocol.js";

/** Origin the sign-in messages are bound to (the servers listen on ephemeral ports, like the tests'). */
const PUBLIC_URL = "http://127.0.0.1:8402";

const send = (message: FromHost) =>
  new Promise<void>((resolve, reject) =>
    process.send!(message, (error: Error | null) => (error ? reject(error) : resolve())),
  );

async function main(): Promise<void> {
  const devnet = await createInProcessDevnet({ publicUrl: PUBLIC_URL });
  const { addresses, accounts } = devnet.deployment;
  const network = `eip155:${devnet.l2.chainId}` as Network;
  const payTo = accounts[0]!.address;
  const config = loadConfig({
    PORT: "0",
    PUBLIC_URL,
    LOG_LEVEL: "silent",
    COLLECTION_ADDRESS: addresses.collection,
    IDENTITY_REGISTRY_ADDRESS: addresses.identityRegistry,
    PAYMENT_ASSET: addresses.usdToken,
    PAYMENT_NETWORK: network,
    PAY_TO: payTo,
  });
  const chain = await chainDeps(devnet.l1.publicClient as unknown as PublicClient, config);
  // The ledger as `pnpm start` keeps it: PGlite, written on every paid call.
  const db = await openMemoryPglite();
  await migrate(db);
  const payments = await paymentDeps(
    {
      ...config,
      facilitator: {
        kind: "local",
        rpcUrl: "http://unused",
        privateKeys: [accounts[0]!.privateKey],
        receiptTimeoutMs: 30_000,
      },
    },
    devnet.l1.chainId,
    createSettlementLedger(db),
    { l2: devnet.l2.publicClient as unknown as PublicClient },
  );
  const ours = await listen(
    createApp({ config, logger: pino({ level: "silent" }), chain, payments, tools: { intel: intelTool } }),
    "127.0.0.1",
    0,
  );
  const bare = await listen(bareExpressApp(), "127.0.0.1", 0);
  const reference = await listen(
    await referenceApp(
      asFacilitatorClient(payments.facilitator, network, accounts[0]!.address),
      {
        network,
        asset: addresses.usdToken,
        payTo,
        amount: "1000000",
        maxTimeoutSeconds: config.payment.maxTimeoutSeconds,
      },
      chain.collection,
    ),
    "127.0.0.1",
    0,
  );
  const startBlock = await devnet.l2.publicClient.getBlock();

  process.on("message", async (message: ToHost) => {
    if (message.type === "cpu") {
      const { user, system } = process.cpuUsage();
      return send({ type: "cpu", micros: user + system });
    }
    const endBlock = await devnet.l2.publicClient.getBlock();
    await Promise.all([ours.close(), bare.close(), reference.close()]);
    await devnet.close();
    await send({
      type: "report",
      blocks: Number(endBlock.number - startBlock.number),
      chainTimeAheadSeconds: Number(endBlock.timestamp) - Math.floor(Date.now() / 1000),
      chainTimeAdvancedSeconds: Number(endBlock.timestamp - startBlock.timestamp),
    });
    process.disconnect();
  });

  await send({
    type: "ready",
    urls: { ours: ours.url, bare: bare.url, reference: reference.url },
    seedMs: devnet.seedDurationMs.total,
    l1ChainId: devnet.l1.chainId,
    network,
    asset: addresses.usdToken,
    maxTimeoutSeconds: config.payment.maxTimeoutSeconds,
    publicUrl: PUBLIC_URL,
    privateKeys: accounts.map((account) => account.privateKey),
  });
}

main().catch(async (error: unknown) => {
  await send({ type: "failed", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
});

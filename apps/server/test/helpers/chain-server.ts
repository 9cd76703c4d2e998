import type { InProcessDevnet } from "@agent-tools/devnet";
import pino from "pino";
import type { PublicClient } from "viem";
import { loadConfig } from "../../src/config/config.js";
import { composeService, type Service } from "../../src/startup/compose.js";
import { listen, type RunningServer } from "../../src/startup/server.js";
import { deploymentEnv } from "./deployment-env.js";
import { DEVNET_PAYMENTS } from "./devnet-payments.js";
import { devnets } from "./devnets.js";
import { createTestClock } from "./test-clock.js";
import { openTestDatabase } from "./test-database.js";

export const PUBLIC_URL = "http://127.0.0.1:8402";

export interface ChainTestServer {
  devnet: InProcessDevnet;
  server: RunningServer;
  chain: Service["chain"];
  /** Moves the collection index's clock past its staleness bound: the next request reads the chain again. */
  outlastStaleness(): void;
  close(): Promise<void>;
}

/**
 * A seeded in-process devnet and the service composed on it as production composes it, listening on 127.0.0.1 with
 * an ephemeral port. Its background work is not started: no collection follower, so every read of the chain a test
 * sees was made by a request.
 */
export async function startChainTestServer(
  options: {
    /** The collection chain's client, made from the devnet (a test wraps it to count or fail its calls). */
    l1Client?: (devnet: InProcessDevnet) => PublicClient;
    /** Configuration variables over the helper's (`PUBLIC_URL`, ...). */
    env?: Record<string, string>;
  } = {},
): Promise<ChainTestServer> {
  const [devnet, db] = await Promise.all([devnets.borrow({ publicUrl: PUBLIC_URL }), openTestDatabase()]);
  const config = loadConfig({
    PORT: "0",
    PUBLIC_URL,
    ...deploymentEnv(devnet.deployment),
    FACILITATOR_PRIVATE_KEY: DEVNET_PAYMENTS.FACILITATOR_PRIVATE_KEY,
    ...options.env,
  });
  const clock = createTestClock();
  const service = await composeService(config, pino({ level: "silent" }), {
    l1: options.l1Client?.(devnet) ?? (devnet.l1.publicClient as unknown as PublicClient),
    l2: devnet.l2.publicClient as unknown as PublicClient,
    db,
    clock: clock.now,
  });
  const server = await listen(service.app, "127.0.0.1", 0);
  return {
    devnet,
    server,
    chain: service.chain,
    outlastStaleness: () => clock.advance(config.chainMaxStalenessMs + 1),
    async close() {
      await server.close();
      await service.close();
      await devnet.close();
    },
  };
}

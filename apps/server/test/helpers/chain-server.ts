import { createInProcessDevnet, type InProcessDevnet } from "@agent-tools/devnet";
import pino from "pino";
import type { PublicClient } from "viem";
import { type AppDeps, createApp } from "../../src/app.js";
import { chainDeps } from "../../src/compose.js";
import { loadConfig } from "../../src/config.js";
import { listen, type RunningServer } from "../../src/server.js";
import { createTestClock } from "./test-clock.js";
import { DEVNET_PAYMENTS } from "./test-server.js";

export const PUBLIC_URL = "http://127.0.0.1:8402";

export interface ChainTestServer {
  devnet: InProcessDevnet;
  server: RunningServer;
  chain: NonNullable<AppDeps["chain"]>;
  /** Moves the collection index's clock past its staleness bound: the next request reads the chain again. */
  outlastStaleness(): void;
  close(): Promise<void>;
}

/** A seeded in-process devnet and the app wired to it, on 127.0.0.1 with an ephemeral port. */
export async function startChainTestServer(
  options: { l1Client?: (devnet: InProcessDevnet) => PublicClient } = {},
): Promise<ChainTestServer> {
  const devnet = await createInProcessDevnet({ publicUrl: PUBLIC_URL });
  const config = loadConfig({
    PORT: "0",
    PUBLIC_URL,
    COLLECTION_ADDRESS: devnet.deployment.addresses.collection,
    IDENTITY_REGISTRY_ADDRESS: devnet.deployment.addresses.identityRegistry,
    PAYMENT_ASSET: devnet.deployment.addresses.usdToken,
    ...DEVNET_PAYMENTS,
  });
  const l1 = options.l1Client?.(devnet) ?? (devnet.l1.publicClient as unknown as PublicClient);
  const clock = createTestClock();
  const chain = await chainDeps(l1, config, { now: clock.now });
  const server = await listen(createApp({ config, logger: pino({ level: "silent" }), chain }), "127.0.0.1", 0);
  return {
    devnet,
    server,
    chain,
    outlastStaleness: () => clock.advance(config.chainMaxStalenessMs + 1),
    async close() {
      await server.close();
      await devnet.close();
    },
  };
}

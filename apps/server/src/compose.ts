import type { Express } from "express";
import type { Logger } from "pino";
import { createPublicClient, http, type PublicClient } from "viem";
import { type AppDeps, createApp } from "./app.js";
import { createAgentRegistryReader } from "./chain/agent-registry.js";
import { createCollectionIndex } from "./chain/collection-index.js";
import type { Config } from "./config.js";

/** Builds a viem client for a JSON-RPC URL with the configured timeout and a short retry on transient errors. */
export function rpcClient(url: string, timeoutMs: number): PublicClient {
  return createPublicClient({ transport: http(url, { timeout: timeoutMs, retryCount: 2, retryDelay: 200 }) });
}

/** The chain collaborators of the app, from clients the caller made (real RPC, devnet or in-process). */
export async function chainDeps(l1: PublicClient, config: Pick<Config, "l1">): Promise<NonNullable<AppDeps["chain"]>> {
  const chainId = await l1.getChainId();
  const collection = createCollectionIndex({ client: l1, collection: config.l1.collection });
  const registry = createAgentRegistryReader({
    client: l1,
    chainId,
    collection: config.l1.collection,
    identityRegistry: config.l1.identityRegistry,
  });
  // Load the collection before the first request, so no caller waits for it.
  await collection.sync();
  return { collection, registry };
}

/** The whole service from validated configuration. */
export async function composeService(
  config: Config,
  logger: Logger,
): Promise<{ app: Express; chain: NonNullable<AppDeps["chain"]> }> {
  const l1 = rpcClient(config.l1.rpcUrl, config.rpcTimeoutMs);
  const chain = await chainDeps(l1, config);
  return { app: createApp({ config, logger, chain }), chain };
}

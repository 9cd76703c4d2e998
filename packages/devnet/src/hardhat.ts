/**
 * The Hardhat 3 runtime behind the devnet chains (EDR, in process). No config file: the networks are passed in
 * code, the project root is this package (so it works from src/ and dist/), and the cache path points into the
 * OS temp directory. Nothing is compiled here, so Hardhat never downloads solc.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHardhatRuntimeEnvironment } from "hardhat/hre";
import type { EdrNetworkUserConfig } from "hardhat/types/config";
import type { HardhatRuntimeEnvironment } from "hardhat/types/hre";
import {
  DEVNET_ACCOUNTS,
  DEVNET_BLOCK_GAS_LIMIT,
  DEVNET_CHANNEL_ACCOUNT,
  DEVNET_L1_CHAIN_ID,
  DEVNET_L2_CHAIN_ID,
} from "./constants.js";

/** The package directory (`src/..` or `dist/..`). */
export const PACKAGE_ROOT = fileURLToPath(new URL("..", import.meta.url));

export type DevnetNetworkName = "l1" | "l2";

/** Ether each devnet account starts with (Hardhat's default, 10,000 ETH). */
export const DEVNET_ACCOUNT_BALANCE = 10_000n * 10n ** 18n;

/** Hardhat network config of a devnet chain: EDR, automine, same-timestamp blocks allowed, the 10 test accounts funded. */
export function devnetNetworkConfig(chainId: number): EdrNetworkUserConfig {
  return {
    type: "edr-simulated",
    chainType: "generic",
    chainId,
    allowBlocksWithSameTimestamp: true,
    blockGasLimit: DEVNET_BLOCK_GAS_LIMIT,
    mining: { auto: true },
    // The mnemonic's first ten keys, given directly: deriving them costs Hardhat ~0.1 s per chain.
    // Account 10, the service's channel key, is funded too (./constants.ts).
    accounts: [...DEVNET_ACCOUNTS, DEVNET_CHANNEL_ACCOUNT].map((a) => ({
      privateKey: a.privateKey,
      balance: DEVNET_ACCOUNT_BALANCE,
    })),
  };
}

let hrePromise: Promise<HardhatRuntimeEnvironment> | undefined;

/**
 * One runtime per process; every `hre.network.create` on it makes a fresh chain.
 *
 * Hardhat reports some internal errors (a failed Solidity stack trace of a reverting call) to its Sentry project
 * when stdout is a terminal and no opt-out is recorded; the devnet never talks to the network, so it sets
 * `HARDHAT_DISABLE_TELEMETRY=true` unless the variable is already set.
 */
export function devnetHardhat(): Promise<HardhatRuntimeEnvironment> {
  process.env.HARDHAT_DISABLE_TELEMETRY ??= "true";
  hrePromise ??= createHardhatRuntimeEnvironment(
    {
      networks: { l1: devnetNetworkConfig(DEVNET_L1_CHAIN_ID), l2: devnetNetworkConfig(DEVNET_L2_CHAIN_ID) },
      paths: { cache: join(tmpdir(), "agent-tools-devnet", "hardhat-cache") },
    },
    {},
    PACKAGE_ROOT,
  ).catch((error: unknown) => {
    hrePromise = undefined;
    throw error;
  });
  return hrePromise;
}

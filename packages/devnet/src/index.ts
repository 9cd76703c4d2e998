/**
 * @agent-tools/devnet — the local chains of the embedded default (Hardhat 3 / EDR) and their fixed seeding
 * (docs/decisions.md, "Devnet seeding").
 *
 * - L1 (chain 31337): the 6666-token collection, the ERC-8004 identity registry, the ERC-8217 bindings, Multicall3.
 * - L2 (chain 31338): the EIP-3009 USD token (payment asset), Multicall3, the B20 factory surface and 40 B20 tokens.
 *
 * `createInProcessDevnet()` gives a fresh seeded pair of in-process chains (tests), `createInProcessDevnetPool()` lends
 * seeded pairs to tests run one after another, reverted between borrowers; `startDevnet()` serves them
 * over JSON-RPC on loopback; `spawnDevnetProcess()` does the same in a child process (the embedded default); `seedL1` / `seedL2` seed any fresh Hardhat-compatible node through a viem client.
 */
export {
  B20_BLOCK_SECONDS,
  B20_SCHEDULE,
  B20_SCHEDULE_TIP,
  B20_WINDOWS,
  type B20ScheduledToken,
  type B20ScheduleEntry,
  b20ScheduleCountWithin,
} from "./b20-schedule.js";
export {
  DEFAULT_HOST,
  DEFAULT_L1_PORT,
  DEFAULT_L2_PORT,
  DEFAULT_PUBLIC_URL,
  DEPLOY_NONCES,
  DEVNET_ACCOUNTS,
  DEVNET_ADDRESSES,
  DEVNET_BLOCK_GAS_LIMIT,
  DEVNET_HOLDER_INDEXES,
  DEVNET_L1_CHAIN_ID,
  DEVNET_L2_CHAIN_ID,
  DEVNET_LAST_REVEALED,
  DEVNET_MNEMONIC,
  DEVNET_OPERATOR,
  DEVNET_TOKEN_COUNT,
  DEVNET_USD_PER_ACCOUNT,
  DEVNET_USD_UNITS_PER_ACCOUNT,
  type DevnetAccount,
  type DevnetAddresses,
  devnetL1Chain,
  devnetL2Chain,
  expectedDeployAddress,
  SEED_BATCH,
  SEED_TX_GAS,
} from "./constants.js";
export {
  createInProcessDevnet,
  type DevnetChainInfo,
  type DevnetDeployment,
  devnetAccountAddress,
  devnetDeployment,
  type InProcessChain,
  type InProcessDevnet,
  type InProcessDevnetOptions,
  type RunningDevnet,
  type StartDevnetOptions,
  startDevnet,
  type UnseededInProcessDevnet,
} from "./devnet.js";
export { createInProcessDevnetPool, type InProcessDevnetPool } from "./devnet-pool.js";
export { type DevnetProcess, spawnDevnetProcess } from "./devnet-process.js";
export { devnetHardhat, devnetNetworkConfig } from "./hardhat.js";
export {
  type DevnetCollectionSeed,
  devnetCollectionSeed,
  devnetOwnerOf,
  type L1SeedResult,
  normalizePublicUrl,
  type SeedL1Options,
  type SeedOptions,
  seedL1,
} from "./seed-l1.js";
export { type DevnetB20Token, devnetL2InitialDate, type L2SeedResult, seedL2 } from "./seed-l2.js";

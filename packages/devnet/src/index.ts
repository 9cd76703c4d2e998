/**
 * @agent-tools/devnet — the local chains of the embedded default (Hardhat 3 / EDR) and their fixed seeding
 * (docs/decisions.md, "Devnet seeding").
 *
 * - L1 (chain 31337): the 6666-token collection, the ERC-8004 identity registry, the ERC-8217 bindings, Multicall3.
 * - L2 (chain 31338): the EIP-3009 USD token (payment asset), Multicall3, x402 batch-settlement channels (contract
 *   and EIP-3009 deposit collector), Permit2 and x402's upto proxy (accounts 1-9 approved Permit2 for the USD token),
 *   the B20 factory surface and 40 B20 tokens.
 *
 * `createInProcessDevnet()` gives a fresh seeded pair of in-process chains (tests), `createInProcessDevnetPool()` lends
 * seeded pairs to tests run one after another, reverted between borrowers; `startDevnet()` serves them
 * over JSON-RPC on loopback; `spawnDevnetProcess()` does the same in a child process (the embedded default); `seedL1` / `seedL2` seed any fresh Hardhat-compatible node through a viem client.
 */
// The fixed facts (accounts, addresses, the B20 schedule), also served alone without Hardhat by ./facts.js.

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
export * from "./facts.js";
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

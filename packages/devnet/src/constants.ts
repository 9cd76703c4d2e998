/**
 * Fixed facts of the devnet (docs/decisions.md, "Devnet seeding"): chain ids, the test mnemonic's accounts, batch sizes and the
 * addresses every seeded devnet has. Configs default to these.
 */
import {
  B20_FACTORY_ADDRESS,
  BATCH_SETTLEMENT_ADDRESS,
  COLLECTION_SIZE,
  DEVNET_LAST_REVEALED,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  MULTICALL3_ADDRESS,
  PERMIT2_ADDRESS,
  UPTO_PERMIT2_PROXY_ADDRESS,
  USD_TOKEN_DECIMALS,
} from "@agent-tools/contracts";
import { type Address, type Chain, defineChain, getContractAddress, type Hex } from "viem";

/** Chain id of the collection chain (stands in for Ethereum mainnet). */
export const DEVNET_L1_CHAIN_ID = 31337;
/** Chain id of the payment and B20 chain (stands in for Base). */
export const DEVNET_L2_CHAIN_ID = 31338;

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_L1_PORT = 8545;
export const DEFAULT_L2_PORT = 8546;
/** The server's public origin in the embedded default; the collection's and the registry's URIs point there. */
export const DEFAULT_PUBLIC_URL = "http://127.0.0.1:8402";

/** The standard test mnemonic. DEVNET ONLY: everyone knows these keys. */
export const DEVNET_MNEMONIC = "test test test test test test test test test test test junk";

export interface DevnetAccount {
  /** Index in the mnemonic's derivation path `m/44'/60'/0'/0/index`. */
  index: number;
  address: Address;
  /** DEVNET ONLY: a publicly known test key. Never use it on a real network. */
  privateKey: Hex;
}

/**
 * Accounts 0..9 of {@link DEVNET_MNEMONIC} (a test checks they derive from it). Account 0 deploys and operates;
 * accounts 1..9 own the collection and hold the USD token.
 */
export const DEVNET_ACCOUNTS: readonly DevnetAccount[] = [
  ["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"],
  ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"],
  ["0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a"],
  ["0x90F79bf6EB2c4f870365E785982E1f101E93b906", "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6"],
  ["0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65", "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a"],
  ["0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc", "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba"],
  ["0x976EA74026E726554dB657fA54763abd0C3a0aa9", "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e"],
  ["0x14dC79964da2C08b23698B3D3cc7Ca32193d9955", "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356"],
  ["0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f", "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97"],
  ["0xa0Ee7A142d267C1f36714E4a8F75612F20a79720", "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6"],
].map(([address, privateKey], index) => ({ index, address: address as Address, privateKey: privateKey as Hex }));

/**
 * Account 10 of {@link DEVNET_MNEMONIC}: the service's channel key on the devnet (it authorizes the channels' claims
 * and refunds and sends their transactions). Funded with ether, holds no token, owns nothing.
 */
export const DEVNET_CHANNEL_ACCOUNT: DevnetAccount = {
  index: 10,
  address: "0xBcd4042DE499D14e55001CcbB24a551F3b954096",
  privateKey: "0xf214f2b2cd398c806f84e317254e0f0b801d0643303237d97a22a48e01628897",
};

/** The deployer and operator of every devnet contract (account 0). */
export const DEVNET_OPERATOR: Address = DEVNET_ACCOUNTS[0]!.address;

/** Accounts the seeding funds and gives tokens to. */
export const DEVNET_HOLDER_INDEXES = [1, 2, 3, 4, 5, 6, 7, 8, 9] as const;

/** Whole USD each of accounts 1..9 holds after seeding. */
export const DEVNET_USD_PER_ACCOUNT = 1_000_000n;
/** The same in the token's smallest unit (6 decimals): 1,000,000,000,000. */
export const DEVNET_USD_UNITS_PER_ACCOUNT = DEVNET_USD_PER_ACCOUNT * 10n ** BigInt(USD_TOKEN_DECIMALS);

/** Number of tokens minted; tokens above {@link DEVNET_LAST_REVEALED} stay unrevealed. */
export const DEVNET_TOKEN_COUNT = COLLECTION_SIZE;
export { DEVNET_LAST_REVEALED };

/**
 * Addresses of a seeded devnet. The deployed ones follow from the operator's nonces (L1: collection 0,
 * identity registry 1, agent bindings 2; L2: USD token 0); the others are placed with `hardhat_setCode`.
 * Note that the L1 collection and the L2 USD token share an address: both are nonce 0 of the same deployer,
 * on different chains.
 */
export const DEVNET_ADDRESSES = {
  /** L1, operator nonce 0. */
  collection: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  /** L1, operator nonce 1. */
  identityRegistry: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
  /** L1, operator nonce 2. */
  agentBindings: "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0",
  /** L2, operator nonce 0 (the server's default PAYMENT_ASSET). */
  usdToken: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  /** L2, Base's factory precompile address. */
  b20Factory: B20_FACTORY_ADDRESS,
  /** Both chains, the canonical Multicall3 address. */
  multicall3: MULTICALL3_ADDRESS,
  /** L2, x402 batch-settlement channels at the scheme's canonical address (`BatchSettlement`). */
  batchSettlement: BATCH_SETTLEMENT_ADDRESS,
  /** L2, the scheme's EIP-3009 deposit collector at its canonical address (`Erc3009DepositCollector`). */
  erc3009DepositCollector: ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  /** L2, Permit2 at its canonical address (`Permit2`); accounts 1..9 have approved it for the USD token. */
  permit2: PERMIT2_ADDRESS,
  /** L2, x402's upto proxy at the scheme's canonical address (`X402UptoPermit2Proxy`), the spender of upto permits. */
  uptoPermit2Proxy: UPTO_PERMIT2_PROXY_ADDRESS,
} as const satisfies Record<string, Address>;

export { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS, PERMIT2_ADDRESS, UPTO_PERMIT2_PROXY_ADDRESS };

export type DevnetAddresses = { [K in keyof typeof DEVNET_ADDRESSES]: Address };

/** The operator's nonce each deployed contract is created with. */
export const DEPLOY_NONCES = { collection: 0, identityRegistry: 1, agentBindings: 2, usdToken: 0 } as const;

/** Address a contract deployed by the operator at `nonce` gets (the check the seeding asserts). */
export function expectedDeployAddress(nonce: number): Address {
  return getContractAddress({ from: DEVNET_OPERATOR, nonce: BigInt(nonce) });
}

/** Items per transaction; each batch stays under Osaka's 2^24 gas cap per transaction (see contracts' README). */
export const SEED_BATCH = { mint: 600, reveal: 500, register: 400, bind: 1000 } as const;
/** Gas limit given to every seeding transaction (no estimation: on EDR it costs ~3x the execution). */
export const SEED_TX_GAS = 16_700_000n;

/** Block gas limit of both chains (room for three capped transactions). */
export const DEVNET_BLOCK_GAS_LIMIT = 60_000_000n;

const localRpc = (port: number) => ({ default: { http: [`http://127.0.0.1:${port}`] } });

/** viem chain of the devnet L1 (collection chain), with Multicall3. */
export const devnetL1Chain: Chain = defineChain({
  id: DEVNET_L1_CHAIN_ID,
  name: "Agent Tools devnet L1",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: localRpc(DEFAULT_L1_PORT),
  contracts: { multicall3: { address: MULTICALL3_ADDRESS, blockCreated: 0 } },
  testnet: true,
});

/** viem chain of the devnet L2 (payment and B20 chain), with Multicall3. */
export const devnetL2Chain: Chain = defineChain({
  id: DEVNET_L2_CHAIN_ID,
  name: "Agent Tools devnet L2",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: localRpc(DEFAULT_L2_PORT),
  contracts: { multicall3: { address: MULTICALL3_ADDRESS, blockCreated: 0 } },
  testnet: true,
});

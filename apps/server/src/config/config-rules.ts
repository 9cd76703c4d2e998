/**
 * What a configuration must hold beyond each variable's form: on a real network nothing falls back to the devnet
 * (its contracts, its RPC ports, the local simulators), every address and upstream is given, the facilitator is
 * one thing, and no account of the public test mnemonic is trusted with money. On local chains the devnet's values
 * fill in what is not given. (docs/decisions.md, "Safe production defaults")
 */
import { privateKeyToAccount } from "viem/accounts";
import { type Env, MIN_PAYMENT_TIMEOUT_SECONDS } from "./config-env.js";
import type { ConfigError } from "./config-error.js";
import { isPublicTestAddress, LOCAL_CHAIN_IDS } from "./public-test-accounts.js";

/**
 * The embedded devnet's deployment and loopback ports: deterministic (deployer account 0, fixed nonces); a test
 * checks them against packages/devnet's deployment.
 */
export const DEVNET = {
  collection: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  identityRegistry: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
  usdToken: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  l1RpcUrl: "http://127.0.0.1:8545",
  l2RpcUrl: "http://127.0.0.1:8546",
  marketplaceUrl: "http://127.0.0.1:8411",
  marketplaceApiKey: "local-sim",
  marketDataUrl: "http://127.0.0.1:8412",
  /** Account 0 of the public test mnemonic: on local chains, offers and receipts are signed with it. */
  receiptSignerKey: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  /** Account 10 of the public test mnemonic: on local chains, it authorizes the channels' claims and refunds. */
  channelKey: "0xf214f2b2cd398c806f84e317254e0f0b801d0643303237d97a22a48e01628897",
} as const;

/** Whether a CAIP-2 network is one of the local chains (1337, 31337, 31338). */
export function isLocalNetwork(network: string): boolean {
  return LOCAL_CHAIN_IDS.includes(Number(network.split(":")[1]));
}

/**
 * Chain ids of public test networks, where payments are in test tokens: Base Sepolia, Ethereum Sepolia, Holesky and
 * Hoodi, OP Sepolia, Arbitrum Sepolia, Polygon Amoy, Avalanche Fuji. Any other chain that is not local counts as a
 * mainnet, where payments are real money.
 */
export const PUBLIC_TESTNET_CHAIN_IDS: readonly number[] = [
  84532, 11155111, 17000, 560048, 11155420, 421614, 80002, 43113,
];

/** What a CAIP-2 network is: a local chain, a public test network, or a mainnet (any other). */
export function networkKind(network: string): "local" | "testnet" | "mainnet" {
  if (isLocalNetwork(network)) return "local";
  return PUBLIC_TESTNET_CHAIN_IDS.includes(Number(network.split(":")[1])) ? "testnet" : "mainnet";
}

type Problems = ConfigError["problems"];

/** The variables a chain needs outside the devnet, with what each is. */
const PAYMENT_CHAIN_NEEDS = [
  ["PAYMENT_ASSET", "the address of the USD stablecoin (EIP-3009) payments are made in"],
  ["L2_RPC_URL", "the JSON-RPC endpoint of the payment chain"],
  ["PUBLIC_URL", "the service's public origin, which sign-ins are bound to"],
  ["MARKETPLACE_URL", "the marketplace's API origin"],
  ["MARKETPLACE_API_KEY", "the marketplace's API key"],
  ["MARKET_DATA_URL", "the market-data API origin"],
] as const;
const COLLECTION_CHAIN_NEEDS = [
  ["L1_RPC_URL", "the JSON-RPC endpoint of the collection chain"],
  ["COLLECTION_ADDRESS", "the collection contract"],
  ["IDENTITY_REGISTRY_ADDRESS", "the ERC-8004 Identity Registry"],
] as const;

/** The problems of `e` as a whole (none when it can be used). */
export function configProblems(e: Env, options: { embedded?: boolean }): Problems {
  const problems: Problems = [];
  const need = (variables: readonly (readonly [keyof Env, string])[], network: string, variable: string) => {
    for (const [name, what] of variables) {
      if (e[name] === undefined) {
        problems.push({
          variable: name,
          message: `must be set on ${network} (${variable}): ${what}; the devnet's is used on local chains only`,
        });
      }
    }
  };
  if (!options.embedded) {
    if (!isLocalNetwork(e.PAYMENT_NETWORK)) need(PAYMENT_CHAIN_NEEDS, e.PAYMENT_NETWORK, "PAYMENT_NETWORK");
    if (!isLocalNetwork(e.COLLECTION_NETWORK)) need(COLLECTION_CHAIN_NEEDS, e.COLLECTION_NETWORK, "COLLECTION_NETWORK");
    if (!e.PAY_TO) problems.push({ variable: "PAY_TO", message: "must be set: the address that receives payments" });
  }
  problems.push(...storeProblems(e, options));
  problems.push(...facilitatorProblems(e, options));
  problems.push(...batchWindowProblems(e));
  // The claim policy's promise (docs/channels.md): a pass claims every answered call well before a withdrawal ends.
  if (e.CHANNEL_CLAIM_INTERVAL_MS * 3 > e.CHANNEL_WITHDRAW_DELAY * 1000) {
    problems.push({
      variable: "CHANNEL_CLAIM_INTERVAL_MS",
      message: `must be at most a third of CHANNEL_WITHDRAW_DELAY (${e.CHANNEL_WITHDRAW_DELAY} s), so that every answered call is claimed before a payer's withdrawal ends`,
    });
  }
  if (!isLocalNetwork(e.PAYMENT_NETWORK)) problems.push(...publicTestAccounts(e));
  return problems;
}

/**
 * The ledger of a mainnet's payments is kept in Postgres (DATABASE_URL) unless the operator chose the embedded store
 * knowingly (EMBEDDED_STORE=true): PGlite serves one instance only, and is backed up by copying its directory
 * (docs/decisions.md, "Safe production defaults").
 */
function storeProblems(e: Env, options: { embedded?: boolean }): Problems {
  if (e.EMBEDDED_STORE && e.DATABASE_URL) {
    return [
      {
        variable: "EMBEDDED_STORE",
        message:
          "is true and DATABASE_URL is set as well: keep the ledger either in Postgres (DATABASE_URL) or in the embedded store (EMBEDDED_STORE=true, in DATA_DIR)",
      },
    ];
  }
  if (options.embedded || e.DATABASE_URL || e.EMBEDDED_STORE || networkKind(e.PAYMENT_NETWORK) !== "mainnet") return [];
  return [
    {
      variable: "DATABASE_URL",
      message:
        `must be set on ${e.PAYMENT_NETWORK} (PAYMENT_NETWORK), a mainnet: the ledger of real payments is kept in ` +
        `Postgres. Without it, the ledger would be the embedded store (PGlite in DATA_DIR, ${e.DATA_DIR}), which ` +
        "serves one instance only (no second instance, no scale-out) and is backed up by copying its directory " +
        "while the server is stopped; to run so knowingly, set EMBEDDED_STORE=true",
    },
  ];
}

/** One way to verify and settle: facilitators over HTTP (with their credentials), or the built-in one's keys. */
function facilitatorProblems(e: Env, options: { embedded?: boolean }): Problems {
  const problems: Problems = [];
  const urls = e.FACILITATOR_URLS ?? (e.FACILITATOR_URL ? [e.FACILITATOR_URL] : []);
  const keys = e.FACILITATOR_PRIVATE_KEY ?? e.FACILITATOR_PRIVATE_KEYS;
  if (e.FACILITATOR_URL && e.FACILITATOR_URLS) {
    problems.push({ variable: "FACILITATOR_URLS", message: "and FACILITATOR_URL are both set: set one of them" });
  }
  if (urls.length > 0 && keys) {
    problems.push({
      variable: e.FACILITATOR_PRIVATE_KEY ? "FACILITATOR_PRIVATE_KEY" : "FACILITATOR_PRIVATE_KEYS",
      message: "is set as well as a facilitator URL: settle either through facilitators over HTTP or with keys",
    });
  }
  if (!options.embedded && urls.length === 0 && !keys) {
    problems.push({
      variable: "FACILITATOR_URLS",
      message: "or FACILITATOR_PRIVATE_KEY (or FACILITATOR_PRIVATE_KEYS) must be set to verify and settle payments",
    });
  }
  if (e.FACILITATOR_API_KEYS && e.FACILITATOR_API_KEYS.length > urls.length) {
    problems.push({
      variable: "FACILITATOR_API_KEYS",
      message: `lists ${e.FACILITATOR_API_KEYS.length} keys for ${urls.length} facilitator URLs: one per URL, in order`,
    });
  }
  if (urls.includes("cdp") && (!e.CDP_API_KEY_ID || !e.CDP_API_KEY_SECRET)) {
    problems.push({
      variable: "CDP_API_KEY_ID",
      message: "and CDP_API_KEY_SECRET must be set for the cdp facilitator (a Coinbase Developer Platform API key)",
    });
  }
  return problems;
}

/**
 * A settlement waits for its batch on top of the time it needs to be settled, so a payment must be valid for the
 * window as well: the window must leave a payment at least the shortest timeout a price can have.
 */
function batchWindowProblems(e: Env): Problems {
  const batches = !(e.FACILITATOR_URLS ?? e.FACILITATOR_URL) && e.SETTLEMENT_BATCH_SIZE > 1;
  const shortest = MIN_PAYMENT_TIMEOUT_SECONDS;
  if (!batches || e.SETTLEMENT_BATCH_WINDOW_MS <= (e.PAYMENT_TIMEOUT_SECONDS - shortest) * 1000) return [];
  return [
    {
      variable: "SETTLEMENT_BATCH_WINDOW_MS",
      message: `is ${e.SETTLEMENT_BATCH_WINDOW_MS} with PAYMENT_TIMEOUT_SECONDS=${e.PAYMENT_TIMEOUT_SECONDS}: a payment must stay valid for its batch's window on top of the ${shortest} s a payment has at least; lower the window or raise PAYMENT_TIMEOUT_SECONDS to ${shortest + Math.ceil(e.SETTLEMENT_BATCH_WINDOW_MS / 1000)}`,
    },
  ];
}

/**
 * The accounts of the public test mnemonic ("test test … junk") have keys everyone has: on a real payment chain
 * they receive nothing, read no ledger and settle nothing.
 */
function publicTestAccounts(e: Env): Problems {
  const problems: Problems = [];
  const publicTest = `is an account of the public test mnemonic, whose keys everyone has; it is refused on ${e.PAYMENT_NETWORK} (only local chains ${LOCAL_CHAIN_IDS.join(", ")} take it)`;
  for (const variable of ["PAY_TO", "OPERATOR_ADDRESS"] as const) {
    const value = e[variable];
    if (value && isPublicTestAddress(value)) problems.push({ variable, message: `${value} ${publicTest}` });
  }
  const keys = [
    ...(e.FACILITATOR_PRIVATE_KEY ? [["FACILITATOR_PRIVATE_KEY", e.FACILITATOR_PRIVATE_KEY] as const] : []),
    ...(e.FACILITATOR_PRIVATE_KEYS ?? []).map((key) => ["FACILITATOR_PRIVATE_KEYS", key] as const),
    ...(e.RECEIPT_SIGNER_PRIVATE_KEY ? [["RECEIPT_SIGNER_PRIVATE_KEY", e.RECEIPT_SIGNER_PRIVATE_KEY] as const] : []),
    ...(e.CHANNEL_PRIVATE_KEY ? [["CHANNEL_PRIVATE_KEY", e.CHANNEL_PRIVATE_KEY] as const] : []),
  ];
  for (const [variable, key] of keys) {
    const { address } = privateKeyToAccount(key as `0x${string}`);
    if (isPublicTestAddress(address)) {
      problems.push({ variable, message: `holds the key of ${address}, which ${publicTest}` });
    }
  }
  return problems;
}

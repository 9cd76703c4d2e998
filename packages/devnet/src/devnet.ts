/**
 * The two devnet chains: in process (tests) or served over JSON-RPC on loopback (the embedded default).
 */
import { createServer as createNetServer } from "node:net";
import type { EthereumProvider } from "hardhat/types/providers";
import {
  type Address,
  type Chain,
  type CustomTransport,
  createPublicClient,
  createWalletClient,
  custom,
  http,
  type PrivateKeyAccount,
  type PublicClient,
  type WalletClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  DEFAULT_HOST,
  DEFAULT_L1_PORT,
  DEFAULT_L2_PORT,
  DEFAULT_PUBLIC_URL,
  DEVNET_ACCOUNTS,
  type DevnetAccount,
  type DevnetAddresses,
  devnetL1Chain,
  devnetL2Chain,
} from "./constants.js";
import { devnetHardhat } from "./hardhat.js";
import { type L1SeedResult, normalizePublicUrl, seedL1 } from "./seed-l1.js";
import { type DevnetB20Token, devnetL2InitialDate, type L2SeedResult, seedL2 } from "./seed-l2.js";

export interface DevnetChainInfo {
  chainId: number;
  /** JSON-RPC URL when the chain is served (startDevnet); absent for an in-process chain. */
  rpcUrl?: string;
  /** Block number right after seeding. */
  seededBlockNumber: number;
}

/** What a seeded devnet contains; every field is fixed by the seeding (see DEVNET_ADDRESSES, B20_SCHEDULE). */
export interface DevnetDeployment {
  l1: DevnetChainInfo;
  l2: DevnetChainInfo;
  /** The origin the collection's and the registry's URIs point to. */
  publicUrl: string;
  addresses: DevnetAddresses;
  /** `${publicUrl}/agents/info/`; tokenURI(t) = base + t. */
  collectionBaseUri: string;
  /** Agent t's URI: `${agentUriBase}${t}${agentUriSuffix}`. */
  agentUriBase: string;
  agentUriSuffix: string;
  /** DEVNET ONLY test accounts (public keys of the standard test mnemonic). */
  accounts: DevnetAccount[];
  b20Tokens: DevnetB20Token[];
}

/** Combines the two seeding results into the deployment description. */
export function devnetDeployment(
  l1: L1SeedResult,
  l2: L2SeedResult,
  publicUrl: string,
  rpcUrls: { l1?: string; l2?: string } = {},
): DevnetDeployment {
  const chain = (seed: { chainId: number; blockNumber: number }, rpcUrl: string | undefined): DevnetChainInfo => ({
    chainId: seed.chainId,
    ...(rpcUrl === undefined ? {} : { rpcUrl }),
    seededBlockNumber: seed.blockNumber,
  });
  return {
    l1: chain(l1, rpcUrls.l1),
    l2: chain(l2, rpcUrls.l2),
    publicUrl: normalizePublicUrl(publicUrl),
    addresses: {
      collection: l1.addresses.collection,
      identityRegistry: l1.addresses.identityRegistry,
      agentBindings: l1.addresses.agentBindings,
      usdToken: l2.addresses.usdToken,
      b20Factory: l2.addresses.b20Factory,
      multicall3: l1.addresses.multicall3,
      batchSettlement: l2.addresses.batchSettlement,
      erc3009DepositCollector: l2.addresses.erc3009DepositCollector,
      permit2: l2.addresses.permit2,
      uptoPermit2Proxy: l2.addresses.uptoPermit2Proxy,
    },
    collectionBaseUri: l1.collectionBaseUri,
    agentUriBase: l1.agentUriBase,
    agentUriSuffix: l1.agentUriSuffix,
    accounts: DEVNET_ACCOUNTS.map((a) => ({ ...a })),
    b20Tokens: l2.b20Tokens,
  };
}

type Log = (line: string) => void;

/* -------------------------------------------------------------------------- */
/*                                 In process                                 */
/* -------------------------------------------------------------------------- */

export interface InProcessChain {
  chainId: number;
  chain: Chain;
  /** The chain's EIP-1193 provider (Hardhat EDR, in process). */
  provider: EthereumProvider;
  /** `custom(provider, { retryCount: 0 })`: viem must not retry reverting calls on an in-process chain. */
  transport: CustomTransport;
  publicClient: PublicClient<CustomTransport, Chain>;
  /** A wallet client signing locally with devnet account `index` (0 = operator). */
  walletClient(index?: number): WalletClient<CustomTransport, Chain, PrivateKeyAccount>;
}

export interface InProcessDevnetOptions {
  /** Origin the collection's and registry's URIs point to (default http://127.0.0.1:8402). */
  publicUrl?: string;
  /** Deploy and seed both chains (default true). */
  seed?: boolean;
  log?: Log;
}

export interface UnseededInProcessDevnet {
  l1: InProcessChain;
  l2: InProcessChain;
  /** Closes both chains. */
  close(): Promise<void>;
}

export interface InProcessDevnet extends UnseededInProcessDevnet {
  deployment: DevnetDeployment;
  /** Wall-clock milliseconds of each chain's seeding (they run concurrently). */
  seedDurationMs: { l1: number; l2: number; total: number };
}

/** Wraps an in-process chain's provider in the viem clients tests use. */
export function inProcessChain(provider: EthereumProvider, chain: Chain): InProcessChain {
  const transport = custom(provider, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  return {
    chainId: chain.id,
    chain,
    provider,
    transport,
    publicClient,
    walletClient(index = 0) {
      const account = DEVNET_ACCOUNTS[index];
      if (account === undefined) throw new RangeError(`devnet accounts are 0..${DEVNET_ACCOUNTS.length - 1}`);
      return createWalletClient({
        account: privateKeyToAccount(account.privateKey),
        chain,
        transport,
        pollingInterval: 50,
      });
    },
  };
}

/**
 * A fresh pair of in-process chains (L1 31337, L2 31338), seeded unless `seed: false`. Each call makes new
 * chains; close them when done.
 */
export async function createInProcessDevnet(
  options?: InProcessDevnetOptions & { seed?: true },
): Promise<InProcessDevnet>;
export async function createInProcessDevnet(
  options: InProcessDevnetOptions & { seed: false },
): Promise<UnseededInProcessDevnet>;
export async function createInProcessDevnet(
  options: InProcessDevnetOptions = {},
): Promise<InProcessDevnet | UnseededInProcessDevnet> {
  const l1Chain = await openInProcessChain("l1");
  let l2Chain: OpenedChain | undefined;
  const close = async () => {
    await Promise.allSettled([l1Chain.close(), l2Chain?.close()]);
  };
  try {
    l2Chain = await openInProcessChain("l2");
    const { chain: l1 } = l1Chain;
    const { chain: l2 } = l2Chain;
    if (options.seed === false) return { l1, l2, close };
    const publicUrl = normalizePublicUrl(options.publicUrl ?? DEFAULT_PUBLIC_URL);
    const started = performance.now();
    const [s1, s2] = await Promise.all([
      seedL1(l1.publicClient, { publicUrl, ...(options.log ? { log: options.log } : {}) }),
      seedL2(l2.publicClient, options.log ? { log: options.log } : {}),
    ]);
    return {
      l1,
      l2,
      close,
      deployment: devnetDeployment(s1, s2, publicUrl),
      seedDurationMs: { l1: s1.durationMs, l2: s2.durationMs, total: Math.round(performance.now() - started) },
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A fresh, unseeded in-process chain of the devnet, and how to close it. */
export interface OpenedChain {
  chain: InProcessChain;
  close(): Promise<void>;
}

/**
 * A fresh in-process chain: L1, or L2 with its genesis early enough that its seeded B20 schedule ends near the wall
 * clock (devnetL2InitialDate).
 */
export async function openInProcessChain(network: "l1" | "l2"): Promise<OpenedChain> {
  const hre = await devnetHardhat();
  const connection = await hre.network.create(
    network === "l1" ? { network } : { network, override: { initialDate: devnetL2InitialDate() } },
  );
  return {
    chain: inProcessChain(connection.provider, network === "l1" ? devnetL1Chain : devnetL2Chain),
    close: () => connection.close(),
  };
}

/* -------------------------------------------------------------------------- */
/*                                   Served                                   */
/* -------------------------------------------------------------------------- */

export interface StartDevnetOptions {
  /** Interface to serve on (default 127.0.0.1). The servers accept transactions for unlocked test accounts. */
  host?: string;
  /** 0 picks a free port. Default 8545. */
  l1Port?: number;
  /** 0 picks a free port. Default 8546. */
  l2Port?: number;
  /** Origin the collection's and registry's URIs point to (default http://127.0.0.1:8402). */
  publicUrl?: string;
  /** How the caller picks other ports, said when one is taken (default: the devnet command's --l1-port/--l2-port). */
  portHint?: string;
  /**
   * Chain ids the chains answer with (default 31337 and 31338): a rehearsal of a mainnet configuration serves
   * chains that say they are Ethereum (1) and Base (8453).
   */
  chainIds?: { l1?: number; l2?: number };
  log?: Log;
}

export interface RunningDevnet {
  /** The seeded deployment, with `l1.rpcUrl` and `l2.rpcUrl` set. */
  deployment: DevnetDeployment & { l1: { rpcUrl: string }; l2: { rpcUrl: string } };
  seedDurationMs: { l1: number; l2: number; total: number };
  /** Stops both JSON-RPC servers. */
  close(): Promise<void>;
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** Fails with a clear message when `port` is taken (Hardhat's server would crash the process instead). */
async function assertPortFree(host: string, port: number, what: string, hint: string): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createNetServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        new Error(
          error.code === "EADDRINUSE"
            ? `${what}: port ${port} on ${host} is already in use (${hint})`
            : `${what}: cannot listen on ${host}:${port}: ${error.message}`,
          { cause: error },
        ),
      );
    });
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

function checkPort(port: number, what: string): void {
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`${what}: bad port ${port}`);
}

/**
 * Serves the two devnet chains' JSON-RPC with Hardhat's server (L1 on `l1Port`, L2 on `l2Port`) and seeds them
 * over HTTP. Resolves once both are seeded.
 */
export async function startDevnet(options: StartDevnetOptions = {}): Promise<RunningDevnet> {
  const host = options.host ?? DEFAULT_HOST;
  const l1Port = options.l1Port ?? DEFAULT_L1_PORT;
  const l2Port = options.l2Port ?? DEFAULT_L2_PORT;
  const publicUrl = normalizePublicUrl(options.publicUrl ?? DEFAULT_PUBLIC_URL);
  const log = options.log;
  checkPort(l1Port, "L1");
  checkPort(l2Port, "L2");
  if (l1Port !== 0 && l1Port === l2Port) throw new Error(`L1 and L2 need different ports (both ${l1Port})`);
  const hint = options.portHint ?? "pick other ports with --l1-port/--l2-port, or 0 for free ones";
  await assertPortFree(host, l1Port, "L1", hint);
  await assertPortFree(host, l2Port, "L2", hint);

  const hre = await devnetHardhat();
  const servers: { close(): Promise<void> }[] = [];
  const close = async () => {
    const results = await Promise.allSettled(servers.splice(0).map((s) => s.close()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  };
  try {
    const serve = async (network: "l1" | "l2", port: number, initialDate?: Date): Promise<string> => {
      const chainId = options.chainIds?.[network];
      const override = { ...(initialDate ? { initialDate } : {}), ...(chainId !== undefined ? { chainId } : {}) };
      const server = await hre.network.createServer({ network, override }, host, port);
      const address = await server.listen();
      servers.push(server);
      return `http://${urlHost(host)}:${address.port}`;
    };
    const l1Url = await serve("l1", l1Port);
    const l2Url = await serve("l2", l2Port, devnetL2InitialDate());
    log?.(`serving L1 on ${l1Url}, L2 on ${l2Url}; seeding...`);
    // Hardhat's server closes a connection after 5 s idle, and a request sent as it does so fails: such a request
    // is sent again (viem retries failures without an answer). Seeding sends signed transactions with explicit
    // nonces, so a repeated send cannot make a second transaction.
    const chainOf = (chain: typeof devnetL1Chain, id: number | undefined) =>
      id === undefined ? chain : { ...chain, id };
    const l1Client = createPublicClient({
      chain: chainOf(devnetL1Chain, options.chainIds?.l1),
      transport: http(l1Url, { retryCount: 2 }),
    });
    const l2Client = createPublicClient({
      chain: chainOf(devnetL2Chain, options.chainIds?.l2),
      transport: http(l2Url, { retryCount: 2 }),
    });
    const started = performance.now();
    const [s1, s2] = await Promise.all([
      seedL1(l1Client, { publicUrl, ...(log ? { log } : {}) }),
      seedL2(l2Client, log ? { log } : {}),
    ]);
    const deployment = devnetDeployment(s1, s2, publicUrl, { l1: l1Url, l2: l2Url }) as RunningDevnet["deployment"];
    return {
      deployment,
      seedDurationMs: { l1: s1.durationMs, l2: s2.durationMs, total: Math.round(performance.now() - started) },
      close,
    };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}

/** Address of devnet account `index` (0 = operator; token t belongs to account ((t - 1) mod 9) + 1). */
export function devnetAccountAddress(index: number): Address {
  const account = DEVNET_ACCOUNTS[index];
  if (account === undefined) throw new RangeError(`devnet accounts are 0..${DEVNET_ACCOUNTS.length - 1}`);
  return account.address;
}

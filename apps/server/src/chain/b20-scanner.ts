import {
  B20_FACTORY_ADDRESS,
  B20_VARIANTS,
  b20FactoryAbi,
  b20StablecoinTokenAbi,
  b20TokenAbi,
  b20VariantOf,
  decodeStablecoinEventParams,
  MULTICALL3_ADDRESS,
} from "@agent-tools/contracts";
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  getAddress,
  type Hex,
  type PublicClient,
  parseEventLogs,
} from "viem";
import { createSemaphore } from "../upstream/semaphore.js";

/** A token the factory created, as its `B20Created` event and its contract say. */
export interface B20TokenRecord {
  address: Address;
  variant: "ASSET" | "STABLECOIN" | `VARIANT_${number}`;
  name: string;
  symbol: string;
  decimals: number;
  /** ISO 4217 code of a stablecoin; "" for assets. */
  currency: string;
  blockNumber: bigint;
  /** Position of the creation event in its block (orders tokens created in the same block). */
  logIndex?: number;
  totalSupply?: bigint;
  initialized?: boolean;
}

export interface B20Scan {
  fromBlock: bigint;
  toBlock: bigint;
  /** Every token created in [fromBlock, toBlock], newest first. */
  created: B20TokenRecord[];
}

export interface B20Scanner {
  /** Tokens created in the last `blocksBack` blocks; a repeat scan only reads blocks it has not read yet. */
  scanCreated(blocksBack: number): Promise<B20Scan>;
  /** Supply and initialization of tokens, in one multicall. */
  readTokens(tokens: B20TokenRecord[]): Promise<B20TokenRecord[]>;
  /** One token by address: its creation record (searched back `maxBlocks`) and its live reads; null if none. */
  inspect(address: Address): Promise<B20TokenRecord | null>;
}

const VARIANTS = ["ASSET", "STABLECOIN"] as const;

export interface B20ScannerOptions {
  client: PublicClient;
  factory?: Address;
  /** Largest block range of one eth_getLogs call (RPC providers cap it; Base's public RPCs take 10,000). */
  maxLogRange?: bigint;
  /** eth_getLogs calls in flight at once. */
  concurrency?: number;
}

/**
 * Reads the B20 factory's `B20Created` logs in chunks, in parallel, and keeps what it read: the scanned block
 * range only ever grows, so a repeated scan fetches only the new blocks (and older ones if asked further back).
 */
export function createB20Scanner(options: B20ScannerOptions): B20Scanner {
  const { client } = options;
  const factory = options.factory ?? B20_FACTORY_ADDRESS;
  const maxLogRange = options.maxLogRange ?? 10_000n;
  const limit = createSemaphore(options.concurrency ?? 8);
  const known = new Map<Address, B20TokenRecord>();
  let scannedFrom: bigint | undefined;
  let scannedTo: bigint | undefined;

  async function readLogs(from: bigint, to: bigint): Promise<void> {
    if (from > to) return;
    const chunks: [bigint, bigint][] = [];
    for (let start = from; start <= to; start += maxLogRange) {
      chunks.push([start, start + maxLogRange - 1n < to ? start + maxLogRange - 1n : to]);
    }
    const results = await Promise.all(
      chunks.map(([fromBlock, toBlock]) =>
        limit(() =>
          client.getLogs({
            address: factory,
            event: b20FactoryAbi.find((item) => item.type === "event" && item.name === "B20Created") as never,
            fromBlock,
            toBlock,
          }),
        ),
      ),
    );
    for (const event of parseEventLogs({ abi: b20FactoryAbi, logs: results.flat(), eventName: "B20Created" })) {
      const { token, variant, name, symbol, decimals, variantEventParams } = event.args;
      const address = getAddress(token);
      known.set(address, {
        address,
        variant: VARIANTS[variant] ?? `VARIANT_${variant}`,
        name,
        symbol,
        decimals,
        // The stablecoin's currency is in the event (abi.encode(B20StablecoinEventParams)); assets have none.
        currency:
          variant === B20_VARIANTS.STABLECOIN ? (decodeStablecoinEventParams(variantEventParams as Hex) ?? "") : "",
        blockNumber: event.blockNumber,
        logIndex: event.logIndex,
      });
    }
  }

  async function scan(blocksBack: number): Promise<B20Scan> {
    const toBlock = await client.getBlockNumber({ cacheTime: 0 });
    const fromBlock = toBlock >= BigInt(blocksBack) ? toBlock - BigInt(blocksBack) + 1n : 0n;
    if (scannedFrom === undefined || scannedTo === undefined) {
      await readLogs(fromBlock, toBlock);
      scannedFrom = fromBlock;
      scannedTo = toBlock;
    } else {
      await Promise.all([readLogs(scannedTo + 1n, toBlock), readLogs(fromBlock, scannedFrom - 1n)]);
      scannedFrom = fromBlock < scannedFrom ? fromBlock : scannedFrom;
      scannedTo = toBlock > scannedTo ? toBlock : scannedTo;
    }
    const created = [...known.values()]
      .filter((t) => t.blockNumber >= fromBlock && t.blockNumber <= toBlock)
      .sort((a, b) =>
        a.blockNumber === b.blockNumber
          ? (b.logIndex ?? 0) - (a.logIndex ?? 0)
          : a.blockNumber > b.blockNumber
            ? -1
            : 1,
      );
    return { fromBlock, toBlock, created };
  }

  /**
   * One scan at a time: concurrent requests would otherwise each read the same unread blocks (a cold scanner under
   * load reads the whole window once per request) and could shrink the recorded range after a wider scan.
   */
  let queue: Promise<unknown> = Promise.resolve();

  return {
    scanCreated(blocksBack) {
      const run = queue.then(() => scan(blocksBack));
      queue = run.catch(() => undefined);
      return run;
    },

    async readTokens(tokens) {
      if (tokens.length === 0) return [];
      // Whether a token's creation completed is the factory's to say (IB20Factory.isB20Initialized): tokens have
      // no such function.
      const calls = tokens.flatMap((t) => [
        { address: t.address, abi: b20TokenAbi, functionName: "totalSupply" } as const,
        { address: factory, abi: b20FactoryAbi, functionName: "isB20Initialized", args: [t.address] } as const,
      ]);
      const results = await client.multicall({
        contracts: calls,
        multicallAddress: MULTICALL3_ADDRESS,
        allowFailure: true,
      });
      return tokens.map((t, i) => {
        const supply = results[2 * i]!;
        const initialized = results[2 * i + 1]!;
        return {
          ...t,
          totalSupply: supply.status === "success" ? (supply.result as bigint) : 0n,
          initialized: initialized.status === "success" ? Boolean(initialized.result) : false,
        };
      });
    },

    async inspect(address) {
      const checksummed = getAddress(address);
      let record = known.get(checksummed);
      if (!record) {
        // A revert (or no code) means "not a B20 token"; a chain that cannot be read is an outage, not an answer.
        const isB20 = await client
          .readContract({ address: factory, abi: b20FactoryAbi, functionName: "isB20Initialized", args: [checksummed] })
          .catch((error: unknown) => {
            const reverted =
              error instanceof BaseError &&
              error.walk(
                (e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError,
              );
            if (reverted) return false;
            throw error instanceof BaseError && error.cause instanceof BaseError ? error.cause : error;
          });
        if (!isB20) return null;
        // Read the token itself: name, symbol, decimals, and the currency of a stablecoin, the only variant that
        // has currency() (IB20Stablecoin); the variant is byte 10 of the address.
        const variant = b20VariantOf(checksummed) ?? -1;
        const stablecoin = variant === B20_VARIANTS.STABLECOIN;
        const token = { address: checksummed, abi: b20StablecoinTokenAbi } as const;
        const [name, symbol, decimals] = await client.multicall({
          contracts: [
            { ...token, functionName: "name" },
            { ...token, functionName: "symbol" },
            { ...token, functionName: "decimals" },
          ],
          multicallAddress: MULTICALL3_ADDRESS,
          allowFailure: false,
        });
        const currency = stablecoin ? await client.readContract({ ...token, functionName: "currency" }) : "";
        record = {
          address: checksummed,
          variant: VARIANTS[variant] ?? `VARIANT_${variant}`,
          name,
          symbol,
          decimals,
          currency,
          blockNumber: 0n,
        };
      }
      const [read] = await this.readTokens([record]);
      return read ?? null;
    },
  };
}

import {
  agentCollectionAbi,
  type Clearance,
  computeRarityTable,
  decodeTokenData,
  MAX_SUPPLY,
  type RarityEntry,
  type RarityTable,
} from "@agent-tools/contracts";
import { type Address, type Log, type PublicClient, parseEventLogs, zeroAddress } from "viem";

/** What the service knows of one token, as read from chain. */
export interface IndexedToken {
  tokenId: number;
  owner: Address;
  revealed: boolean;
  /** Trait labels keyed by trait type name; empty while unrevealed. */
  traits: Record<string, string>;
  /** The ERC-7496 `clearance` trait as stored on chain. */
  clearance: Clearance;
  rarity: RarityEntry;
}

/** Logs of other contracts the index was asked to watch (`watch`), for readers that cache what they read. */
export type LogListener = (logs: Log[], toBlock: bigint) => void;

export interface CollectionIndex {
  /**
   * Brings the index up to the chain's latest block: the first call loads the whole collection, later calls
   * apply the contract's events since the last sync (Transfer, Revealed, ERC-7496 trait updates). Concurrent
   * callers share one sync.
   */
  sync(): Promise<void>;
  /**
   * Resolves at once when the snapshot is at most `maxStalenessMs` old (no chain call), else after one sync,
   * shared by every caller waiting for it. What requests call: with a follower running, they never wait.
   */
  fresh(): Promise<void>;
  /**
   * Follows the chain in the background: a sync every `intervalMs` (default half the staleness bound), each
   * starting when the last ends. Returns the stop. One follower per process is enough.
   */
  follow(options?: { intervalMs?: number; onError?: (error: unknown) => void }): () => void;
  /** Calls `listener` after each sync that moved the snapshot to a new block; returns the unsubscribe. */
  onSync(listener: (block: bigint) => void): () => void;
  /** Delivers, at each sync, the logs of `address` (another contract) in the blocks it covered. */
  watch(address: Address, listener: LogListener): void;
  /** The token as of the last sync; undefined when it does not exist (never minted). */
  token(tokenId: number): IndexedToken | undefined;
  /** The rarity table of the collection as of the last sync. */
  rarityTable(): RarityTable;
  /** Block number of the last sync. */
  syncedBlock(): bigint;
}

export interface CollectionIndexOptions {
  client: PublicClient;
  collection: Address;
  /** Tokens read per call when loading (the contract returns ranges). */
  pageSize?: number;
  /** Most blocks asked for in one eth_getLogs call (providers cap the range). */
  maxLogRange?: bigint;
  /** Oldest a snapshot may be when a request reads it, in milliseconds (default 2,000). */
  maxStalenessMs?: number;
  /** The clock, in milliseconds (tests move it). */
  now?: () => number;
}

interface TraitSchema {
  names: string[];
  labels: string[][];
}

/** Keeps the collection (owners, reveal state, traits, clearance, rarity) in memory, current with the chain. */
export function createCollectionIndex(options: CollectionIndexOptions): CollectionIndex {
  const { client, collection } = options;
  const pageSize = options.pageSize ?? 1000;
  const maxLogRange = options.maxLogRange ?? 10_000n;
  const maxStalenessMs = options.maxStalenessMs ?? 2000;
  const now = options.now ?? Date.now;
  const contract = { address: collection, abi: agentCollectionAbi } as const;

  const owners: Address[] = new Array(MAX_SUPPLY).fill(zeroAddress);
  const words: bigint[] = new Array(MAX_SUPPLY).fill(0n);
  let schema: TraitSchema = { names: [], labels: [] };
  let table: RarityTable | undefined;
  const cache = new Map<number, IndexedToken>();
  let lastBlock = -1n;
  /** When the block number of the snapshot was read: the snapshot is the chain as of then. */
  let syncedAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const syncListeners = new Set<(block: bigint) => void>();
  const watched = new Map<string, LogListener[]>();

  async function readSchema(blockNumber: bigint): Promise<TraitSchema> {
    const names = [...(await client.readContract({ ...contract, functionName: "traitTypes", blockNumber }))];
    const labels = await Promise.all(
      names.map(async (_, t) => [
        ...(await client.readContract({ ...contract, functionName: "traitLabels", args: [t], blockNumber })),
      ]),
    );
    return { names, labels };
  }

  async function readRange(from: number, count: number, blockNumber: bigint): Promise<void> {
    const [ownerPage, dataPage] = await Promise.all([
      client.readContract({
        ...contract,
        functionName: "ownersRange",
        args: [BigInt(from), BigInt(count)],
        blockNumber,
      }),
      client.readContract({
        ...contract,
        functionName: "tokenDataRange",
        args: [BigInt(from), BigInt(count)],
        blockNumber,
      }),
    ]);
    for (let i = 0; i < count; i++) {
      owners[from - 1 + i] = ownerPage[i]!;
      words[from - 1 + i] = dataPage[i]!;
    }
  }

  function recomputeRarity(): void {
    const traits = words.map((word) => {
      const data = decodeTokenData(word, schema.names.length);
      return data.revealed ? data.traits : null;
    });
    table = computeRarityTable(traits);
    cache.clear();
  }

  async function loadAll(blockNumber: bigint): Promise<void> {
    schema = await readSchema(blockNumber);
    const pages: Promise<void>[] = [];
    for (let from = 1; from <= MAX_SUPPLY; from += pageSize) {
      pages.push(readRange(from, Math.min(pageSize, MAX_SUPPLY - from + 1), blockNumber));
    }
    await Promise.all(pages);
    recomputeRarity();
  }

  /** The logs of the collection and of every watched contract, in one eth_getLogs call per range. */
  async function fetchLogs(fromBlock: bigint, toBlock: bigint): Promise<Log[]> {
    const logs: Log[] = [];
    const addresses = [collection, ...([...watched.keys()] as Address[])];
    for (let start = fromBlock; start <= toBlock; start += maxLogRange) {
      const end = start + maxLogRange - 1n < toBlock ? start + maxLogRange - 1n : toBlock;
      logs.push(...(await client.getLogs({ address: addresses, fromBlock: start, toBlock: end })));
    }
    return logs;
  }

  /** Hands each watched contract's logs to its listeners. */
  function deliverWatched(logs: Log[], toBlock: bigint): void {
    for (const [address, listeners] of watched) {
      const mine = logs.filter((log) => log.address.toLowerCase() === address);
      if (mine.length === 0) continue;
      for (const listener of listeners) listener(mine, toBlock);
    }
  }

  /** Applies the collection's events of (lastBlock, toBlock]. */
  async function applyEvents(toBlock: bigint): Promise<void> {
    const logs = await fetchLogs(lastBlock + 1n, toBlock);
    deliverWatched(logs, toBlock);
    const own = logs.filter((log) => log.address.toLowerCase() === collection.toLowerCase());
    const events = parseEventLogs({ abi: agentCollectionAbi, logs: own });
    if (events.length === 0) return;
    const reread = new Set<number>();
    let revealedAny = false;
    let schemaChanged = false;
    const inCollection = (id: bigint) => id >= 1n && id <= BigInt(MAX_SUPPLY);
    for (const event of events) {
      switch (event.eventName) {
        case "Transfer":
          if (inCollection(event.args.tokenId)) owners[Number(event.args.tokenId) - 1] = event.args.to;
          cache.delete(Number(event.args.tokenId));
          break;
        case "Revealed":
          revealedAny = true;
          reread.add(Number(event.args.tokenId));
          break;
        case "TraitUpdated":
          reread.add(Number(event.args.tokenId));
          break;
        case "TraitUpdatedList":
        case "TraitUpdatedListUniformValue":
          for (const id of event.args.tokenIds) reread.add(Number(id));
          break;
        case "TraitUpdatedRange":
        case "TraitUpdatedRangeUniformValue":
          for (let id = event.args.fromTokenId; id <= event.args.toTokenId && inCollection(id); id++)
            reread.add(Number(id));
          break;
        case "TraitSchemaDefined":
          schemaChanged = true;
          break;
      }
    }
    if (schemaChanged) schema = await readSchema(toBlock);
    const ids = [...reread].filter((id) => id >= 1 && id <= MAX_SUPPLY);
    const fresh = await Promise.all(
      ids.map((id) =>
        client.readContract({
          ...contract,
          functionName: "tokenDataRange",
          args: [BigInt(id), 1n],
          blockNumber: toBlock,
        }),
      ),
    );
    ids.forEach((id, i) => {
      words[id - 1] = fresh[i]![0]!;
      cache.delete(id);
    });
    if (revealedAny || schemaChanged) recomputeRarity();
  }

  async function runSync(): Promise<void> {
    const readAt = now();
    const latest = await client.getBlockNumber({ cacheTime: 0 });
    if (lastBlock < 0n) {
      await loadAll(latest);
    } else if (latest > lastBlock) {
      await applyEvents(latest);
    } else {
      syncedAt = readAt;
      return;
    }
    lastBlock = latest;
    syncedAt = readAt;
    for (const listener of syncListeners) listener(latest);
  }

  const index: CollectionIndex = {
    fresh() {
      if (lastBlock >= 0n && now() - syncedAt <= maxStalenessMs) return Promise.resolve();
      // One sync for every waiter: a sync already under way is as fresh as any.
      return inFlight ?? index.sync();
    },
    follow({ intervalMs = Math.max(50, Math.floor(maxStalenessMs / 2)), onError } = {}) {
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      const tick = () => {
        timer = setTimeout(() => {
          index
            .sync()
            .catch((error: unknown) => onError?.(error))
            .finally(() => {
              if (!stopped) tick();
            });
        }, intervalMs);
        timer.unref();
      };
      tick();
      return () => {
        stopped = true;
        clearTimeout(timer);
      };
    },
    onSync(listener) {
      syncListeners.add(listener);
      return () => syncListeners.delete(listener);
    },
    watch(address, listener) {
      const key = address.toLowerCase();
      watched.set(key, [...(watched.get(key) ?? []), listener]);
    },
    sync() {
      if (!inFlight) {
        inFlight = runSync().finally(() => {
          inFlight = undefined;
        });
        return inFlight;
      }
      // A sync already running may have read the block number before the caller's change was mined:
      // callers arriving now share one more sync after it, so each sees at least the chain as of its call.
      queued ??= inFlight
        .catch(() => undefined)
        .then(() => {
          queued = undefined;
          return index.sync();
        });
      return queued;
    },
    token(tokenId) {
      if (!table) throw new Error("collection index used before its first sync");
      if (tokenId < 1 || tokenId > MAX_SUPPLY || owners[tokenId - 1] === zeroAddress) return undefined;
      let token = cache.get(tokenId);
      if (!token) {
        const data = decodeTokenData(words[tokenId - 1]!, schema.names.length);
        token = {
          tokenId,
          owner: owners[tokenId - 1]!,
          revealed: data.revealed,
          traits: Object.fromEntries(
            data.traits.map((value, t) => [schema.names[t]!, schema.labels[t]?.[value] ?? `#${value}`]),
          ),
          clearance: data.clearance,
          rarity: table.entries[tokenId - 1]!,
        };
        cache.set(tokenId, token);
      }
      return token;
    },
    rarityTable() {
      if (!table) throw new Error("collection index used before its first sync");
      return table;
    },
    syncedBlock: () => lastBlock,
  };
  return index;
}

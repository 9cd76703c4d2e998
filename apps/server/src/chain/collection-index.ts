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

export interface CollectionIndex {
  /**
   * Brings the index up to the chain's latest block: the first call loads the whole collection, later calls
   * apply the contract's events since the last sync (Transfer, Revealed, ERC-7496 trait updates). Concurrent
   * callers share one sync.
   */
  sync(): Promise<void>;
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
  const contract = { address: collection, abi: agentCollectionAbi } as const;

  const owners: Address[] = new Array(MAX_SUPPLY).fill(zeroAddress);
  const words: bigint[] = new Array(MAX_SUPPLY).fill(0n);
  let schema: TraitSchema = { names: [], labels: [] };
  let table: RarityTable | undefined;
  const cache = new Map<number, IndexedToken>();
  let lastBlock = -1n;
  let inFlight: Promise<void> | undefined;
  let queued: Promise<void> | undefined;

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

  async function fetchLogs(fromBlock: bigint, toBlock: bigint): Promise<Log[]> {
    const logs: Log[] = [];
    for (let start = fromBlock; start <= toBlock; start += maxLogRange) {
      const end = start + maxLogRange - 1n < toBlock ? start + maxLogRange - 1n : toBlock;
      logs.push(...(await client.getLogs({ address: collection, fromBlock: start, toBlock: end })));
    }
    return logs;
  }

  /** Applies the collection's events of (lastBlock, toBlock]; returns whether anything changed. */
  async function applyEvents(toBlock: bigint): Promise<void> {
    const events = parseEventLogs({ abi: agentCollectionAbi, logs: await fetchLogs(lastBlock + 1n, toBlock) });
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
    const latest = await client.getBlockNumber({ cacheTime: 0 });
    if (lastBlock < 0n) {
      await loadAll(latest);
    } else if (latest > lastBlock) {
      await applyEvents(latest);
    } else {
      return;
    }
    lastBlock = latest;
  }

  return {
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
          return this.sync();
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
}

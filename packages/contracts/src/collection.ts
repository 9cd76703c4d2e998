/**
 * The collection's trait schema, the fixed-seed trait generator the devnet reveals with, and rarity scoring
 * (information content, as OpenRarity does) with tiers by rank. Pure functions: the devnet uses them to seed
 * and to set each token's initial clearance; the server uses the scoring on traits it reads from chain.
 */

import type { Clearance } from "./clearance.js";

/** Number of tokens of the collection (ids 1..6666). */
export const COLLECTION_SIZE = 6666;
/** Tokens above this id stay unrevealed on the devnet. */
export const DEVNET_LAST_REVEALED = 6000;

/** Trait types in packing order (byte t of the packed word), with labels and generation weights. */
export const traitSchema = [
  {
    name: "Class",
    values: [
      ["Scout", 22],
      ["Cartographer", 18],
      ["Courier", 16],
      ["Analyst", 14],
      ["Broker", 12],
      ["Sentinel", 9],
      ["Oracle", 6],
      ["Archivist", 3],
    ],
  },
  {
    name: "Core",
    values: [
      ["Copper", 26],
      ["Graphite", 22],
      ["Cobalt", 18],
      ["Obsidian", 14],
      ["Titanium", 11],
      ["Quartz", 7],
      ["Void", 2],
    ],
  },
  {
    name: "Signal",
    values: [
      ["Low-band", 30],
      ["Mid-band", 27],
      ["High-band", 20],
      ["Encrypted", 14],
      ["Quantum", 7],
      ["Silent", 2],
    ],
  },
  {
    name: "Mission",
    values: [
      ["Recon", 20],
      ["Liquidity", 17],
      ["Mint Watch", 16],
      ["Arbitrage", 14],
      ["Escort", 12],
      ["Audit", 10],
      ["Diplomacy", 8],
      ["Deep Cover", 3],
    ],
  },
  {
    name: "Visor",
    values: [
      ["Clear", 24],
      ["Amber", 18],
      ["Mirror", 15],
      ["Cyan", 13],
      ["Visor Off", 10],
      ["Scarlet", 8],
      ["Holo", 6],
      ["Split", 4],
      ["Gold", 1.5],
      ["Eclipse", 0.5],
    ],
  },
  {
    name: "Aura",
    values: [
      ["None", 55],
      ["Static", 20],
      ["Ember", 13],
      ["Frost", 8],
      ["Prismatic", 4],
    ],
  },
] as const satisfies readonly { name: string; values: readonly (readonly [string, number])[] }[];

export const traitTypeNames: string[] = traitSchema.map((t) => t.name);
export const traitTypeLabels: string[][] = traitSchema.map((t) => t.values.map(([label]) => label));

/** sfc32: a small, fast, well-distributed PRNG; the same seed always gives the same collection. */
function sfc32(a: number, b: number, c: number, d: number): () => number {
  return () => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

/** Fixed seed of the devnet collection. */
export const DEVNET_TRAIT_SEED = [0x61676e74, 0x746f6f6c, 0x732d6765, 0x6e657369] as const;

/** Trait value indexes of every token 1..COLLECTION_SIZE (index 0 of the result is token 1), from the fixed seed. */
export function generateCollectionTraits(
  seed: readonly [number, number, number, number] = DEVNET_TRAIT_SEED,
): number[][] {
  const random = sfc32(...seed);
  for (let i = 0; i < 15; i++) random(); // let the state mix before use
  const all: number[][] = [];
  for (let tokenId = 1; tokenId <= COLLECTION_SIZE; tokenId++) {
    all.push(
      traitSchema.map((type) => {
        const total = type.values.reduce((sum, [, weight]) => sum + weight, 0);
        let pick = random() * total;
        for (let v = 0; v < type.values.length; v++) {
          pick -= type.values[v]![1];
          if (pick < 0) return v;
        }
        return type.values.length - 1;
      }),
    );
  }
  return all;
}

export type RarityTierName = "Legendary" | "Epic" | "Rare" | "Uncommon" | "Common" | "Unrevealed";

/** Tier shares by rank, best first: top 1% Legendary, next 4% Epic, next 15% Rare, next 30% Uncommon, rest Common. */
export const tierShares = [
  ["Legendary", 0.01],
  ["Epic", 0.04],
  ["Rare", 0.15],
  ["Uncommon", 0.3],
  ["Common", 0.5],
] as const;

export interface RarityEntry {
  tokenId: number;
  tier: RarityTierName;
  /** Sum over the token's traits of -log2(frequency of its value); null while unrevealed. */
  score: number | null;
  /** 1 is the rarest; null while unrevealed. */
  rank: number | null;
}

export interface RarityTable {
  /** Entry of token t at index t - 1. */
  entries: RarityEntry[];
  /** Number of ranked (revealed) tokens. */
  ranked: number;
}

/**
 * Scores every revealed token by information content over the revealed population and assigns tiers by rank.
 * `traits[t - 1]` holds token t's value indexes, or null while unrevealed. Ties rank by token id.
 */
export function computeRarityTable(traits: readonly (readonly number[] | null)[]): RarityTable {
  const revealed = traits.filter((t): t is readonly number[] => t !== null);
  const population = revealed.length;
  const counts = new Map<string, number>();
  for (const values of revealed) {
    values.forEach((value, type) => {
      const key = `${type}:${value}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    });
  }
  const entries: RarityEntry[] = traits.map((values, index) => {
    if (values === null) return { tokenId: index + 1, tier: "Unrevealed", score: null, rank: null };
    let score = 0;
    values.forEach((value, type) => {
      score -= Math.log2(counts.get(`${type}:${value}`)! / population);
    });
    return { tokenId: index + 1, tier: "Common", score: Math.round(score * 1e4) / 1e4, rank: null };
  });
  const ranked = entries.filter((e) => e.score !== null).sort((a, b) => b.score! - a.score! || a.tokenId - b.tokenId);
  let cumulative = 0;
  const cutoffs = tierShares.map(([tier, share]) => {
    cumulative += share;
    return { tier, upTo: Math.round(cumulative * population) };
  });
  ranked.forEach((entry, i) => {
    entry.rank = i + 1;
    entry.tier = cutoffs.find((c) => entry.rank! <= c.upTo)?.tier ?? "Common";
  });
  return { entries, ranked: population };
}

/** Clearance a token gets at reveal from its tier: Elite for Epic and Legendary, Rare for Rare, else Holder. */
export function clearanceForTier(tier: RarityTierName): Clearance {
  if (tier === "Legendary" || tier === "Epic") return "Elite";
  if (tier === "Rare") return "Rare";
  return "Holder";
}

/** Devnet owner of token t: account ((t - 1) mod 9) + 1 of the test mnemonic. */
export function devnetOwnerIndex(tokenId: number): number {
  return ((tokenId - 1) % 9) + 1;
}

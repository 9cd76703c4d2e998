import { describe, expect, it } from "vitest";
import {
  COLLECTION_SIZE,
  clearanceForTier,
  computeRarityTable,
  DEVNET_LAST_REVEALED,
  devnetOwnerIndex,
  generateCollectionTraits,
  traitSchema,
} from "../src/index.js";

const traits = generateCollectionTraits();
const devnetTraits = traits.map((t, i) => (i + 1 <= DEVNET_LAST_REVEALED ? t : null));

describe("generateCollectionTraits", () => {
  it("gives every token one valid value per trait type, the same on every run", () => {
    expect(traits).toHaveLength(COLLECTION_SIZE);
    for (const values of traits) {
      expect(values).toHaveLength(traitSchema.length);
      values.forEach((v, t) => {
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThan(traitSchema[t]!.values.length);
      });
    }
    expect(generateCollectionTraits()).toEqual(traits);
  });

  it("follows the weights: the commonest value of each type is far more frequent than the rarest", () => {
    traitSchema.forEach((type, t) => {
      const counts = type.values.map((_, v) => traits.filter((x) => x[t] === v).length);
      expect(counts[0]!).toBeGreaterThan(counts.at(-1)! * 3);
    });
  });
});

describe("computeRarityTable", () => {
  const table = computeRarityTable(devnetTraits);

  it("has an entry per token and ranks the revealed ones", () => {
    expect(table.entries).toHaveLength(COLLECTION_SIZE);
    expect(table.ranked).toBe(DEVNET_LAST_REVEALED);
    const ranks = table.entries.filter((e) => e.rank !== null).map((e) => e.rank!);
    expect(new Set(ranks).size).toBe(DEVNET_LAST_REVEALED);
    expect(Math.min(...ranks)).toBe(1);
    expect(Math.max(...ranks)).toBe(DEVNET_LAST_REVEALED);
  });

  it("splits tiers by rank: 1% Legendary, 4% Epic, 15% Rare, 30% Uncommon, 50% Common", () => {
    const count = (tier: string) => table.entries.filter((e) => e.tier === tier).length;
    expect(count("Legendary")).toBe(60);
    expect(count("Epic")).toBe(240);
    expect(count("Rare")).toBe(900);
    expect(count("Uncommon")).toBe(1800);
    expect(count("Common")).toBe(3000);
    expect(count("Unrevealed")).toBe(COLLECTION_SIZE - DEVNET_LAST_REVEALED);
  });

  it("scores by information content: a higher score never ranks below a lower one", () => {
    const ranked = table.entries.filter((e) => e.rank !== null).sort((a, b) => a.rank! - b.rank!);
    for (let i = 1; i < ranked.length; i++) expect(ranked[i - 1]!.score!).toBeGreaterThanOrEqual(ranked[i]!.score!);
  });

  it("computes -log2 frequency sums", () => {
    // Two tokens share trait value 0 of one type, one has value 1: frequencies 2/3 and 1/3.
    const small = computeRarityTable([[0], [0], [1], null]);
    expect(small.entries[0]!.score).toBeCloseTo(-Math.log2(2 / 3), 4);
    expect(small.entries[2]!.score).toBeCloseTo(-Math.log2(1 / 3), 4);
    expect(small.entries[2]!.rank).toBe(1);
    expect(small.entries[3]).toMatchObject({ tier: "Unrevealed", score: null, rank: null });
  });
});

describe("devnet helpers", () => {
  it("maps tiers to clearance and tokens to owners", () => {
    expect(clearanceForTier("Legendary")).toBe("Elite");
    expect(clearanceForTier("Epic")).toBe("Elite");
    expect(clearanceForTier("Rare")).toBe("Rare");
    expect(clearanceForTier("Uncommon")).toBe("Holder");
    expect(clearanceForTier("Unrevealed")).toBe("Holder");
    expect([1, 9, 10, 6666].map(devnetOwnerIndex)).toEqual([1, 9, 1, 6]);
  });
});

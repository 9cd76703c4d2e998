import { type Clearance, clearanceForTier, computeRarityTable, traitSchema } from "@agent-tools/contracts";
import { intelResponseSchema } from "@agent-tools/schema";
import type { Address } from "viem";
import { describe, expect, it } from "vitest";
import type { CollectionIndex, IndexedToken } from "../src/chain/collection-index.js";
import { ServiceError } from "../src/errors/service-error.js";
import { intelTool } from "../src/tools/intel.js";
import type { ToolContext } from "../src/tools/types.js";

const CALLER: Address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const OWNER: Address = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

/** Value index of a label within a trait type (fails loudly on a typo). */
function v(trait: (typeof traitSchema)[number]["name"], label: string): number {
  const type = traitSchema.find((t) => t.name === trait)!;
  const index = type.values.findIndex(([l]) => l === label);
  if (index < 0) throw new Error(`no ${trait} ${label}`);
  return index;
}

type Traits = Partial<Record<(typeof traitSchema)[number]["name"], string>>;
const BASE: Required<Traits> = {
  Class: "Scout",
  Core: "Copper",
  Signal: "Low-band",
  Mission: "Recon",
  Visor: "Clear",
  Aura: "None",
};
const indexes = (traits: Traits) => traitSchema.map((t) => v(t.name, { ...BASE, ...traits }[t.name]));

/**
 * A hand-made collection of 100 revealed agents (ids 1..100) and 2 unrevealed ones (101, 102).
 * Holders of the rare values, by construction:
 *   Visor Eclipse: 1 (token 1)           Core Void: 2 (tokens 1, 2)       Class Oracle: 3 (tokens 1-3)
 *   Aura Prismatic: 3 (tokens 1, 2, 6)   Visor Gold: 3 (tokens 2-4)       Signal Quantum: 4 (tokens 1-4)
 *   Mission Arbitrage: 5 (tokens 1-5)
 * Tokens 7..100 vary Class/Core/Mission among common values so the ranking has a long tail.
 */
const REVEALED: Traits[] = [
  {
    Class: "Oracle",
    Core: "Void",
    Signal: "Quantum",
    Mission: "Arbitrage",
    Visor: "Eclipse",
    Aura: "Prismatic",
  },
  { Class: "Oracle", Core: "Void", Signal: "Quantum", Mission: "Arbitrage", Visor: "Gold", Aura: "Prismatic" },
  { Class: "Oracle", Signal: "Quantum", Mission: "Arbitrage", Visor: "Gold" },
  { Signal: "Quantum", Mission: "Arbitrage", Visor: "Gold" },
  { Mission: "Arbitrage" },
  { Aura: "Prismatic" },
  ...Array.from({ length: 94 }, (_, i): Traits => {
    const id = i + 7;
    return {
      Class: id % 3 === 0 ? "Cartographer" : "Scout",
      Core: id % 4 === 0 ? "Graphite" : "Copper",
      Mission: id % 5 === 0 ? "Mint Watch" : "Recon",
    };
  }),
];
const UNREVEALED_IDS = [101, 102];

/** Holders of a trait value among the revealed agents, counted straight from the constructed list. */
function holders(trait: keyof Traits, label: string): number {
  return REVEALED.filter((t) => ({ ...BASE, ...t })[trait] === label).length;
}

interface FakeIndex extends CollectionIndex {
  tokenCalls: number;
}

/** A CollectionIndex over the hand-made tokens; `clearances` overrides the clearance derived from the tier. */
function fakeIndex(
  revealed: Traits[] = REVEALED,
  unrevealed: number[] = UNREVEALED_IDS,
  clearances: Record<number, Clearance> = {},
): FakeIndex {
  const size = revealed.length + unrevealed.length;
  const table = computeRarityTable(
    Array.from({ length: size }, (_, i) => (i < revealed.length ? indexes(revealed[i]!) : null)),
  );
  const index: FakeIndex = {
    tokenCalls: 0,
    async sync() {},
    async fresh() {},
    follow: () => () => {},
    onSync: () => () => {},
    watch() {},
    token(tokenId) {
      index.tokenCalls++;
      if (tokenId < 1 || tokenId > size) return undefined;
      const rarity = table.entries[tokenId - 1]!;
      const traits = rarity.score === null ? {} : { ...BASE, ...revealed[tokenId - 1] };
      return {
        tokenId,
        owner: OWNER,
        revealed: rarity.score !== null,
        traits: traits as Record<string, string>,
        clearance: clearances[tokenId] ?? clearanceForTier(rarity.tier),
        rarity,
      } satisfies IndexedToken;
    },
    rarityTable: () => table,
    syncedBlock: () => 1n,
  };
  return index;
}

function contextFor(collection: CollectionIndex, tokenId: number, caller?: Address): ToolContext {
  return {
    token: collection.token(tokenId)!,
    collection,
    now: () => new Date("2026-11-22T12:00:00.000Z"),
    ...(caller ? { caller } : {}),
  };
}

async function intel(tokenId: number, options: { caller?: Address; collection?: CollectionIndex } = {}) {
  const collection = options.collection ?? fakeIndex();
  return intelTool({ tokenId }, contextFor(collection, tokenId, options.caller));
}

/** The sentence of the brief that states the clearance and the tools it opens. */
function clearanceClause(brief: string): { clearance: string; opened: string[] } {
  const match = /(Holder|Rare|Elite) clearance opens (?:every tool: )?([^;.]+)/.exec(brief);
  if (!match) throw new Error(`no clearance clause in: ${brief}`);
  return { clearance: match[1]!, opened: match[2]!.split(/, | and /) };
}

describe("intelTool on a revealed agent", () => {
  it("answers every field of the spec, and the answer parses as the /intel response", async () => {
    const collection = fakeIndex();
    const token = collection.token(1)!;
    const out = await intel(1, { collection, caller: CALLER });
    expect(intelResponseSchema.parse(out)).toEqual(out);
    expect(Object.keys(out).sort()).toEqual(
      ["brief", "caller", "edition", "name", "rarity_score", "rarity_tier", "tokenId", "traits"].sort(),
    );
    expect(out.tokenId).toBe(1);
    expect(out.name).toBe("Agent #1");
    expect(out.edition).toBe("Genesis");
    expect(out.rarity_tier).toBe("Legendary");
    expect(out.rarity_score).toBe(token.rarity.score);
    expect(out.traits).toEqual({
      Class: "Oracle",
      Core: "Void",
      Signal: "Quantum",
      Mission: "Arbitrage",
      Visor: "Eclipse",
      Aura: "Prismatic",
    });
    expect(out.caller).toBe(CALLER);
  });

  it("echoes caller only when the call was signed in", async () => {
    const anonymous = await intel(7);
    expect(anonymous).not.toHaveProperty("caller");
    expect(intelResponseSchema.parse(anonymous)).toEqual(anonymous);
    const signed = await intel(7, { caller: CALLER });
    expect(signed.caller).toBe(CALLER);
  });

  it("names tier, score and rank of the revealed population", async () => {
    const collection = fakeIndex();
    const { rarity } = collection.token(1)!;
    expect(rarity.rank).toBe(1);
    const { brief } = await intel(1, { collection });
    expect(brief).toContain("Legendary");
    expect(brief).toContain(`score ${rarity.score!.toFixed(2)}`);
    expect(brief).toContain("rank 1 of 100 revealed agents");
  });

  it("names the rarest trait with its share of revealed agents: a unique value", async () => {
    expect(holders("Visor", "Eclipse")).toBe(1);
    const { brief } = await intel(1);
    expect(brief).toContain("Its rarest trait is Eclipse (Visor), which no other revealed agent carries (1 of 100");
    expect(brief).toContain("1 of 100 revealed agents, 1%");
  });

  it("names the rarest trait with its share of revealed agents: a shared value", async () => {
    // Token 2: Void core (2 holders) beats Oracle, Gold, Prismatic (3 each), Quantum (4) and Arbitrage (5).
    expect(holders("Core", "Void")).toBe(2);
    const { brief } = await intel(2);
    expect(brief).toContain("Its rarest trait is Void (Core), shared by 2 of 100 revealed agents, 2%.");
  });

  it("calls a widespread rarest trait what it is", async () => {
    // Token 7 is all base values but Class/Core/Mission from the tail; its rarest is the least held of them.
    const collection = fakeIndex();
    const token = collection.token(8)!;
    const counts = Object.entries(token.traits).map(([trait, label]) => ({
      trait,
      label,
      n: holders(trait as keyof Traits, label),
    }));
    const rarest = counts.reduce((a, b) => (b.n < a.n ? b : a));
    const { brief, rarity_tier } = await intel(8, { collection });
    expect(rarest.n / 100).toBeGreaterThanOrEqual(0.15);
    expect(rarity_tier).toBe(token.rarity.tier);
    expect(brief).toContain(
      `Even its rarest trait, ${rarest.label} (${rarest.trait}), is shared by ${rarest.n} of 100`,
    );
  });

  it("is a few sentences that vary with the traits", async () => {
    const collection = fakeIndex();
    const briefs = await Promise.all([1, 2, 9, 50].map(async (id) => (await intel(id, { collection })).brief));
    for (const brief of briefs) {
      const sentences = brief.split(/(?<=\.)\s+(?=[A-Z/])/);
      expect(sentences.length).toBeGreaterThanOrEqual(2);
      expect(sentences.length).toBeLessThanOrEqual(5);
    }
    expect(new Set(briefs).size).toBe(briefs.length);
  });

  it("points the Mission, Class and Signal at the tools that fit", async () => {
    // Token 1: Arbitrage mission + Quantum signal -> offer radar; Oracle class -> altchain radar.
    const elite = (await intel(1)).brief;
    expect(elite).toContain(
      "its Arbitrage mission and Quantum signal point to collection bids at or above floor (/offer-radar)",
    );
    expect(elite).toContain("its Oracle class points to 24h volume leaders and price action on the second chain");
    // Token 15: Mint Watch mission -> allowlist scan; Cartographer class -> altchain radar; Low-band -> drop radar.
    const collection = fakeIndex(REVEALED, UNREVEALED_IDS, { 15: "Elite" });
    expect(collection.token(15)!.traits).toMatchObject({ Class: "Cartographer", Mission: "Mint Watch" });
    const brief = (await intel(15, { collection })).brief;
    expect(brief).toContain("its Mint Watch mission points to which live and upcoming mints");
    expect(brief).toContain("(/allowlist-scan)");
    expect(brief).toContain("its Cartographer class points to volume and liquidity on the second chain");
  });
});

describe("intelTool and clearance", () => {
  const expectedTools: Record<Clearance, string[]> = {
    Holder: ["/intel", "/drop-radar", "/b20-radar"],
    Rare: ["/intel", "/drop-radar", "/b20-radar", "/portfolio", "/allowlist-scan"],
    Elite: ["/intel", "/drop-radar", "/b20-radar", "/portfolio", "/allowlist-scan", "/altchain-radar", "/offer-radar"],
  };

  for (const clearance of ["Holder", "Rare", "Elite"] as const) {
    it(`names the tools ${clearance} clearance opens, from the token's own clearance`, async () => {
      // Token 1's traits point at Elite tools; the clearance is forced to each level.
      const collection = fakeIndex(REVEALED, UNREVEALED_IDS, { 1: clearance });
      const { brief } = await intel(1, { collection });
      expect(clearanceClause(brief)).toEqual({ clearance, opened: expectedTools[clearance] });
    });
  }

  it("recommends only tools the clearance opens, and says what a locked lead needs", async () => {
    const collection = fakeIndex(REVEALED, UNREVEALED_IDS, { 1: "Holder" });
    const { brief } = await intel(1, { collection });
    const mission = /Mission brief: [^.]+\./.exec(brief)![0];
    expect(mission).not.toContain("/offer-radar");
    expect(mission).not.toContain("/altchain-radar");
    expect(mission).toContain("/drop-radar");
    expect(brief).toContain(
      "/offer-radar, where its Arbitrage mission and Quantum signal point, needs Elite clearance",
    );
  });

  it("says what the next clearance adds when no trait points past the current one", async () => {
    // Token 49: Scout / Recon / Low-band all point at the drop radar, which Holder clearance opens.
    const collection = fakeIndex(REVEALED, UNREVEALED_IDS, { 49: "Holder" });
    expect(collection.token(49)!.traits).toEqual(BASE);
    const { brief } = await intel(49, { collection });
    expect(brief).toContain("Rare clearance would add /portfolio and /allowlist-scan.");
  });
});

describe("intelTool on an unrevealed agent", () => {
  it("answers nothing: 403 agent_not_revealed naming tokenId, so its call is released uncharged", async () => {
    const refusal = await intel(101, { caller: CALLER }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(ServiceError);
    expect(refusal).toMatchObject({
      code: "agent_not_revealed",
      status: 403,
      details: [{ field: "tokenId", message: "not revealed yet" }],
    });
    expect((refusal as ServiceError).message).toMatch(/^Agent #101 is not revealed yet: .* Nothing was charged\.$/);
  });
});

describe("intelTool trait census", () => {
  it("counts the collection once per rarity table", async () => {
    const collection = fakeIndex();
    await intel(1, { collection });
    const afterFirst = collection.tokenCalls;
    expect(afterFirst).toBeGreaterThanOrEqual(100);
    await intel(2, { collection });
    await intel(3, { collection });
    // Only contextFor's own lookups: no recount.
    expect(collection.tokenCalls - afterFirst).toBe(2);
  });

  it("recounts when a reveal brings a new rarity table", async () => {
    // Two more agents revealed with an Eclipse visor (3 holders): token 1's rarest is now its Void core (2).
    const collection = fakeIndex([...REVEALED, { Visor: "Eclipse" }, { Visor: "Eclipse" }], []);
    const { brief } = await intel(1, { collection });
    expect(brief).not.toContain("no other revealed agent carries");
    expect(brief).toContain("Its rarest trait is Void (Core), shared by 2 of 102 revealed agents, 2%.");
  });
});

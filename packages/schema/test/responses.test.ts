import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  b20TokenSchema,
  dropSchema,
  marketSchema,
  radarTokenSchema,
  riskSchema,
  type ToolName,
  toolNames,
  toolRoutes,
} from "../src/index.js";
import { HOLDER, issuePaths } from "./helpers.js";

/** The spec's response tables: which fields each 200 body has, and which of them are required. */
const responseFields: Record<ToolName, { required: string[]; optional: string[] }> = {
  intel: {
    required: ["tokenId", "name", "rarity_tier", "traits", "brief"],
    optional: ["rarity_score", "edition", "caller"],
  },
  dropRadar: { required: ["type", "generatedAt", "count", "drops", "brief"], optional: ["caller"] },
  b20Radar: {
    required: ["generatedAt", "count", "tokens", "brief"],
    optional: ["detectedCount", "truncated", "fromBlock", "toBlock", "blocksBack", "caller"],
  },
  altchainRadar: { required: ["generatedAt", "count", "tokens", "brief"], optional: ["caller", "clearance"] },
  portfolio: {
    required: ["wallet", "chain", "nftCount", "nfts", "offersReceived", "brief"],
    optional: ["estimatedValueUsd", "caller", "clearance"],
  },
  allowlistScan: {
    required: ["type", "generatedAt", "scanned", "eligibleCount", "eligible", "brief"],
    optional: ["ineligible", "caller", "clearance"],
  },
  offerRadar: { required: ["count", "collections", "brief"], optional: ["caller", "clearance"] },
};

const withClearance: ToolName[] = ["altchainRadar", "portfolio", "allowlistScan", "offerRadar"];
const withoutGeneratedAt: ToolName[] = ["intel", "portfolio", "offerRadar"];

/** The sample answer with every optional field the response may carry filled in. */
function fullSample(tool: ToolName): Record<string, unknown> {
  const sample: Record<string, unknown> = { ...toolRoutes[tool].sampleOutput, caller: HOLDER };
  if (withClearance.includes(tool)) sample.clearance = "Elite";
  if (tool === "allowlistScan") sample.ineligible = [];
  return sample;
}

const sorted = (keys: string[]) => [...keys].sort();

describe.each(toolNames)("%s response", (tool) => {
  const schema = toolRoutes[tool].response;
  const { required, optional } = responseFields[tool];

  it("has exactly the fields of the spec's response table", () => {
    expect(sorted(Object.keys(schema.shape))).toEqual(sorted([...required, ...optional]));
  });

  it("parses its sample answer with every optional field filled in", () => {
    const sample = fullSample(tool);
    expect(sorted(Object.keys(sample))).toEqual(sorted([...required, ...optional]));
    expect(schema.parse(sample)).toEqual(sample);
  });

  it.each(required)("rejects an answer without required %s, naming it", (key) => {
    const { [key]: _dropped, ...rest } = fullSample(tool);
    expect(issuePaths(schema, rest)).toEqual([key]);
  });

  it.each(optional)("accepts an answer without optional %s", (key) => {
    const { [key]: _dropped, ...rest } = fullSample(tool);
    expect(schema.parse(rest)).not.toHaveProperty(key);
  });

  it("rejects an empty brief", () => {
    expect(issuePaths(schema, { ...fullSample(tool), brief: "" })).toEqual(["brief"]);
  });

  it("rejects a caller that is not an address", () => {
    expect(issuePaths(schema, { ...fullSample(tool), caller: "alice" })).toEqual(["caller"]);
  });
});

describe("clearance", () => {
  it.each(withClearance)("%s carries an optional clearance of Holder, Rare or Elite", (tool) => {
    const schema: z.ZodObject = toolRoutes[tool].response;
    for (const clearance of ["Holder", "Rare", "Elite"]) {
      expect(schema.parse({ ...fullSample(tool), clearance }).clearance).toBe(clearance);
    }
    expect(issuePaths(schema, { ...fullSample(tool), clearance: "Epic" })).toEqual(["clearance"]);
  });

  it.each(toolNames.filter((tool) => !withClearance.includes(tool)))("%s has no clearance field", (tool) => {
    const schema = toolRoutes[tool].response;
    expect(schema.shape).not.toHaveProperty("clearance");
    expect(schema.parse({ ...fullSample(tool), clearance: "Elite" })).not.toHaveProperty("clearance");
  });
});

describe("generatedAt", () => {
  it.each(withoutGeneratedAt)("%s has no generatedAt field", (tool) => {
    const schema = toolRoutes[tool].response;
    expect(schema.shape).not.toHaveProperty("generatedAt");
    expect(schema.parse({ ...fullSample(tool), generatedAt: "2026-11-22T12:00:00.000Z" })).not.toHaveProperty(
      "generatedAt",
    );
  });

  describe.each(toolNames.filter((tool) => !withoutGeneratedAt.includes(tool)))("%s", (tool) => {
    const schema: z.ZodObject = toolRoutes[tool].response;

    it.each(["2026-11-22T12:00:00.000Z", "2026-11-22T12:00:00Z"])("accepts the UTC timestamp %s", (generatedAt) => {
      expect(schema.parse({ ...fullSample(tool), generatedAt }).generatedAt).toBe(generatedAt);
    });

    it.each(["2026-11-22", "2026-11-22T12:00:00+02:00", "yesterday", "1763812800000"])(
      "rejects %j, naming generatedAt",
      (generatedAt) => {
        expect(issuePaths(schema, { ...fullSample(tool), generatedAt })).toEqual(["generatedAt"]);
      },
    );
  });
});

describe("intel fields", () => {
  const schema = toolRoutes.intel.response;

  it("rejects a trait value that is not a string, naming the trait", () => {
    expect(issuePaths(schema, { ...fullSample("intel"), traits: { Class: 1 } })).toEqual(["traits.Class"]);
  });

  it("rejects an unknown rarity tier", () => {
    expect(issuePaths(schema, { ...fullSample("intel"), rarity_tier: "Mythic" })).toEqual(["rarity_tier"]);
  });
});

describe("shared objects", () => {
  it("drop object has the spec's fields", () => {
    expect(sorted(Object.keys(dropSchema.shape))).toEqual(
      sorted([
        "slug",
        "name",
        "chain",
        "imageUrl",
        "openseaUrl",
        "contractAddress",
        "totalSupply",
        "maxSupply",
        "remaining",
        "stages",
        "walletEligibility",
      ]),
    );
  });

  it("B20 token object has the spec's fields", () => {
    expect(sorted(Object.keys(b20TokenSchema.shape))).toEqual(
      sorted(["address", "variant", "name", "symbol", "decimals", "totalSupply", "currency", "initialized", "market"]),
    );
  });

  it("radar token object has the spec's fields, all required", () => {
    const keys = [
      "address",
      "symbol",
      "name",
      "priceUsd",
      "volume24hUsd",
      "liquidityUsd",
      "marketCapUsd",
      "priceChange24h",
      "txns24",
      "risk",
      "url",
    ];
    expect(sorted(Object.keys(radarTokenSchema.shape))).toEqual(sorted(keys));
    const token: Record<string, unknown> = { ...toolRoutes.altchainRadar.sampleOutput.tokens[0] };
    for (const key of keys) {
      const { [key]: _dropped, ...rest } = token;
      expect(issuePaths(radarTokenSchema, rest)).toEqual([key]);
    }
  });

  it("radar token numbers may be null", () => {
    const token = toolRoutes.altchainRadar.sampleOutput.tokens[0];
    const nulls = {
      priceUsd: null,
      volume24hUsd: null,
      liquidityUsd: null,
      marketCapUsd: null,
      priceChange24h: null,
      txns24: null,
    };
    expect(radarTokenSchema.parse({ ...token, ...nulls })).toMatchObject(nulls);
  });

  it("market object: numbers and url nullable; every field always sent (the spec allows them absent, the service always sends them)", () => {
    expect(sorted(Object.keys(marketSchema.shape))).toEqual(
      sorted(["priceUsd", "volumeH24", "liquidityUsd", "priceChangeH24", "txns24", "marketCap", "risk", "url"]),
    );
    expect(issuePaths(marketSchema, {}).sort()).toEqual(sorted(Object.keys(marketSchema.shape)));
    const nulls = {
      priceUsd: null,
      volumeH24: null,
      liquidityUsd: null,
      priceChangeH24: null,
      txns24: null,
      marketCap: null,
      risk: { level: "high", volToLiq: null, flags: ["no trading pair"] },
      url: null,
    };
    expect(marketSchema.parse(nulls)).toEqual(nulls);
  });

  it("risk object: level is low, elevated or high; volToLiq nullable; flags strings", () => {
    expect(sorted(Object.keys(riskSchema.shape))).toEqual(["flags", "level", "volToLiq"]);
    for (const level of ["low", "elevated", "high"]) {
      expect(riskSchema.parse({ level, volToLiq: null, flags: [] }).level).toBe(level);
    }
    expect(issuePaths(riskSchema, { level: "medium", volToLiq: 1, flags: [] })).toEqual(["level"]);
    expect(issuePaths(riskSchema, { level: "low", volToLiq: 1, flags: [1] })).toEqual(["flags.0"]);
  });
});

describe("route samples", () => {
  it.each(toolNames)("%s sampleOutput parses with its response schema", (tool) => {
    const route = toolRoutes[tool];
    expect(route.response.safeParse(route.sampleOutput).error?.issues ?? []).toEqual([]);
  });

  it.each(toolNames)("%s sampleInput parses with its request schema", (tool) => {
    const route = toolRoutes[tool];
    expect(route.request.safeParse(route.sampleInput).error?.issues ?? []).toEqual([]);
  });
});

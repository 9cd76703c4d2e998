import { describe, expect, it } from "vitest";
import { type ToolName, tokenIdParamSchema, toolNames, toolRoutes } from "../src/index.js";
import { integerLimits, issuePaths, minimalInput, requestOf, slugList } from "./helpers.js";

describe("tokenId, every tool", () => {
  describe.each(toolNames)("%s", (tool) => {
    const schema = requestOf(tool);
    const body = (tokenId: unknown) => ({ ...minimalInput[tool], tokenId });

    it.each([1, 2, 6665, 6666])("accepts %d", (tokenId) => {
      expect(schema.parse(body(tokenId)).tokenId).toBe(tokenId);
    });

    it.each([0, -1, 6667, 100000])("rejects %d, naming tokenId", (tokenId) => {
      expect(issuePaths(schema, body(tokenId))).toEqual(["tokenId"]);
    });

    it.each([
      ["the string '7'", "7"],
      ["7.5", 7.5],
      ["true", true],
      ["null", null],
      ["an array", [7]],
      ["an object", { id: 7 }],
      ["Infinity", Number.POSITIVE_INFINITY],
      ["NaN", Number.NaN],
    ])("rejects %s, naming tokenId", (_label, tokenId) => {
      expect(issuePaths(schema, body(tokenId))).toEqual(["tokenId"]);
    });

    it("rejects a body without tokenId, naming it", () => {
      const { tokenId: _omitted, ...rest } = minimalInput[tool];
      expect(issuePaths(schema, rest)).toContain("tokenId");
    });

    it.each([
      ["null", null],
      ["an array", [{ tokenId: 7 }]],
      ["a string", "tokenId=7"],
      ["a number", 7],
    ])("rejects %s as the body", (_label, input) => {
      expect(issuePaths(schema, input)).toEqual([""]);
    });
  });
});

describe.each(integerLimits)(
  "$tool $field: $min to $max, default $default",
  ({ tool, field, min, max, default: def }) => {
    const schema = requestOf(tool);
    const body = (value: unknown) => ({ ...minimalInput[tool], [field]: value });

    it("accepts both ends of the range and keeps the value", () => {
      expect(schema.parse(body(min))[field]).toBe(min);
      expect(schema.parse(body(max))[field]).toBe(max);
    });

    it("rejects one below the minimum and one above the maximum, naming the field", () => {
      expect(issuePaths(schema, body(min - 1))).toEqual([field]);
      expect(issuePaths(schema, body(max + 1))).toEqual([field]);
    });

    it("applies the default when the field is left out", () => {
      expect(schema.parse(minimalInput[tool])[field]).toBe(def);
    });

    it.each([
      ["a fraction", min + 0.5],
      ["a numeric string", String(min)],
      ["null (not defaulted)", null],
      ["a boolean", true],
      ["an array", [min]],
    ])("rejects %s, naming the field", (_label, value) => {
      expect(issuePaths(schema, body(value))).toEqual([field]);
    });
  },
);

describe("defaults of the optional fields", () => {
  it.each<[ToolName, Record<string, unknown>]>([
    ["intel", { tokenId: 7 }],
    [
      "dropRadar",
      {
        tokenId: 7,
        type: "all",
        limit: 20,
        scanChains: true,
        enrich: false,
        checkWalletEligibility: false,
        watchSlugs: [],
      },
    ],
    ["b20Radar", { tokenId: 7, blocksBack: 302400, limit: 25 }],
    ["altchainRadar", { tokenId: 7, limit: 15, includeStables: false }],
    ["portfolio", { tokenId: 7, chain: "ethereum", nftLimit: 50 }],
    ["allowlistScan", { tokenId: 7, type: "all", limit: 25, scanChains: true, eligibleOnly: false }],
    ["offerRadar", { tokenId: 7, slugs: ["night-owls"] }],
  ])("%s: a minimal body becomes exactly %j", (tool, expected) => {
    expect(requestOf(tool).parse(minimalInput[tool])).toEqual(expected);
  });

  it("portfolio keeps an explicit chain instead of the default", () => {
    expect(toolRoutes.portfolio.request.parse({ tokenId: 7, chain: "base" }).chain).toBe("base");
  });

  it("drop-radar gives each request its own default watchSlugs array", () => {
    const first = toolRoutes.dropRadar.request.parse({ tokenId: 7 });
    first.watchSlugs.push("leaked");
    expect(toolRoutes.dropRadar.request.parse({ tokenId: 7 }).watchSlugs).toEqual([]);
  });
});

describe("boolean fields", () => {
  describe.each<[ToolName, string, boolean]>([
    ["dropRadar", "scanChains", true],
    ["dropRadar", "enrich", false],
    ["dropRadar", "checkWalletEligibility", false],
    ["altchainRadar", "includeStables", false],
    ["allowlistScan", "scanChains", true],
    ["allowlistScan", "eligibleOnly", false],
  ])("%s %s (default %s)", (tool, field, def) => {
    const schema = requestOf(tool);
    const body = (value: unknown) => ({ ...minimalInput[tool], [field]: value });

    it("defaults when left out and keeps an explicit value", () => {
      expect(schema.parse(minimalInput[tool])[field]).toBe(def);
      expect(schema.parse(body(!def))[field]).toBe(!def);
    });

    it.each([
      ["the string 'true'", "true"],
      ["1", 1],
      ["null", null],
      ["an array", [true]],
    ])("rejects %s, naming the field", (_label, value) => {
      expect(issuePaths(schema, body(value))).toEqual([field]);
    });
  });
});

describe.each<ToolName>(["dropRadar", "allowlistScan"])("%s type (discovery feed)", (tool) => {
  const schema = requestOf(tool);

  it.each(["all", "featured", "upcoming", "recently_minted"])("accepts %s", (type) => {
    expect(schema.parse({ tokenId: 7, type }).type).toBe(type);
  });

  it.each(["ALL", "recent", "", "trending"])("rejects %j, naming type", (type) => {
    expect(issuePaths(schema, { tokenId: 7, type })).toEqual(["type"]);
  });
});

describe("drop-radar watchSlugs: at most 10 items", () => {
  const schema = toolRoutes.dropRadar.request;

  it.each([0, 1, 10])("accepts %d slugs", (n) => {
    expect(schema.parse({ tokenId: 7, watchSlugs: slugList(n) }).watchSlugs).toEqual(slugList(n));
  });

  it("rejects 11 slugs, naming watchSlugs", () => {
    expect(issuePaths(schema, { tokenId: 7, watchSlugs: slugList(11) })).toEqual(["watchSlugs"]);
  });

  it("rejects a single string where the array goes", () => {
    expect(issuePaths(schema, { tokenId: 7, watchSlugs: "night-owls" })).toEqual(["watchSlugs"]);
  });

  it("rejects a non-string item, naming its index", () => {
    expect(issuePaths(schema, { tokenId: 7, watchSlugs: ["night-owls", 7] })).toEqual(["watchSlugs.1"]);
  });
});

describe("offer-radar slugs: required, 1 to 10 items", () => {
  const schema = toolRoutes.offerRadar.request;

  it.each([1, 2, 10])("accepts %d slugs", (n) => {
    expect(schema.parse({ tokenId: 7, slugs: slugList(n) }).slugs).toEqual(slugList(n));
  });

  it.each([0, 11])("rejects %d slugs, naming slugs", (n) => {
    expect(issuePaths(schema, { tokenId: 7, slugs: slugList(n) })).toEqual(["slugs"]);
  });

  it("rejects a body without slugs, naming slugs", () => {
    expect(issuePaths(schema, { tokenId: 7 })).toEqual(["slugs"]);
  });

  it.each([
    ["a single string", "night-owls"],
    ["null", null],
    ["an object", { 0: "night-owls" }],
  ])("rejects %s where the array goes", (_label, slugs) => {
    expect(issuePaths(schema, { tokenId: 7, slugs })).toEqual(["slugs"]);
  });

  it("rejects a non-string item, naming its index", () => {
    expect(issuePaths(schema, { tokenId: 7, slugs: [7] })).toEqual(["slugs.0"]);
  });
});

describe("optional fields do not take null", () => {
  it.each<[ToolName, string]>([
    ["dropRadar", "chain"],
    ["dropRadar", "walletAddress"],
    ["b20Radar", "address"],
    ["altchainRadar", "address"],
    ["portfolio", "walletAddress"],
    ["portfolio", "chain"],
    ["allowlistScan", "chain"],
    ["allowlistScan", "walletAddress"],
  ])("%s %s: null is rejected, naming the field", (tool, field) => {
    expect(issuePaths(requestOf(tool), { ...minimalInput[tool], [field]: null })).toEqual([field]);
  });
});

describe("unknown properties", () => {
  it.each(["foo", "limt", "__proto__x"])("altchain-radar rejects %j and names it", (key) => {
    const result = toolRoutes.altchainRadar.request.safeParse({ tokenId: 7, [key]: 1 });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([expect.objectContaining({ code: "unrecognized_keys", keys: [key] })]);
  });

  it.each(toolNames.filter((tool) => tool !== "altchainRadar"))(
    "%s accepts them and strips them from the validated request",
    (tool) => {
      const schema = requestOf(tool);
      const parsed = schema.parse({ ...minimalInput[tool], foo: 1, limt: 3 });
      expect(parsed).not.toHaveProperty("foo");
      expect(parsed).not.toHaveProperty("limt");
      expect(parsed).toEqual(schema.parse(minimalInput[tool]));
    },
  );
});

describe("tokenId path parameter of the public routes", () => {
  it.each([
    ["7", 7],
    ["1", 1],
    ["6666", 6666],
  ])("%j becomes %d", (raw, tokenId) => {
    expect(tokenIdParamSchema.parse(raw)).toBe(tokenId);
  });

  it.each(["0", "6667", "abc", "7.5", "-1", "", "7a", "1e3", " 7", "0x7", "1234567"])("rejects %j", (raw) => {
    expect(tokenIdParamSchema.safeParse(raw).success).toBe(false);
  });
});

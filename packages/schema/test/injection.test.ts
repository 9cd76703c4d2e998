import { describe, expect, it } from "vitest";
import type { ToolName } from "../src/index.js";
import { HOLDER, issuePaths, minimalInput, requestOf } from "./helpers.js";

/** Values that could smuggle a path, a query or a header into an upstream URL, or are simply not identifiers. */
const badIdentifiers: [string, unknown][] = [
  ["a parent path", "../x"],
  ["a query", "a?b=1"],
  ["a query continuation", "a&b=1"],
  ["a fragment", "a#b"],
  ["an upper-case letter", "A"],
  ["mixed case", "Night-Owls"],
  ["a slash", "a/b"],
  ["an encoded slash", "a%2Fb"],
  ["the empty string", ""],
  ["a leading dash", "-abc"],
  ["a leading underscore", "_abc"],
  ["a space", "a b"],
  ["a dot", "a.b"],
  ["a trailing newline", "abc\n"],
  ["a CRLF", "abc\r\nX-Injected: 1"],
  ["a non-ASCII letter", "café"],
  ["a number", 7],
];

describe("collection slugs: ^[a-z0-9][a-z0-9_-]{0,99}$", () => {
  const fields: [ToolName, string][] = [
    ["offerRadar", "slugs"],
    ["dropRadar", "watchSlugs"],
  ];

  describe.each(fields)("%s %s", (tool, field) => {
    const schema = requestOf(tool);
    const body = (slug: unknown) => ({ ...minimalInput[tool], [field]: [slug] });

    it.each<[string, unknown]>([...badIdentifiers, ["101 characters", "a".repeat(101)]])(
      "rejects %s, naming the item",
      (_label, slug) => {
        expect(issuePaths(schema, body(slug))).toEqual([`${field}.0`]);
      },
    );

    it.each(["a", "0", "night-owls", "ape_chain_1", "boredapeyachtclub", "a".repeat(100)])("accepts %j", (slug) => {
      expect(schema.parse(body(slug))[field]).toEqual([slug]);
    });
  });
});

describe("chain identifiers: ^[a-z0-9][a-z0-9_-]{0,39}$", () => {
  describe.each<ToolName>(["dropRadar", "portfolio", "allowlistScan"])("%s chain", (tool) => {
    const schema = requestOf(tool);
    const body = (chain: unknown) => ({ ...minimalInput[tool], chain });

    it.each<[string, unknown]>([...badIdentifiers, ["41 characters", "a".repeat(41)]])(
      "rejects %s, naming chain",
      (_label, chain) => {
        expect(issuePaths(schema, body(chain))).toEqual(["chain"]);
      },
    );

    it.each(["ethereum", "base", "ape_chain", "zora-sepolia", "0", "a".repeat(40)])("accepts %j", (chain) => {
      expect(schema.parse(body(chain)).chain).toBe(chain);
    });
  });
});

describe("addresses: 0x and 20 bytes of hex", () => {
  const hex40 = "70997970c51812dc3a010c7d01b50e0d17dc79c8";
  const fields: [ToolName, string][] = [
    ["dropRadar", "walletAddress"],
    ["b20Radar", "address"],
    ["altchainRadar", "address"],
    ["portfolio", "walletAddress"],
    ["allowlistScan", "walletAddress"],
  ];

  describe.each(fields)("%s %s", (tool, field) => {
    const schema = requestOf(tool);
    const body = (value: unknown) => ({ ...minimalInput[tool], [field]: value });

    it.each([
      ["19 bytes", `0x${hex40.slice(2)}`],
      ["21 bytes", `0x${hex40}00`],
      ["an odd digit more", `0x${hex40}0`],
      ["non-hex digits", `0x${"g".repeat(40)}`],
      ["no 0x prefix", hex40],
      ["an upper-case 0X prefix", `0X${hex40}`],
      ["surrounding space", ` 0x${hex40} `],
      ["a trailing newline", `0x${hex40}\n`],
      ["a path after it", `0x${hex40}/../x`],
      ["an ENS name", "vitalik.eth"],
      ["the empty string", ""],
      ["a number", 0x1234],
    ])("rejects %s, naming the field", (_label, value) => {
      expect(issuePaths(schema, body(value))).toEqual([field]);
    });

    it.each([
      ["lower case", `0x${hex40}`],
      ["upper case", `0x${hex40.toUpperCase()}`],
      ["EIP-55 checksum case", HOLDER],
      ["a B20 token address", "0xB200000000000000000000000000000000000001"],
    ])("accepts %s", (_label, value) => {
      expect(schema.parse(body(value))[field]).toBe(value);
    });
  });
});

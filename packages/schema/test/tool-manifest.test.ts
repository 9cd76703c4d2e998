import { describe, expect, it } from "vitest";
import {
  buildToolManifest,
  buildToolManifests,
  canonicalize,
  canonicalToolManifest,
  clearanceTraitValue,
  ERC7496_CLEARANCE_TRAIT_KEY,
  ERC7496_TRAIT_REQUIREMENT_KIND,
  type PaymentTerms,
  paidRouteNames,
  paidRoutes,
  TOOL_MANIFEST_TYPE,
  type ToolManifest,
  type ToolManifestOptions,
  toolManifestPath,
  toolManifestSchema,
  toolNames,
  toolRoutes,
} from "../src/index.js";
import { ASSET, HOLDER } from "./helpers.js";
import { compileJsonSchema } from "./json-schema-validator.js";

const COLLECTION = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const PAY_TO = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const payment: PaymentTerms = {
  network: "eip155:8453",
  asset: ASSET,
  payTo: PAY_TO,
  assetName: "USD Coin",
  assetVersion: "2",
  maxTimeoutSeconds: 120,
};
const options: ToolManifestOptions = { publicUrl: "https://tools.test", payment, collection: COLLECTION };
const manifests = buildToolManifests(options);

/* ------------------------------ RFC 8785 JCS ------------------------------ */

describe("canonicalize (RFC 8785)", () => {
  it("serializes RFC 8785 §3.2.2's sample: literals, ES numbers, string escapes", () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        '"literals": [null, true, false]}',
    );
    expect(canonicalize(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("sorts member names by UTF-16 code units (RFC 8785 §3.2.3), whatever the locale", () => {
    const input = JSON.parse(
      '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\u000a": "Newline", "1": "One",' +
        '"\\u0080": "Control\\u007f", "\\ud83d\\ude02": "Smiley", "\\u00f6": "Latin Small Letter O With Diaeresis",' +
        '"\\ufb33": "Hebrew Letter Dalet With Dagesh", "</script>": "Browser Challenge"}',
    );
    expect(canonicalize(input)).toBe(
      '{"\\n":"Newline","\\r":"Carriage Return","1":"One","</script>":"Browser Challenge",' +
        '"\u0080":"Control\u007f","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😂":"Smiley",' +
        '"\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
    // U+1F602 (surrogates D83D DE02) sorts before U+FB33 by code units, though after it by code points.
    expect(canonicalize({ "\ufb33": 1, "😂": 2 })).toBe('{"😂":2,"\ufb33":1}');
    expect(canonicalize({ peach: 1, péché: 2, pêche: 3, sin: 4, Sin: 5 })).toBe(
      '{"Sin":5,"peach":1,"péché":2,"pêche":3,"sin":4}',
    );
  });

  it("sorts nested objects, keeps array order and leaves Unicode as it is", () => {
    const structures = JSON.parse(
      '{"1": {"f": {"f": "hi","F": 5} ,"\\n": 56.0}, "10": { }, "": "empty", "a": { },' +
        '"111": [ {"e": "yes","E": "no" } ], "A": { }}',
    );
    expect(canonicalize(structures)).toBe(
      '{"":"empty","1":{"\\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{"E":"no","e":"yes"}],"A":{},"a":{}}',
    );
    expect(canonicalize([56, { d: true, "10": null, "1": [] }])).toBe('[56,{"1":[],"10":null,"d":true}]');
    // JCS does not normalize Unicode: "A" + combining ring stays two code points.
    expect(canonicalize({ "Unnormalized Unicode": "A\u030a" })).toBe('{"Unnormalized Unicode":"A\u030a"}');
  });

  it("serializes numbers as ECMAScript does (RFC 8785 Appendix B)", () => {
    const samples: [string, string][] = [
      ["0000000000000000", "0"],
      ["8000000000000000", "0"],
      ["0000000000000001", "5e-324"],
      ["8000000000000001", "-5e-324"],
      ["7fefffffffffffff", "1.7976931348623157e+308"],
      ["ffefffffffffffff", "-1.7976931348623157e+308"],
      ["4340000000000000", "9007199254740992"],
      ["c340000000000000", "-9007199254740992"],
      ["4430000000000000", "295147905179352830000"],
      ["44b52d02c7e14af5", "9.999999999999997e+22"],
      ["44b52d02c7e14af6", "1e+23"],
      ["44b52d02c7e14af7", "1.0000000000000001e+23"],
      ["444b1ae4d6e2ef4e", "999999999999999700000"],
      ["444b1ae4d6e2ef4f", "999999999999999900000"],
      ["444b1ae4d6e2ef50", "1e+21"],
      ["3eb0c6f7a0b5ed8c", "9.999999999999997e-7"],
      ["3eb0c6f7a0b5ed8d", "0.000001"],
      ["41b3de4355555553", "333333333.3333332"],
      ["41b3de4355555554", "333333333.33333325"],
      ["41b3de4355555555", "333333333.3333333"],
      ["41b3de4355555556", "333333333.3333334"],
      ["41b3de4355555557", "333333333.33333343"],
      ["becbf647612f3696", "-0.0000033333333333333333"],
      ["43143ff3c1cb0959", "1424953923781206.2"],
    ];
    const view = new DataView(new ArrayBuffer(8));
    for (const [bits, expected] of samples) {
      view.setBigUint64(0, BigInt(`0x${bits}`));
      expect(canonicalize(view.getFloat64(0)), bits).toBe(expected);
    }
  });

  it("rejects what JSON cannot carry and what is not I-JSON", () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1n, () => 1, Symbol("s")]) {
      expect(() => canonicalize({ a: bad })).toThrow(/JCS/);
    }
    expect(() => canonicalize([1, undefined])).toThrow(/JCS/);
    expect(() => canonicalize({ a: "\ud800" })).toThrow(/lone surrogate/);
    expect(() => canonicalize({ "\udc00x": 1 })).toThrow(/lone surrogate/);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => canonicalize(circular)).toThrow(/circular/);
  });

  it("leaves out undefined members, as the JSON served for the same object does", () => {
    const value = { b: 1, a: undefined, c: { d: undefined } };
    expect(canonicalize(value)).toBe('{"b":1,"c":{}}');
    expect(canonicalize(value)).toBe(canonicalize(JSON.parse(JSON.stringify(value))));
    expect(canonicalize({ when: new Date(0) })).toBe('{"when":"1970-01-01T00:00:00.000Z"}');
    // Shared (not circular) references are fine.
    const shared = { x: 1 };
    expect(canonicalize({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});

describe("ERC-8257 test cases", () => {
  // The ERC's "Free Tool" and "Paid Tool" example manifests and their pinned JCS bytes (Test Cases section).
  const free = {
    type: "https://ercs.ethereum.org/ERCS/erc-8257#tool-manifest-v1",
    name: "nft-price-oracle",
    description: "Returns estimated floor price for any NFT collection.",
    endpoint: "https://tools.example.com/nft-price-oracle",
    inputs: {
      type: "object",
      properties: {
        collection: { type: "string", description: "Contract address" },
        chainId: { type: "integer" },
      },
      required: ["collection", "chainId"],
    },
    outputs: {
      type: "object",
      properties: { floorPriceEth: { type: "string" }, updatedAt: { type: "string", format: "date-time" } },
    },
    version: "1.0.0",
    tags: ["nft", "pricing", "oracle"],
    creatorAddress: "0xabcdefabcdef1234567890abcdefabcdef123456",
  };
  const freeCanonical =
    '{"creatorAddress":"0xabcdefabcdef1234567890abcdefabcdef123456","description":"Returns estimated floor price for any NFT collection.","endpoint":"https://tools.example.com/nft-price-oracle","inputs":{"properties":{"chainId":{"type":"integer"},"collection":{"description":"Contract address","type":"string"}},"required":["collection","chainId"],"type":"object"},"name":"nft-price-oracle","outputs":{"properties":{"floorPriceEth":{"type":"string"},"updatedAt":{"format":"date-time","type":"string"}},"type":"object"},"tags":["nft","pricing","oracle"],"type":"https://ercs.ethereum.org/ERCS/erc-8257#tool-manifest-v1","version":"1.0.0"}';

  const paid = {
    type: "https://ercs.ethereum.org/ERCS/erc-8257#tool-manifest-v1",
    name: "premium-analytics",
    description: "Advanced portfolio analytics for NFT holders.",
    endpoint: "https://tools.example.com/premium-analytics",
    inputs: {
      type: "object",
      properties: { wallet: { type: "string", description: "Wallet address to analyze" } },
      required: ["wallet"],
    },
    outputs: { type: "object", properties: { totalValue: { type: "string" }, breakdown: { type: "array" } } },
    version: "1.0.0",
    tags: ["analytics", "portfolio"],
    pricing: [
      {
        amount: "20000",
        asset: "eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
        recipient: "eip155:8453:0xabcdef0123456789abcdef0123456789abcdef01",
        protocol: "x402",
      },
      {
        amount: "20000",
        asset: "eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
        recipient: "eip155:1:0xabcdef0123456789abcdef0123456789abcdef01",
        protocol: "x402",
      },
    ],
    creatorAddress: "0xabcdef0123456789abcdef0123456789abcdef01",
  };
  const paidCanonical =
    '{"creatorAddress":"0xabcdef0123456789abcdef0123456789abcdef01","description":"Advanced portfolio analytics for NFT holders.","endpoint":"https://tools.example.com/premium-analytics","inputs":{"properties":{"wallet":{"description":"Wallet address to analyze","type":"string"}},"required":["wallet"],"type":"object"},"name":"premium-analytics","outputs":{"properties":{"breakdown":{"type":"array"},"totalValue":{"type":"string"}},"type":"object"},"pricing":[{"amount":"20000","asset":"eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913","protocol":"x402","recipient":"eip155:8453:0xabcdef0123456789abcdef0123456789abcdef01"},{"amount":"20000","asset":"eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48","protocol":"x402","recipient":"eip155:1:0xabcdef0123456789abcdef0123456789abcdef01"}],"tags":["analytics","portfolio"],"type":"https://ercs.ethereum.org/ERCS/erc-8257#tool-manifest-v1","version":"1.0.0"}';

  it("reproduces the pinned canonical bytes of the free-tool manifest (632 bytes)", () => {
    expect(canonicalToolManifest(free)).toBe(freeCanonical);
    expect(new TextEncoder().encode(freeCanonical).length).toBe(632);
  });

  it("reproduces the pinned canonical bytes of the paid-tool manifest (922 bytes)", () => {
    expect(canonicalToolManifest(paid)).toBe(paidCanonical);
    expect(new TextEncoder().encode(paidCanonical).length).toBe(922);
  });

  it("keeps NFC and NFD names apart (one byte longer in NFD)", () => {
    const nfc = canonicalize({ name: "caf\u00e9-oracle" });
    const nfd = canonicalize({ name: "cafe\u0301-oracle" });
    expect(nfc).not.toBe(nfd);
    expect(new TextEncoder().encode(nfd).length - new TextEncoder().encode(nfc).length).toBe(1);
  });
});

/* ------------------------------ Tool manifests ----------------------------- */

/** An independent canonical form for plain JSON made of objects, arrays, strings, integers, booleans and null. */
function naiveCanonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(naiveCanonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${naiveCanonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Every string (values and member names) of a JSON value, with its path. */
function stringsOf(node: unknown, path = "$", found: [string, string][] = []): [string, string][] {
  if (typeof node === "string") found.push([path, node]);
  else if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) stringsOf(item, `${path}[${i}]`, found);
  } else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      found.push([`${path} key`, key]);
      stringsOf(value, `${path}.${key}`, found);
    }
  }
  return found;
}

/** Nodes (every JSON value) and depth of a JSON value: a conservative reading of ERC-8257's parser caps. */
function sizeOf(node: unknown, depth = 0): { nodes: number; depth: number } {
  if (node === null || typeof node !== "object") return { nodes: 1, depth };
  let nodes = 1;
  let deepest = depth;
  for (const child of Array.isArray(node) ? node : Object.values(node)) {
    const size = sizeOf(child, depth + 1);
    nodes += size.nodes;
    deepest = Math.max(deepest, size.depth);
  }
  return { nodes, depth: deepest };
}

/** Splits ABI-encoded hex into 32-byte words. */
const words = (hex: string) => hex.slice(2).match(/.{64}/g) ?? [];
const word = (hex: string) => hex.slice(2).toLowerCase().padStart(64, "0");

describe("tool manifests", () => {
  it("has one per paid route, keyed by the route table's slug, each slug fit for the well-known path", () => {
    expect(Object.keys(manifests)).toEqual(paidRouteNames.map((name) => paidRoutes[name].slug));
    expect(Object.keys(manifests)).toEqual([
      "intel",
      "drop-radar",
      "b20-radar",
      "altchain-radar",
      "portfolio",
      "allowlist-scan",
      "offer-radar",
      "dispatch",
      "dispatch-missions",
    ]);
    expect(manifests["dispatch-missions"]?.["x-agent-tools"].method).toBe("GET");
    expect(manifests.dispatch?.["x-agent-tools"].method).toBe("POST");
    for (const slug of Object.keys(manifests)) {
      expect(slug).toMatch(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/);
      expect(slug.length).toBeLessThanOrEqual(64);
      expect(toolManifestPath(slug)).toBe(`/.well-known/ai-tool/${slug}.json`);
    }
  });

  it("is built from its inputs alone", () => {
    expect(buildToolManifests(options)).toEqual(manifests);
  });
});

describe.each(toolNames)("manifest of %s", (tool) => {
  const route = toolRoutes[tool];
  const manifest = manifests[route.slug] as ToolManifest;

  it("is valid by toolManifestSchema, which strips nothing from it, and is plain JSON", () => {
    expect(toolManifestSchema.parse(manifest)).toEqual(manifest);
    expect(JSON.parse(JSON.stringify(manifest))).toEqual(manifest);
  });

  it("has the ERC's required fields", () => {
    expect(manifest.type).toBe(TOOL_MANIFEST_TYPE);
    expect(manifest.name).toBe(`Agent Tools: ${route.summary}`);
    expect(manifest.description).toBe(route.description);
    expect([...manifest.description].length).toBeLessThanOrEqual(500);
    expect(manifest.endpoint).toBe(`https://tools.test${route.path}`);
    expect(manifest.creatorAddress).toBe(PAY_TO.toLowerCase());
  });

  it("has the optional fields: version, icon, tags", () => {
    expect(manifest.version).toBe("1.0.0");
    expect(manifest.image).toBe("https://tools.test/icon.svg");
    expect(manifest.tags).toEqual(route.tags);
  });

  it("prices both points over x402, standard first, in CAIP-19 / CAIP-10 on one chain", () => {
    expect(manifest.pricing).toEqual([
      {
        amount: "1000000",
        asset: `eip155:8453/erc20:${ASSET.toLowerCase()}`,
        recipient: `eip155:8453:${PAY_TO.toLowerCase()}`,
        protocol: "x402",
      },
      {
        amount: "10000",
        asset: `eip155:8453/erc20:${ASSET.toLowerCase()}`,
        recipient: `eip155:8453:${PAY_TO.toLowerCase()}`,
        protocol: "x402",
      },
    ]);
    for (const entry of manifest.pricing) {
      const assetChain = entry.asset.slice(0, entry.asset.indexOf("/"));
      const recipientChain = entry.recipient.slice(0, entry.recipient.lastIndexOf(":"));
      expect(assetChain).toBe(recipientChain);
    }
  });

  it("names the method and who each price point is for in its namespaced extension", () => {
    const extension = manifest["x-agent-tools"];
    expect(extension.method).toBe("POST");
    expect(extension.operationId).toBe(route.operationId);
    expect(extension.minimumClearance).toBe(route.minimumClearance);
    expect(extension.pricePoints.map((p) => [p.name, p.amount, p.usd])).toEqual([
      ["standard", "1000000", "1.00"],
      ["discounted", "10000", "0.01"],
    ]);
    expect(extension.pricePoints[0]?.who).toMatch(/any caller/);
    expect(extension.paymentCatalog).toBe("https://tools.test/.well-known/x402");
    expect(extension.openapi).toBe("https://tools.test/openapi.json");
  });

  it("declares the ERC-7496 clearance the discount needs as an IERC7496Trait access requirement", () => {
    const allowed = { Holder: ["Holder", "Rare", "Elite"], Rare: ["Rare", "Elite"], Elite: ["Elite"] }[
      route.minimumClearance
    ] as ("Holder" | "Rare" | "Elite")[];
    expect(manifest.access?.logic).toBe("AND");
    expect(manifest.access?.requirements).toHaveLength(1);
    const requirement = manifest.access?.requirements[0];
    expect(requirement?.kind).toBe(ERC7496_TRAIT_REQUIREMENT_KIND);
    // abi.encode(address collection, address traitsContract, bytes32 traitKey, bytes32[] allowedValues)
    expect(words(requirement?.data ?? "")).toEqual([
      word(COLLECTION),
      word(COLLECTION),
      word(ERC7496_CLEARANCE_TRAIT_KEY),
      word("0x80"),
      word(`0x${allowed.length.toString(16)}`),
      ...allowed.map((clearance) => word(clearanceTraitValue(clearance))),
    ]);
    expect(requirement?.label).toContain(`clearance ${allowed.join(" or ")}`);
    expect(new TextEncoder().encode(requirement?.label).length).toBeLessThanOrEqual(256);
  });

  it("follows the ERC's byte rules: NFC strings, lowercase hex, no control characters in the name", () => {
    for (const [path, text] of stringsOf(manifest)) expect(text.normalize("NFC"), path).toBe(text);
    const hexFields = [
      manifest.creatorAddress,
      ...manifest.pricing.flatMap((p) => [p.asset.split(":").at(-1), p.recipient.split(":").at(-1)]),
      ...(manifest.access?.requirements.flatMap((r) => [r.kind, r.data]) ?? []),
    ];
    for (const hex of hexFields) expect(hex).toMatch(/^0x[0-9a-f]+$/);
    expect(manifest.name).not.toMatch(/\p{Cc}/u);
  });

  it("stays within the ERC's parser caps (inputs + outputs ≤ 1,024 nodes, depth ≤ 16, document ≤ 1 MiB)", () => {
    const inputs = sizeOf(manifest.inputs);
    const outputs = sizeOf(manifest.outputs);
    expect(inputs.nodes + outputs.nodes).toBeLessThanOrEqual(1024);
    expect(Math.max(inputs.depth, outputs.depth)).toBeLessThanOrEqual(16);
    expect(new TextEncoder().encode(JSON.stringify(manifest)).length).toBeLessThan(1024 * 1024);
  });

  it("inputs and outputs are self-contained JSON Schemas for the sample input and output", () => {
    expect(JSON.stringify(manifest.inputs)).not.toMatch(/"\$(ref|defs)"/);
    expect(JSON.stringify(manifest.outputs)).not.toMatch(/"\$(ref|defs)"/);
    const validateInput = compileJsonSchema(manifest.inputs);
    expect(validateInput(route.sampleInput), JSON.stringify(validateInput.errors)).toBe(true);
    expect(validateInput({ ...route.sampleInput, tokenId: 0 })).toBe(false);
    const validateOutput = compileJsonSchema(manifest.outputs);
    expect(validateOutput(route.sampleOutput), JSON.stringify(validateOutput.errors)).toBe(true);
    expect(validateOutput({})).toBe(false);
  });

  it("has a canonical form that an independent canonicalizer reproduces, from the object or from the JSON served", () => {
    const canonical = canonicalToolManifest(manifest);
    expect(canonical).toBe(naiveCanonical(manifest));
    expect(canonicalToolManifest(JSON.parse(JSON.stringify(manifest)))).toBe(canonical);
    expect(canonical).not.toMatch(/\s(?=(?:[^"]*"[^"]*")*[^"]*$)/); // no whitespace outside strings
  });

  it("changes its canonical form when any field changes, and ignores a manifestHash member", () => {
    const canonical = canonicalToolManifest(manifest);
    const changed = (patch: Partial<ToolManifest>) => canonicalToolManifest({ ...manifest, ...patch });
    expect(changed({ description: `${manifest.description} ` })).not.toBe(canonical);
    expect(changed({ pricing: [...manifest.pricing].reverse() })).not.toBe(canonical);
    expect(changed({ endpoint: `${manifest.endpoint}/v2` })).not.toBe(canonical);
    expect(changed({ access: undefined })).not.toBe(canonical);
    expect(canonicalToolManifest({ ...manifest, manifestHash: `0x${"ab".repeat(32)}` })).toBe(canonical);
  });
});

describe("manifest options", () => {
  const route = toolRoutes.portfolio;

  it("takes the creator address when given, lowercased", () => {
    const manifest = buildToolManifest(route, { ...options, creatorAddress: HOLDER });
    expect(manifest.creatorAddress).toBe(HOLDER.toLowerCase());
  });

  it("has no access block without the collection", () => {
    const manifest = buildToolManifest(route, { publicUrl: options.publicUrl, payment });
    expect(manifest.access).toBeUndefined();
    expect("access" in manifest).toBe(false);
    expect(toolManifestSchema.parse(manifest)).toEqual(manifest);
  });

  it("normalizes the endpoint and icon URLs (lowercase host, no default port)", () => {
    const manifest = buildToolManifest(route, { ...options, publicUrl: "HTTPS://Tools.Test:443" });
    expect(manifest.endpoint).toBe("https://tools.test/portfolio");
    expect(manifest.image).toBe("https://tools.test/icon.svg");
  });

  it("serves a local http deployment as it is", () => {
    const manifest = buildToolManifest(route, { ...options, publicUrl: "http://127.0.0.1:8402" });
    expect(manifest.endpoint).toBe("http://127.0.0.1:8402/portfolio");
  });

  it("encodes clearance values as ERC-7496 bytes32 strings", () => {
    expect(clearanceTraitValue("Rare")).toBe(`0x52617265${"0".repeat(56)}`);
    expect(clearanceTraitValue("Holder")).toBe(`0x486f6c646572${"0".repeat(52)}`);
  });
});

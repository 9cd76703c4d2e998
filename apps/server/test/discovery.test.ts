import { CLEARANCE_TRAIT_KEY, CLEARANCES, encodeClearance } from "@agent-tools/contracts";
import {
  buildPaymentCatalog,
  buildToolManifest,
  canonicalize,
  clearancesMeeting,
  clearanceTraitValue,
  ERC7496_CLEARANCE_TRAIT_KEY,
  ERC7496_TRAIT_REQUIREMENT_KIND,
  type PaymentTerms,
  paymentCatalogSchema,
  routePaymentRequirements as priceRequirements,
  SERVICE_ICON_PATH,
  type ToolManifest,
  toolManifestPath,
  toolManifestSchema,
  toolNames,
  toolRoutes,
} from "@agent-tools/schema";
import express from "express";
import pino from "pino";
import { encodeAbiParameters, keccak256, toBytes, toFunctionSelector } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET } from "../src/config/config-rules.js";
import { listen, type RunningServer } from "../src/startup/server.js";
import { errorHandler, notFound } from "../src/transports/http/middleware/errors.js";
import { discoveryRoutes, MANIFEST_HASH_HEADER, toolManifestHash } from "../src/transports/http/routes/discovery.js";
import { ICON_PATH } from "../src/transports/http/routes/reference.js";

const PUBLIC_URL = "https://tools.test";
const NOW = new Date("2026-11-22T12:00:00.000Z");
const payment: PaymentTerms = {
  network: "eip155:31338",
  asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  payTo: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
  assetName: "USD Coin",
  assetVersion: "2",
  maxTimeoutSeconds: 120,
};
const collection = DEVNET.collection;

let server: RunningServer;
let clock = NOW;

beforeAll(async () => {
  // app.ts is not wired yet: a small app with the router, the JSON 404 and the error handler, as createApp has them.
  const app = express();
  app.use(express.json());
  app.use(discoveryRoutes({ publicUrl: PUBLIC_URL, payment, now: () => clock, collection }));
  app.use(notFound());
  app.use(errorHandler(pino({ level: "silent" })));
  server = await listen(app, "127.0.0.1", 0);
});
afterAll(async () => {
  await server?.close();
});

async function get(path: string) {
  const res = await fetch(`${server.url}${path}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  return { res, status: res.status, bytes, text, body: JSON.parse(text) };
}

/** An independent canonical form for plain JSON made of objects, arrays, strings, integers, booleans and null. */
function naiveCanonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(naiveCanonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${naiveCanonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

describe("GET /.well-known/x402", () => {
  it("answers the payment catalog the builder gives, generated now", async () => {
    const { status, res, body } = await get("/.well-known/x402");
    expect(status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(paymentCatalogSchema.parse(body)).toEqual(body);
    expect(body).toEqual(buildPaymentCatalog({ publicUrl: PUBLIC_URL, payment, now: NOW }));
    expect(body.items).toHaveLength(9);
    expect(body.items[0].accepts.map((a: { amount: string }) => a.amount)).toEqual(["1000000", "10000"]);
  });

  it("quotes each tool's price points exactly as the 402 challenge and the paid retry do", async () => {
    const { body } = await get("/.well-known/x402");
    for (const [index, tool] of toolNames.entries()) {
      const route = toolRoutes[tool];
      expect(body.items[index].resource).toBe(`${PUBLIC_URL}${route.path}`);
      expect(body.items[index].accepts).toEqual([
        priceRequirements(payment, route, "standard"),
        priceRequirements(payment, route, "discounted"),
      ]);
    }
  });

  it("stamps generatedAt with the clock of each request", async () => {
    clock = new Date("2026-12-01T00:00:00.000Z");
    try {
      expect((await get("/.well-known/x402")).body.generatedAt).toBe("2026-12-01T00:00:00.000Z");
    } finally {
      clock = NOW;
    }
  });

  it("points at the icon the reference routes serve", async () => {
    expect(SERVICE_ICON_PATH).toBe(ICON_PATH);
    expect((await get("/.well-known/x402")).body.iconUrl).toBe(`${PUBLIC_URL}${ICON_PATH}`);
  });
});

describe.each(toolNames)("GET /.well-known/ai-tool/<slug>.json for %s", (tool) => {
  const route = toolRoutes[tool];
  const expected = buildToolManifest(route, { publicUrl: PUBLIC_URL, payment, collection });

  it("answers the tool's ERC-8257 manifest, as the builder gives it", async () => {
    const { status, res, body } = await get(toolManifestPath(route.slug));
    expect(status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(toolManifestSchema.parse(body)).toEqual(body);
    expect(body).toEqual(expected);
    expect(body.endpoint).toBe(`${PUBLIC_URL}${route.path}`);
  });

  it("serves its canonical JSON, UTF-8 without a byte-order mark", async () => {
    const { bytes, text, body } = await get(toolManifestPath(route.slug));
    expect([...bytes.slice(0, 3)]).not.toEqual([0xef, 0xbb, 0xbf]);
    expect(text).toBe(canonicalize(body));
  });

  it("carries the manifestHash: keccak256 of the body, recomputed independently", async () => {
    const { res, bytes, body } = await get(toolManifestPath(route.slug));
    const served = res.headers.get(MANIFEST_HASH_HEADER);
    expect(served).toMatch(/^0x[0-9a-f]{64}$/);
    expect(keccak256(bytes)).toBe(served);
    expect(keccak256(toBytes(naiveCanonical(body)))).toBe(served);
    expect(toolManifestHash(expected)).toBe(served);
    // The same document pretty-printed hashes the same once canonicalized.
    expect(toolManifestHash(JSON.parse(JSON.stringify(body, null, 2)))).toBe(served);
  });

  it("has a manifestHash that changes when any field changes", async () => {
    const { res, body } = await get(toolManifestPath(route.slug));
    const served = res.headers.get(MANIFEST_HASH_HEADER);
    const manifest = body as ToolManifest;
    const variants: Partial<ToolManifest>[] = [
      { description: `${manifest.description}.` },
      { endpoint: `${manifest.endpoint}?v=2` },
      { pricing: [{ ...manifest.pricing[0]!, amount: "1000001" }, manifest.pricing[1]!] },
      { creatorAddress: `0x${"1".repeat(40)}` },
      { tags: [...manifest.tags, "new"] },
    ];
    const hashes = variants.map((patch) => toolManifestHash({ ...manifest, ...patch }));
    for (const hash of hashes) expect(hash).not.toBe(served);
    expect(new Set(hashes).size).toBe(variants.length);
  });

  it("is served on the endpoint's origin (ERC-8257 origin binding)", async () => {
    const { body } = await get(toolManifestPath(route.slug));
    const metadataUri = new URL(`${PUBLIC_URL}${toolManifestPath(route.slug)}`);
    expect(new URL(body.endpoint).origin).toBe(metadataUri.origin);
  });

  it("declares the clearance the discount needs with the trait-gated predicate's requirement", async () => {
    const { body } = await get(toolManifestPath(route.slug));
    const [requirement] = (body as ToolManifest).access!.requirements;
    expect(requirement!.kind).toBe(ERC7496_TRAIT_REQUIREMENT_KIND);
    const data = encodeAbiParameters(
      [{ type: "address" }, { type: "address" }, { type: "bytes32" }, { type: "bytes32[]" }],
      [collection, collection, CLEARANCE_TRAIT_KEY, clearancesMeeting(route.minimumClearance).map(encodeClearance)],
    );
    expect(requirement!.data).toBe(data.toLowerCase());
  });
});

describe("manifest constants, checked with viem and the contracts package", () => {
  it("kind is the IERC7496Trait marker interface id, bytes4(keccak256('erc7496Trait()'))", () => {
    expect(ERC7496_TRAIT_REQUIREMENT_KIND).toBe(toFunctionSelector("function erc7496Trait()"));
    expect(ERC7496_TRAIT_REQUIREMENT_KIND).toBe(keccak256(toBytes("erc7496Trait()")).slice(0, 10));
  });

  it("the clearance trait key and values are the collection's ERC-7496 encodings", () => {
    expect(ERC7496_CLEARANCE_TRAIT_KEY).toBe(CLEARANCE_TRAIT_KEY);
    expect(ERC7496_CLEARANCE_TRAIT_KEY).toBe(keccak256(toBytes("clearance")));
    for (const clearance of CLEARANCES) expect(clearanceTraitValue(clearance)).toBe(encodeClearance(clearance));
  });
});

describe("ERC-8257 test vectors (JCS, then keccak256)", () => {
  it("reproduces the free-tool manifestHash", () => {
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
    expect(toolManifestHash(free)).toBe("0x786620b1a5d903c2ac4eafe964364292ca4b6ed763a13b29423c03ccca905af0");
  });

  it("reproduces the paid-tool manifestHash", () => {
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
    expect(toolManifestHash(paid)).toBe("0xa71ef83ee66b702edb44f121510f8969e353df40b1e1587f8288fe6d352b448b");
  });
});

describe("unknown manifests", () => {
  it.each([
    "/.well-known/ai-tool/nope.json",
    "/.well-known/ai-tool/INTEL.json",
    "/.well-known/ai-tool/intel.txt",
    "/.well-known/ai-tool/intel",
    "/.well-known/ai-tool/index.json",
  ])("%s is a JSON 404 not_found", async (path) => {
    const { status, body } = await get(path);
    expect(status).toBe(404);
    expect(body.error.code).toBe("not_found");
    expect(body.error.message).toContain("/.well-known/ai-tool/intel.json");
  });
});

describe("without a collection", () => {
  it("serves manifests without an access block", async () => {
    const app = express();
    app.use(discoveryRoutes({ publicUrl: PUBLIC_URL, payment }));
    const bare = await listen(app, "127.0.0.1", 0);
    try {
      const res = await fetch(`${bare.url}/.well-known/ai-tool/portfolio.json`);
      const body = await res.json();
      expect(res.status).toBe(200);
      expect(body.access).toBeUndefined();
      expect(res.headers.get(MANIFEST_HASH_HEADER)).toBe(toolManifestHash(body));
    } finally {
      await bare.close();
    }
  });
});

import { describe, expect, it } from "vitest";
import {
  buildOpenApiDocument,
  buildPaymentCatalog,
  clearanceWording,
  type PaymentCatalogOptions,
  paymentCatalogSchema,
  paymentRequirementsSchema,
  pricePoints,
  routePaymentRequirements,
  toolNames,
  toolRoutes,
} from "../src/index.js";
import { ASSET, HOLDER, PAYMENT_TERMS } from "./helpers.js";
import { compileJsonSchema } from "./json-schema-validator.js";

const options: PaymentCatalogOptions = {
  publicUrl: "https://tools.test",
  payment: PAYMENT_TERMS,
  now: new Date("2026-11-22T12:00:00.000Z"),
};

const catalog = buildPaymentCatalog(options);
const itemOf = (tool: (typeof toolNames)[number]) => {
  const item = catalog.items.find((i) => i.resource === `${options.publicUrl}${toolRoutes[tool].path}`);
  if (!item) throw new Error(`no catalog item for ${tool}`);
  return item;
};

/** Every `$ref` and `$defs` anywhere in a JSON value. */
function refsIn(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) refsIn(item, found);
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" || key === "$defs") found.push(`${key}: ${JSON.stringify(value).slice(0, 60)}`);
      refsIn(value, found);
    }
  }
  return found;
}

describe("payment catalog", () => {
  it("is valid by paymentCatalogSchema, which strips nothing from it", () => {
    expect(paymentCatalogSchema.parse(catalog)).toEqual(catalog);
  });

  it("is plain JSON", () => {
    expect(JSON.parse(JSON.stringify(catalog))).toEqual(catalog);
  });

  it("has the spec's top-level fields", () => {
    expect(Object.keys(catalog)).toEqual([
      "x402Version",
      "serviceName",
      "description",
      "homepage",
      "openapi",
      "iconUrl",
      "network",
      "asset",
      "items",
      "generatedAt",
    ]);
    expect(catalog).toMatchObject({
      x402Version: 2,
      serviceName: "Agent Tools",
      homepage: "https://tools.test",
      openapi: "https://tools.test/openapi.json",
      iconUrl: "https://tools.test/icon.svg",
      network: "eip155:8453",
      asset: ASSET,
      generatedAt: "2026-11-22T12:00:00.000Z",
    });
    expect(catalog.description.length).toBeGreaterThan(20);
  });

  it("is generated from its inputs alone", () => {
    expect(buildPaymentCatalog(options)).toEqual(catalog);
    const later = buildPaymentCatalog({ ...options, now: new Date("2027-01-01T00:00:00Z") });
    expect(later.generatedAt).toBe("2027-01-01T00:00:00.000Z");
    expect(later.items).toEqual(catalog.items);
  });

  it("lists the seven tools in the route table's order, as POST http resources, then the mission queue", () => {
    expect(catalog.items.map((i) => i.resource)).toEqual([
      ...toolNames.map((tool) => `https://tools.test${toolRoutes[tool].path}`),
      "https://tools.test/dispatch",
      "https://tools.test/dispatch",
    ]);
    expect(catalog.items.slice(-2).map((i) => i.method)).toEqual(["POST", "GET"]);
    for (const tool of toolNames) {
      const item = itemOf(tool);
      expect(Object.keys(item)).toEqual([
        "resource",
        "type",
        "method",
        "serviceName",
        "description",
        "tags",
        "accepts",
        "input",
        "inputSchema",
        "outputSchema",
        "metered",
      ]);
      expect(item.type).toBe("http");
      expect(item.method).toBe("POST");
      expect(item.serviceName).toBe("Agent Tools");
      expect(item.description).toBe(toolRoutes[tool].description);
      expect(item.tags).toEqual(toolRoutes[tool].tags);
    }
  });
});

describe.each(toolNames)("item %s", (tool) => {
  const route = toolRoutes[tool];
  const item = itemOf(tool);

  it("accepts both price points, standard first, each with every field x402 v2 and the spec need", () => {
    expect(item.accepts.map((a) => a.amount)).toEqual([pricePoints.standard, pricePoints.discounted]);
    expect(item.accepts.map((a) => a.amount)).toEqual(["1000000", "10000"]);
    for (const accepts of item.accepts) {
      expect(paymentRequirementsSchema.parse(accepts)).toEqual(accepts);
      expect(accepts).toEqual({
        scheme: "exact",
        network: "eip155:8453",
        asset: ASSET,
        currency: ASSET,
        amount: accepts.amount,
        payTo: HOLDER,
        recipient: HOLDER,
        maxTimeoutSeconds: 120,
        mimeType: "application/json",
        description: accepts.description,
        extra: { name: "USD Coin", version: "2" },
      });
    }
  });

  it("says who each price point is for", () => {
    const [standard, discounted] = item.accepts;
    expect(standard?.description).toBe(`${route.summary}: standard price, any caller`);
    expect(discounted?.description).toBe(`${route.summary}: price for ${clearanceWording[route.minimumClearance]}`);
  });

  it("quotes the same requirements as the OpenAPI document and the server's challenge builder", () => {
    expect(item.accepts).toEqual([
      routePaymentRequirements(options.payment, route, "standard"),
      routePaymentRequirements(options.payment, route, "discounted"),
    ]);
    const doc = buildOpenApiDocument({ serverUrl: options.publicUrl, payment: options.payment }) as {
      paths: Record<string, { post: { "x-payment-info": { pricePoints: { accepts: unknown }[] } } }>;
    };
    const info = doc.paths[route.path]?.post["x-payment-info"];
    expect(info?.pricePoints.map((p) => p.accepts)).toEqual(item.accepts);
  });

  it("has the route's sample input, valid for its request schema", () => {
    expect(item.input).toEqual(route.sampleInput);
    expect(route.request.safeParse(item.input).success).toBe(true);
  });

  it("has self-contained JSON Schemas: no $ref, no $defs, draft 2020-12", () => {
    expect(refsIn(item.inputSchema)).toEqual([]);
    expect(refsIn(item.outputSchema)).toEqual([]);
    for (const schema of [item.inputSchema, item.outputSchema]) {
      expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
      expect(schema.type).toBe("object");
      expect(schema.properties).toBeTypeOf("object");
    }
  });

  it("inputSchema validates the sample input and rejects what the request schema rejects", () => {
    const validate = compileJsonSchema(item.inputSchema);
    expect(validate(item.input), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...item.input, tokenId: 0 })).toBe(false);
    expect(validate({ ...item.input, tokenId: 6667 })).toBe(false);
    expect(validate({ ...item.input, tokenId: "7" })).toBe(false);
    const { tokenId: _tokenId, ...withoutTokenId } = item.input;
    expect(validate(withoutTokenId)).toBe(false);
    // Defaults may be left out (the input side of the contract).
    for (const required of (item.inputSchema.required as string[]) ?? []) {
      expect(route.request.shape).toHaveProperty(required);
    }
  });

  it("outputSchema validates the route's sample output and rejects one without the brief", () => {
    const validate = compileJsonSchema(item.outputSchema);
    expect(validate(route.sampleOutput), JSON.stringify(validate.errors)).toBe(true);
    const { brief: _brief, ...withoutBrief } = route.sampleOutput as Record<string, unknown>;
    expect(validate(withoutBrief)).toBe(false);
  });
});

describe("catalog of another deployment", () => {
  it("follows the public URL and the payment terms", () => {
    const other = buildPaymentCatalog({
      publicUrl: "http://127.0.0.1:8402",
      payment: { ...options.payment, network: "eip155:31338", maxTimeoutSeconds: 60 },
      now: options.now,
    });
    expect(other.homepage).toBe("http://127.0.0.1:8402");
    expect(other.items[0]?.resource).toBe("http://127.0.0.1:8402/intel");
    expect(other.network).toBe("eip155:31338");
    expect(other.items.flatMap((i) => i.accepts.map((a) => [a.network, a.maxTimeoutSeconds]))).toEqual(
      Array(18).fill(["eip155:31338", 60]),
    );
  });
});

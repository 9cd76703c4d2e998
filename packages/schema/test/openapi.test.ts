import { createConfig, lintFromString, type NormalizedProblem } from "@redocly/openapi-core";
import { beforeAll, describe, expect, it } from "vitest";
import {
  buildOpenApiDocument,
  errorBodySchema,
  type OpenApiOptions,
  paymentRequiredSchema,
  pricePoints,
  toolNames,
  toolRoutes,
} from "../src/index.js";
import { ASSET, HOLDER, integerLimits } from "./helpers.js";

const options: OpenApiOptions = {
  serverUrl: "http://127.0.0.1:8402",
  payment: {
    network: "eip155:31338",
    asset: ASSET,
    payTo: HOLDER,
    assetName: "USD Coin",
    assetVersion: "2",
    maxTimeoutSeconds: 60,
  },
};

// The document is plain JSON; these loose views keep the assertions readable.
// biome-ignore lint/suspicious/noExplicitAny: walking an untyped JSON document
type Json = any;

const doc: Json = buildOpenApiDocument(options);
const schemas: Record<string, Json> = doc.components.schemas;
/** Follows a `$ref` into components.schemas. */
const deref = (schema: Json): Json =>
  schema?.$ref ? schemas[String(schema.$ref).replace("#/components/schemas/", "")] : schema;
const operation = (path: string): Json => doc.paths[path]?.post;

describe("document", () => {
  it("is OpenAPI 3.1.0, interface version 1.0.0, served from the given origin", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0.0");
    expect(doc.servers).toEqual([{ url: options.serverUrl }]);
  });

  it("has the public GET routes", () => {
    for (const path of [
      "/healthz",
      "/agents/info/{tokenId}",
      "/.well-known/agents/{tokenId}.json",
      "/agents/{tokenId}/binding",
      "/openapi.json",
    ]) {
      expect(doc.paths[path]?.get, path).toBeDefined();
    }
  });

  it("defines the seven tools as POST only, with the spec's operationIds", () => {
    const operationIds = toolNames.map((tool) => {
      const pathItem = doc.paths[toolRoutes[tool].path];
      expect(Object.keys(pathItem)).toEqual(["post"]);
      return pathItem.post.operationId;
    });
    expect(operationIds.sort()).toEqual(
      [
        "serviceAllowlistScan",
        "serviceAltchainRadar",
        "serviceB20Radar",
        "serviceDropRadar",
        "serviceIntel",
        "serviceOfferRadar",
        "servicePortfolio",
      ].sort(),
    );
  });

  it("is built afresh each time (no state shared between builds)", () => {
    const other: Json = buildOpenApiDocument({ ...options, serverUrl: "https://tools.example.org" });
    expect(other.servers).toEqual([{ url: "https://tools.example.org" }]);
    const resource = other.paths["/intel"].post.responses["402"].content["application/json"].example.resource;
    expect(resource.url).toBe("https://tools.example.org/intel");
    expect(buildOpenApiDocument(options)).toEqual(doc);
  });
});

describe.each(toolNames)("%s operation", (tool) => {
  const route = toolRoutes[tool];
  const op = operation(route.path);
  const body = (status: string) => op.responses[status]?.content?.["application/json"];

  it("takes a required JSON body whose example is the route's sample input", () => {
    expect(op.requestBody.required).toBe(true);
    const content = op.requestBody.content["application/json"];
    expect(deref(content.schema)?.type).toBe("object");
    expect(content.example).toEqual(route.sampleInput);
  });

  it.each(["200", "400", "402", "403"])("answers %s with a schema and an example", (status) => {
    expect(deref(body(status)?.schema)).toBeDefined();
    expect(body(status)?.example).toBeDefined();
  });

  it("shows the sample output as the 200 example, with the response's required fields", () => {
    expect(body("200").example).toEqual(route.sampleOutput);
    const required = Object.entries(route.response.shape)
      .filter(([, field]) => !field.safeParse(undefined).success)
      .map(([key]) => key);
    expect([...deref(body("200").schema).required].sort()).toEqual(required.sort());
  });

  it("gives error examples that match the error and x402 schemas", () => {
    expect(errorBodySchema.safeParse(body("400").example).success).toBe(true);
    expect(errorBodySchema.safeParse(body("403").example).success).toBe(true);
    const challenge = paymentRequiredSchema.parse(body("402").example);
    expect(challenge.resource.url).toBe(`${options.serverUrl}${route.path}`);
    expect(challenge.accepts.map((accept) => accept.amount)).toEqual([pricePoints.standard]);
  });

  it("requires only the fields without a default", () => {
    const schema = deref(op.requestBody.content["application/json"].schema);
    const expectedRequired = tool === "offerRadar" ? ["slugs", "tokenId"] : ["tokenId"];
    expect([...schema.required].sort()).toEqual(expectedRequired);
    for (const [key, property] of Object.entries<Json>(schema.properties)) {
      if (property.default !== undefined) expect(schema.required, key).not.toContain(key);
    }
  });

  it("allows unknown body properties only where the schema strips them", () => {
    const schema = deref(op.requestBody.content["application/json"].schema);
    expect(schema.additionalProperties === false).toBe(tool === "altchainRadar");
  });

  it("has x-payment-info: x402, 0.01 to 1.00 USD, both price points", () => {
    const info = op["x-payment-info"];
    expect(info.protocol).toBe("x402");
    expect(info.pricing).toMatchObject({ min: "0.01", max: "1.00", currency: "USD" });
    expect(info.minimumClearance).toBe(route.minimumClearance);
    const points = Object.fromEntries(info.pricePoints.map((point: Json) => [point.name, point]));
    expect(Object.keys(points).sort()).toEqual(["discounted", "standard"]);
    expect(points.standard).toMatchObject({ usd: "1.00", accepts: { amount: "1000000" } });
    expect(points.discounted).toMatchObject({ usd: "0.01", accepts: { amount: "10000" } });
    for (const point of Object.values<Json>(points)) {
      expect(point.accepts).toMatchObject({
        scheme: "exact",
        network: "eip155:31338",
        asset: ASSET,
        currency: ASSET,
        payTo: HOLDER,
        recipient: HOLDER,
        maxTimeoutSeconds: 60,
        mimeType: "application/json",
        extra: { name: "USD Coin", version: "2" },
      });
    }
  });
});

describe("request bounds in the document", () => {
  const schemaOf = (tool: (typeof integerLimits)[number]["tool"]) =>
    deref(operation(toolRoutes[tool].path).requestBody.content["application/json"].schema);

  it.each(integerLimits)("$tool $field: minimum $min, maximum $max, default $default", (limit) => {
    expect(schemaOf(limit.tool).properties[limit.field]).toMatchObject({
      type: "integer",
      minimum: limit.min,
      maximum: limit.max,
      default: limit.default,
    });
  });

  it("tokenId is an integer from 1 to 6666 in every tool", () => {
    for (const tool of toolNames) {
      expect(deref(operation(toolRoutes[tool].path).requestBody.content["application/json"].schema)).toMatchObject({
        properties: { tokenId: { type: "integer", minimum: 1, maximum: 6666 } },
      });
    }
  });

  it("array bounds: watchSlugs at most 10, slugs 1 to 10", () => {
    expect(schemaOf("dropRadar").properties.watchSlugs).toMatchObject({ type: "array", maxItems: 10 });
    const offer = deref(operation("/offer-radar").requestBody.content["application/json"].schema);
    expect(offer.properties.slugs).toMatchObject({ type: "array", minItems: 1, maxItems: 10 });
  });
});

describe("OpenAPI lint (Redocly, recommended ruleset)", () => {
  let problems: NormalizedProblem[] = [];

  beforeAll(async () => {
    const config = await createConfig({ extends: ["recommended"] });
    problems = await lintFromString({
      source: JSON.stringify(doc, null, 2),
      absoluteRef: "openapi.json",
      config,
    });
  });

  it("reports no errors", () => {
    const errors = problems
      .filter((problem) => problem.severity === "error")
      .map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer ?? "?"}`);
    expect(errors).toEqual([]);
  });

  it("finds every example valid against its schema", () => {
    const invalidExamples = problems
      .filter((problem) => problem.ruleId === "no-invalid-media-type-examples")
      .map((problem) => `${problem.message} at ${problem.location[0]?.pointer ?? "?"}`);
    expect(invalidExamples).toEqual([]);
  });
});

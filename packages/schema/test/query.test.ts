import { describe, expect, it } from "vitest";
import { queryToInput, requestFields, type ToolName, toolRoutes } from "../src/index.js";
import { issuePaths, requestOf } from "./helpers.js";

/** What an HTTP framework hands over for `?a=1&b=2&b=3`: one string, or an array for a repeated parameter. */
function query(search: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(search)) {
    const seen = out[key];
    out[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

/** Coerces a query string for a tool and validates it with the tool's request schema. */
function validate(tool: ToolName, search: string) {
  const schema = requestOf(tool);
  return schema.safeParse(queryToInput(schema, query(search)));
}

describe("queryToInput", () => {
  it("GET /intel?tokenId=7 validates like the body {tokenId: 7}", () => {
    expect(queryToInput(toolRoutes.intel.request, { tokenId: "7" })).toEqual({ tokenId: 7 });
    expect(validate("intel", "tokenId=7").data).toEqual({ tokenId: 7 });
  });

  it("coerces numbers and booleans by the field's type and leaves strings alone", () => {
    const result = validate(
      "dropRadar",
      "tokenId=7&limit=10&scanChains=false&enrich=true&checkWalletEligibility=1&chain=base&type=upcoming",
    );
    expect(result.data).toMatchObject({
      tokenId: 7,
      limit: 10,
      scanChains: false,
      enrich: true,
      checkWalletEligibility: true,
      chain: "base",
      type: "upcoming",
    });
  });

  it("reads 0 as false for a boolean field", () => {
    expect(validate("altchainRadar", "tokenId=3&includeStables=0").data?.includeStables).toBe(false);
    expect(validate("altchainRadar", "tokenId=3&includeStables=1").data?.includeStables).toBe(true);
  });

  it("applies the defaults of fields left out of the query", () => {
    expect(validate("b20Radar", "tokenId=7").data).toEqual({ tokenId: 7, blocksBack: 302400, limit: 25 });
    expect(validate("portfolio", "tokenId=7").data).toEqual({ tokenId: 7, chain: "ethereum", nftLimit: 50 });
  });

  it("skips parameters whose value is undefined", () => {
    const schema = toolRoutes.b20Radar.request;
    expect(queryToInput(schema, { tokenId: "7", limit: undefined })).toEqual({ tokenId: 7 });
  });

  it("turns repeated parameters into an array", () => {
    expect(validate("offerRadar", "tokenId=3&slugs=night-owls&slugs=agent-tools-genesis").data?.slugs).toEqual([
      "night-owls",
      "agent-tools-genesis",
    ]);
    expect(validate("dropRadar", "tokenId=7&watchSlugs=a&watchSlugs=b&watchSlugs=c").data?.watchSlugs).toEqual([
      "a",
      "b",
      "c",
    ]);
  });

  it("turns a single value for an array field into a one-element array", () => {
    expect(queryToInput(toolRoutes.offerRadar.request, { tokenId: "3", slugs: "night-owls" })).toEqual({
      tokenId: 3,
      slugs: ["night-owls"],
    });
    expect(validate("dropRadar", "tokenId=7&watchSlugs=night-owls").data?.watchSlugs).toEqual(["night-owls"]);
  });

  it("applies the array bounds to repeated parameters", () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `slugs=s${i}`).join("&");
    expect(validate("offerRadar", `tokenId=3&${eleven}`).error?.issues.map((i) => i.path)).toEqual([["slugs"]]);
  });

  it.each([
    ["a word", "intel", "tokenId=seven", "tokenId"],
    ["an empty value", "intel", "tokenId=", "tokenId"],
    ["a hex number", "intel", "tokenId=0x7", "tokenId"],
    ["a fraction", "intel", "tokenId=7.5", "tokenId"],
    ["an out-of-range number", "intel", "tokenId=6667", "tokenId"],
    ["a word for a limit", "dropRadar", "tokenId=7&limit=ten", "limit"],
    ["a word for a boolean", "dropRadar", "tokenId=7&scanChains=yes", "scanChains"],
    ["a capitalised boolean", "altchainRadar", "tokenId=3&includeStables=TRUE", "includeStables"],
  ] as const)("%s fails validation naming the field (%s: ?%s)", (_label, tool, search, field) => {
    const schema = requestOf(tool);
    expect(issuePaths(schema, queryToInput(schema, query(search)))).toEqual([field]);
  });

  it("leaves a value that does not coerce as written", () => {
    expect(queryToInput(toolRoutes.intel.request, { tokenId: "seven" })).toEqual({ tokenId: "seven" });
  });

  it("keeps a repeated scalar parameter as an array, so validation names it instead of picking one", () => {
    expect(queryToInput(toolRoutes.intel.request, { tokenId: ["7", "8"] })).toEqual({ tokenId: ["7", "8"] });
    expect(validate("intel", "tokenId=7&tokenId=8").error?.issues.map((i) => i.path)).toEqual([["tokenId"]]);
  });

  it("passes unknown parameters on: altchain-radar rejects them, the other tools drop them", () => {
    const altchain = validate("altchainRadar", "tokenId=3&foo=1");
    expect(altchain.success).toBe(false);
    expect(altchain.error?.issues).toEqual([expect.objectContaining({ code: "unrecognized_keys", keys: ["foo"] })]);
    expect(validate("intel", "tokenId=7&foo=1").data).toEqual({ tokenId: 7 });
  });

  it("leaves slug and address values uncoerced, so their patterns still apply", () => {
    expect(validate("offerRadar", "tokenId=3&slugs=..%2Fx").error?.issues.map((i) => i.path)).toEqual([["slugs", 0]]);
    expect(validate("offerRadar", "tokenId=3&slugs=123").data?.slugs).toEqual(["123"]);
  });

  it("takes prototype-named parameters as parameters, never as the schema's fields or the input's prototype", () => {
    for (const key of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      const input = queryToInput(toolRoutes.intel.request, { tokenId: "7", [key]: ["1", "2"] });
      expect(Object.getPrototypeOf(input)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(input, key)?.value).toEqual(["1", "2"]);
      expect(requestOf("intel").safeParse(input).data).toEqual({ tokenId: 7 });
      expect(requestOf("altchainRadar").safeParse({ ...input, tokenId: 3 }).success).toBe(false);
    }
  });

  it("refuses a repeated scalar of any tool with the field named, and never throws", () => {
    for (const tool of Object.keys(toolRoutes) as ToolName[]) {
      const schema = requestOf(tool);
      for (const key of Object.keys(schema.shape)) {
        // Array fields take repeated parameters: a single value comes out as an array for them.
        if (Array.isArray(queryToInput(schema, { [key]: "a" })[key])) continue;
        const result = schema.safeParse(queryToInput(schema, { tokenId: "3", [key]: ["a", "b"] }));
        expect(result.success, `${tool}.${key}`).toBe(false);
        expect(result.error?.issues.map((i) => i.path[0])).toContain(key);
      }
    }
  });
});

describe("requestFields", () => {
  it("names every field of every tool's request, with a kind the query coercion agrees with", () => {
    for (const [name, route] of Object.entries(toolRoutes)) {
      const fields = requestFields(route.request);
      expect(
        fields.map((f) => f.name),
        name,
      ).toEqual(Object.keys(route.request.shape));
      for (const field of fields) {
        // A number field takes "7" from a query string as 7, a boolean "true" as true, a list a repeated value.
        const sample = field.kind === "number" ? "7" : field.kind === "boolean" ? "true" : "x";
        const input = queryToInput(route.request, { [field.name]: sample });
        if (field.kind === "number") expect(input[field.name], `${name}.${field.name}`).toBe(7);
        if (field.kind === "boolean") expect(input[field.name], `${name}.${field.name}`).toBe(true);
        if (field.kind === "array") expect(input[field.name], `${name}.${field.name}`).toEqual(["x"]);
      }
    }
  });

  it("reads through optional and default wrappers to the kind and the description", () => {
    const fields = new Map(requestFields(toolRoutes.dropRadar.request).map((f) => [f.name, f]));
    expect(fields.get("tokenId")).toMatchObject({ kind: "number" });
    expect(fields.get("checkWalletEligibility")).toMatchObject({ kind: "boolean" });
    expect(fields.get("limit")?.kind).toBe("number");
    for (const field of fields.values()) expect(field.description, field.name).toMatch(/\w/);
  });
});

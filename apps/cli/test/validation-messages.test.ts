/**
 * Every field of every tool, given out of bounds as flags give it: the message names the flag and says what is wrong
 * in the CLI's words, never in Zod's. The cases come from each request contract's own JSON Schema (its bounds,
 * enums, patterns and required fields), so a field added to a contract is covered without a line here. The SDK
 * refuses each request before sending it: the client's base URL is never reached.
 */
import { createAgentToolsClient } from "@agent-tools/sdk";
import { ForbiddenError, requestFields, type ToolName, toolRoutes, ValidationError } from "@agent-tools/sdk/contracts";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { describeFailure } from "../src/exit-codes.js";
import { kebab, singular, toolInputFromOptions } from "../src/tool-options.js";

/** Zod's own English messages ("Too big: expected number to be <=50", "Invalid input: expected array, ..."). */
const ZOD_WORDING =
  /Too (big|small)|Invalid (input|option|string|number|key|element)|Unrecognized key|expected \w+, received|\.:/;

interface FieldSchema {
  type?: string | string[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  enum?: unknown[];
  pattern?: string;
  items?: FieldSchema;
  anyOf?: FieldSchema[];
}

/** What a user can type for a field that breaks its contract: each value as the flag would carry it. */
function badValues(field: FieldSchema, sample: unknown): string[][] {
  const schema = field.anyOf?.find((s) => s.type !== "null") ?? field;
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  const values: string[][] = [];
  if (type === "integer" || type === "number") {
    values.push(["abc"]);
    if (schema.minimum !== undefined) values.push([String(schema.minimum - 1)]);
    if (schema.maximum !== undefined) values.push([String(schema.maximum + 1)]);
    if (type === "integer") values.push(["1.5"]);
  } else if (type === "string") {
    if (schema.enum) values.push(["not-a-value"]);
    if (schema.pattern) values.push(["!not valid!"]);
    if (schema.maxLength !== undefined) values.push(["a".repeat(schema.maxLength + 1)]);
  } else if (type === "array") {
    const item = String((Array.isArray(sample) ? sample[0] : undefined) ?? "x");
    if (schema.maxItems !== undefined) values.push(Array.from({ length: schema.maxItems + 1 }, () => item));
    values.push(...badValues(schema.items ?? {}, item).map((v) => v.slice(0, 1)));
  }
  return values;
}

/** The sample input as flags carry it: strings, lists of strings. */
function asFlags(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(input).map(([key, value]) => [
      Array.isArray(value) ? singular(key) : key,
      Array.isArray(value) ? value.map(String) : typeof value === "boolean" ? value : String(value),
    ]),
  );
}

const client = createAgentToolsClient({ baseUrl: "http://127.0.0.1:9" });

async function messageFor(name: ToolName, options: Record<string, unknown>): Promise<string> {
  const input = toolInputFromOptions(name, options);
  const error = await (client[name] as (input: unknown) => Promise<unknown>)(input).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error, `${name} ${JSON.stringify(input)} is refused before sending`).toBeInstanceOf(ValidationError);
  return describeFailure(error).message;
}

const cases = (Object.keys(toolRoutes) as ToolName[]).flatMap((name) => {
  const route = toolRoutes[name];
  // The request's JSON Schema, its named definitions resolved: the object itself, its fields, what it requires.
  const document = z.toJSONSchema(route.request, { io: "input" }) as Record<string, unknown> & {
    $defs?: Record<string, unknown>;
  };
  const resolve = (node: unknown): unknown => {
    const ref = (node as { $ref?: string } | undefined)?.$ref;
    return ref ? resolve(document.$defs?.[ref.replace("#/$defs/", "")]) : node;
  };
  const json = resolve(document) as { properties: Record<string, FieldSchema>; required?: string[] };
  const property = (field: string) => resolve(json.properties[field]) as FieldSchema | undefined;
  const sample = asFlags(route.sampleInput);
  return requestFields(route.request).flatMap(({ name: field, kind }) => {
    const flag = kind === "array" ? singular(field) : field;
    const rows: [string, ToolName, string, Record<string, unknown>][] = [];
    if (json.required?.includes(field)) {
      const { [flag]: _, ...without } = sample;
      rows.push([`${name} without --${kebab(flag)}`, name, field, without]);
    }
    for (const value of badValues(property(field) ?? {}, (route.sampleInput as Record<string, unknown>)[field])) {
      const given = kind === "array" ? value : value[0];
      rows.push([
        `${name} --${kebab(flag)} ${value.join(" ").slice(0, 40)}`,
        name,
        field,
        { ...sample, [flag]: given },
      ]);
    }
    return rows;
  });
});

describe("validation messages of the tools' flags", () => {
  it("cover every tool, with at least one bad value per bounded field", () => {
    expect(new Set(cases.map(([, name]) => name))).toEqual(new Set(Object.keys(toolRoutes)));
    expect(cases.length).toBeGreaterThan(40);
  });

  it.each(cases)("%s: names the flag and says what is wrong in the CLI's words", async (_, name, field, options) => {
    const message = await messageFor(name, options);
    expect(message).not.toMatch(ZOD_WORDING);
    // The offending flag, and what is wrong with it after the colon.
    const line = message.split("\n").find((l) => l.includes(`--${kebab(singular(field))}`) || l.includes("--param"));
    expect(line, message).toBeDefined();
    expect(line!.split(": ").slice(1).join(": ").trim().length, message).toBeGreaterThan(3);
  });

  it("says a missing field is required", async () => {
    expect(await messageFor("intel", {})).toMatch(/--token-id: is required/);
    expect(await messageFor("offerRadar", { tokenId: "5" })).toMatch(/--slug: is required/);
  });

  it("says the bound a value passes", async () => {
    expect(await messageFor("dropRadar", { tokenId: "1", limit: "51" })).toMatch(/--limit: must be at most 50/);
  });
});

describe("a clearance refusal", () => {
  it("names the clearance needed once", () => {
    const sentence = "altchain-radar needs Elite clearance; token 1 has Holder.";
    const refusal = new ForbiddenError(sentence, 403, "insufficient_clearance", [
      { field: "tokenId", message: "needs Elite clearance", requiredClearance: "Elite" },
    ]);
    expect(describeFailure(refusal).message.match(/Elite clearance/g)).toHaveLength(1);
  });
});

/**
 * Validates simulator answers against OpenSea's own OpenAPI document (opensea-api.json from @opensea/api-types)
 * with a real JSON Schema 2020-12 validator: Ajv, as installed for @redocly/openapi-core, with ajv-formats.
 * `$ref`s into `#/components/schemas` are resolved by compiling each schema with the components it reaches as
 * `$defs`.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

export interface Validator {
  (data: unknown): boolean;
  errors?: unknown[] | null;
}
interface AjvInstance {
  compile(schema: object): Validator;
  addKeyword(keyword: string): AjvInstance;
  addFormat(name: string, format: { type: "number" | "string"; validate: (value: number) => boolean }): AjvInstance;
}

const require = createRequire(import.meta.url);
const fromOpenapiCore = createRequire(require.resolve("@redocly/openapi-core"));
const { default: Ajv2020 } = fromOpenapiCore("@redocly/ajv/dist/2020") as {
  default: new (options: object) => AjvInstance;
};
const { default: addFormats } = fromOpenapiCore("ajv-formats") as { default: (ajv: AjvInstance) => void };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const openapi = JSON.parse(readFileSync(require.resolve("@opensea/api-types/opensea-api.json"), "utf8")) as {
  paths: Record<
    string,
    Record<string, { parameters?: { name: string; in: string }[]; responses: Record<string, Json> }>
  >;
  components: { schemas: Record<string, Json> };
};

const REF_PREFIX = "#/components/schemas/";

/** The named schema with every component it reaches, refs rewritten to `#/$defs/...`. */
function closure(name: string): object {
  const defs: Record<string, Json> = {};
  const rewrite = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node && typeof node === "object") {
      const out: Record<string, Json> = {};
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string" && value.startsWith(REF_PREFIX)) {
          const target = value.slice(REF_PREFIX.length);
          if (!(target in defs)) {
            defs[target] = {};
            defs[target] = rewrite(openapi.components.schemas[target]!);
          }
          out[key] = `#/$defs/${target}`;
        } else {
          out[key] = rewrite(value);
        }
      }
      return out;
    }
    return node;
  };
  const root = rewrite({ $ref: `${REF_PREFIX}${name}` }) as Record<string, Json>;
  return { ...root, $defs: defs };
}

function newAjv(): AjvInstance {
  // Strict: unknown keywords and formats are errors. `example` is OpenAPI's annotation keyword; OpenAPI's numeric
  // formats are checked for real (integer ranges), not ignored. strictTypes/strictRequired are off only because
  // OpenSea's document puts `required` beside `allOf` without a `type` (Offer, Listing); `required` still applies.
  const ajv = new Ajv2020({ strict: true, strictTypes: false, strictRequired: false, allErrors: true }).addKeyword(
    "example",
  );
  addFormats(ajv);
  ajv.addFormat("int32", { type: "number", validate: (n) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat("int64", { type: "number", validate: (n) => Number.isSafeInteger(n) });
  ajv.addFormat("float", { type: "number", validate: (n) => Number.isFinite(n) });
  ajv.addFormat("double", { type: "number", validate: (n) => Number.isFinite(n) });
  return ajv;
}

const cache = new Map<string, Validator>();

/** A validator for `#/components/schemas/<name>`. */
export function schemaValidator(name: string): Validator {
  let v = cache.get(name);
  if (!v) {
    if (!openapi.components.schemas[name]) throw new Error(`no schema ${name} in opensea-api.json`);
    v = newAjv().compile(closure(name));
    cache.set(name, v);
  }
  return v;
}

/** The schema name of an operation's 200 answer (`GET path`). */
export function responseSchemaName(path: string, status = "200"): string {
  const response = openapi.paths[path]?.get?.responses[status] as
    | { content?: Record<string, { schema?: { $ref?: string } }> }
    | undefined;
  const ref = response?.content?.["*/*"]?.schema?.$ref ?? response?.content?.["application/json"]?.schema?.$ref;
  if (!ref) throw new Error(`no ${status} schema for GET ${path}`);
  return ref.slice(REF_PREFIX.length);
}

/** Validates `data` as the 200 answer of `GET path`; returns Ajv's errors (empty when valid). */
export function validateResponse(path: string, data: unknown): unknown[] {
  const v = schemaValidator(responseSchemaName(path));
  return v(data) ? [] : (v.errors ?? ["invalid"]);
}

/** Compiles an arbitrary JSON Schema with the same strict settings (for DexScreener's documented shapes). */
export function compileSchema(schema: object): Validator {
  return newAjv().compile(schema);
}

/**
 * Paths in `data` whose property the schema does not declare (OpenSea's schemas allow extra properties, so Ajv
 * alone would not notice an invented field). Follows `$ref`, `allOf` and `items`.
 */
export function undeclaredProperties(name: string, data: unknown): string[] {
  const found: string[] = [];
  const resolve = (schema: Json): Record<string, Json> => {
    if (!schema || typeof schema !== "object" || Array.isArray(schema)) return {};
    const ref = (schema as { $ref?: string }).$ref;
    if (typeof ref === "string" && ref.startsWith(REF_PREFIX)) {
      return resolve(openapi.components.schemas[ref.slice(REF_PREFIX.length)]!);
    }
    return schema as Record<string, Json>;
  };
  const walk = (schemaIn: Json, value: unknown, path: string) => {
    const schema = resolve(schemaIn);
    const parts = [schema, ...((schema.allOf as Json[] | undefined) ?? []).map(resolve)];
    if (Array.isArray(value)) {
      const items = parts.map((p) => p.items).find((i) => i !== undefined);
      if (items !== undefined) {
        value.forEach((v, i) => {
          walk(items, v, `${path}[${i}]`);
        });
      }
      return;
    }
    if (!value || typeof value !== "object") return;
    const properties: Record<string, Json> = Object.assign(
      {},
      ...parts.map((p) => (p.properties as Record<string, Json> | undefined) ?? {}),
    );
    const open = parts.every((p) => p.properties === undefined && p.allOf === undefined);
    for (const [key, v] of Object.entries(value)) {
      if (key in properties) walk(properties[key]!, v, `${path}.${key}`);
      else if (!open) found.push(`${path}.${key}`);
    }
  };
  walk({ $ref: `${REF_PREFIX}${name}` }, data, "$");
  return found;
}

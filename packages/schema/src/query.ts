import type { z } from "zod";

type QueryValue = string | string[] | undefined;

type Def = Record<string, unknown> & { type: string };
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

interface BaseKind {
  kind: string;
  element?: z.ZodType;
  description?: string;
  values?: readonly string[];
  defaultValue?: unknown;
  example?: unknown;
}

/** The `example` a schema's metadata gives (`.meta({ example })`), if any. */
const exampleOf = (schema: z.ZodType): unknown => (schema.meta() as { example?: unknown } | undefined)?.example;

/**
 * The base kind of a field, looking through optional/default/nullable/pipe wrappers: the first description met, the
 * default a wrapper gives, and an enum's values.
 */
function baseKind(schema: z.ZodType): BaseKind {
  let current = schema;
  let description = current.description;
  let defaultValue: unknown;
  let example = exampleOf(current);
  for (;;) {
    const def = defOf(current);
    if (def.type === "default" && defaultValue === undefined) defaultValue = def.defaultValue;
    if (def.type === "optional" || def.type === "default" || def.type === "nullable" || def.type === "prefault") {
      current = def.innerType as z.ZodType;
    } else if (def.type === "pipe") {
      current = def.in as z.ZodType;
    } else {
      const element = def.type === "array" ? (def.element as z.ZodType) : undefined;
      const values = def.type === "enum" ? Object.values(def.entries as Record<string, string>) : undefined;
      return {
        kind: def.type,
        ...(element ? { element } : {}),
        ...(description ? { description } : {}),
        ...(values ? { values } : {}),
        ...(defaultValue !== undefined ? { defaultValue } : {}),
        ...(example !== undefined ? { example } : {}),
      };
    }
    description ??= current.description;
    example ??= exampleOf(current);
  }
}

/** One field of a request, as text-based callers (query strings, command-line flags) need to know it. */
export interface RequestField {
  /** The field's name in the request (`tokenId`). */
  name: string;
  /** Zod's type name of the field under its optional/default wrappers: `string`, `number`, `boolean`, `array`, `enum`... */
  kind: string;
  /** For a list, the kind of its items. */
  itemKind?: string;
  /** The field's description in the contract, when it has one. */
  description?: string;
  /** The values an enum field takes (`type`: "featured", "upcoming", ...). */
  values?: readonly string[];
  /** The value the contract gives the field when the request leaves it out. */
  defaultValue?: unknown;
  /** An example value from the contract's metadata. */
  example?: unknown;
}

/**
 * The fields of a request schema, in the order the contract lists them, with their kinds and descriptions.
 * @param schema A request contract, such as `toolRoutes.intel.request`.
 * @example
 * import { requestFields, toolRoutes } from "@agent-tools/schema";
 * const names = requestFields(toolRoutes.intel.request).map((field) => field.name); // ["tokenId"]
 */
export function requestFields(schema: z.ZodObject): readonly RequestField[] {
  return [...fieldsOf(schema).values()];
}

/** Each schema's fields by name, read once: `queryToInput` runs on every GET of a paid route. */
const fieldsCache = new WeakMap<z.ZodObject, ReadonlyMap<string, RequestField>>();

function fieldsOf(schema: z.ZodObject): ReadonlyMap<string, RequestField> {
  let fields = fieldsCache.get(schema);
  if (!fields) {
    fields = new Map(
      Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => {
        const { element, ...about } = baseKind(field);
        const itemKind = element ? baseKind(element).kind : undefined;
        return [name, { name, ...about, ...(itemKind ? { itemKind } : {}) }];
      }),
    );
    fieldsCache.set(schema, fields);
  }
  return fields;
}

function coerceScalar(kind: string, value: string): unknown {
  if (kind === "number" || kind === "int") {
    return /^-?[0-9]+(\.[0-9]+)?$/.test(value.trim()) ? Number(value) : value;
  }
  if (kind === "boolean") {
    if (value === "true" || value === "1") return true;
    if (value === "false" || value === "0") return false;
    return value;
  }
  return value;
}

/**
 * Turns URL query parameters into the input of a request schema, so that GET variants are validated by the
 * same schema as POST bodies: numbers and booleans are coerced by the field's type, arrays are built from
 * repeated parameters. A value that does not coerce is passed on as written and fails validation with the
 * field named. Unknown parameters are passed on too (a strict schema rejects them).
 */
export function queryToInput(schema: z.ZodObject, query: Record<string, QueryValue>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  // Own properties only, set as data: a key named `__proto__` or `constructor` is a parameter like any other, never
  // the prototype of the input nor a field of the schema object.
  const set = (key: string, value: unknown) =>
    Object.defineProperty(input, key, { value, enumerable: true, writable: true, configurable: true });
  const fields = fieldsOf(schema);
  for (const [key, raw] of Object.entries(query)) {
    if (raw === undefined) continue;
    const field = fields.get(key);
    if (!field) {
      set(key, raw);
    } else if (field.kind === "array") {
      const values = Array.isArray(raw) ? raw : [raw];
      set(
        key,
        values.map((value) => coerceScalar(field.itemKind ?? "string", value)),
      );
    } else {
      // A repeated scalar parameter is kept as an array, so validation reports it instead of picking one.
      set(key, Array.isArray(raw) ? raw : coerceScalar(field.kind, raw));
    }
  }
  return input;
}

type QueryScalar = string | number | boolean | bigint;

/**
 * The query string of a GET request (`?tokenId=3&status=done`, or "" when there is nothing to send): the inverse
 * of `queryToInput`. Scalars are written as text, arrays as repeated parameters; `undefined` and `null` fields are
 * left out. A nested object cannot be a query parameter and throws a `TypeError`.
 */
export function inputToQuery(input: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue;
      if (typeof item === "object" || typeof item === "function" || typeof item === "symbol") {
        throw new TypeError(`${key} cannot be sent as a query parameter: it is not a string, number or boolean`);
      }
      params.append(key, String(item as QueryScalar));
    }
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

import type { z } from "zod";

type QueryValue = string | string[] | undefined;

/** The base kind of a field, looking through optional/default/nullable wrappers. */
function baseKind(schema: z.ZodType): { kind: string; element?: z.ZodType } {
  let current = schema as z.ZodType & { _zod: { def: Record<string, unknown> & { type: string } } };
  for (;;) {
    const def = current._zod.def;
    if (def.type === "optional" || def.type === "default" || def.type === "nullable" || def.type === "prefault") {
      current = def.innerType as typeof current;
      continue;
    }
    if (def.type === "pipe") {
      current = def.in as typeof current;
      continue;
    }
    if (def.type === "array") return { kind: "array", element: def.element as z.ZodType };
    return { kind: def.type };
  }
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
  for (const [key, raw] of Object.entries(query)) {
    if (raw === undefined) continue;
    const field = Object.hasOwn(schema.shape, key) ? (schema.shape[key] as z.ZodType) : undefined;
    if (!field) {
      set(key, raw);
      continue;
    }
    const { kind, element } = baseKind(field);
    if (kind === "array") {
      const elementKind = element ? baseKind(element).kind : "string";
      const values = Array.isArray(raw) ? raw : [raw];
      set(
        key,
        values.map((value) => coerceScalar(elementKind, value)),
      );
    } else {
      // A repeated scalar parameter is kept as an array, so validation reports it instead of picking one.
      set(key, Array.isArray(raw) ? raw : coerceScalar(kind, raw));
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

/**
 * RFC 8785 JSON Canonicalization Scheme (JCS): the one byte form of a JSON value that hashes and signatures commit to
 * (the tool manifests: docs/decisions.md, "Discovery"). Takes a JSON value, or a plain object tree that would serialize
 * to one; members whose value is `undefined` are left out, and what JSON cannot carry is rejected, not coerced:
 * non-finite numbers, bigints, functions, symbols, `undefined` array elements and strings with lone surrogates (JCS
 * input must be I-JSON, RFC 7493).
 */
export function canonicalize(value: unknown): string {
  return serialize(value, "$", new Set());
}

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A string as JSON.stringify writes it, which RFC 8785 §3.2.2.2 adopts; one with a lone surrogate is not I-JSON. */
function serializeString(text: string, path: string): string {
  if (loneSurrogate.test(text)) throw new TypeError(`JCS: ${path} has a lone surrogate (not I-JSON)`);
  return JSON.stringify(text);
}

function serialize(value: unknown, path: string, ancestors: Set<object>): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "string":
      return serializeString(value, path);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`JCS: ${path} is ${value}, which JSON cannot carry`);
      // ECMAScript Number serialization (shortest round-trip form, -0 as 0): RFC 8785 §3.2.2.3.
      return JSON.stringify(value);
    case "object":
      break;
    default:
      throw new TypeError(`JCS: ${path} is a ${typeof value}, which JSON cannot carry`);
  }

  const object = value as object;
  const withToJson = object as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === "function") return serialize(withToJson.toJSON(), path, ancestors);
  if (ancestors.has(object)) throw new TypeError(`JCS: ${path} is circular`);
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      const items = object.map((item, index) => {
        if (item === undefined) throw new TypeError(`JCS: ${path}[${index}] is undefined`);
        return serialize(item, `${path}[${index}]`, ancestors);
      });
      return `[${items.join(",")}]`;
    }
    const record = object as Record<string, unknown>;
    // Array.prototype.sort without a comparator orders strings by UTF-16 code units, which is RFC 8785 §3.2.3.
    // Members whose value is undefined are left out, as JSON.stringify leaves them out, so the canonical form of an
    // object and of the document served for it agree.
    const members = Object.keys(record)
      .sort()
      .filter((key) => record[key] !== undefined)
      .map((key) => `${serializeString(key, `${path} key`)}:${serialize(record[key], `${path}.${key}`, ancestors)}`);
    return `{${members.join(",")}}`;
  } finally {
    ancestors.delete(object);
  }
}

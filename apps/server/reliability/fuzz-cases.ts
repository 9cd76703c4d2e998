/**
 * Hostile requests for every route, generated from the service's own OpenAPI document with fast-check: wrong types,
 * values past their bounds, extra and prototype-named properties and query keys, repeated keys, unicode, huge
 * strings, malformed JSON, wrong content types and encodings, and junk in the payment and sign-in headers.
 */
import fc from "fast-check";

export interface FuzzCase {
  /** What the case does, for a failure report. */
  kind: string;
  method: "GET" | "POST";
  /** Path and query, as sent (possibly not valid percent-encoding). */
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

type JsonSchema = {
  $ref?: string;
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  pattern?: string;
  format?: string;
  example?: unknown;
};

interface Operation {
  method: "GET" | "POST";
  path: string;
  pathParams: string[];
  query: Record<string, JsonSchema>;
  body?: JsonSchema;
  /** A valid body (the document's example): sent as is with junk headers, so the payment steps are reached. */
  example?: Record<string, unknown>;
}

type OpenApi = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { in: string; name: string; schema: JsonSchema }[];
        requestBody?: { content: Record<string, { schema: JsonSchema; example?: Record<string, unknown> }> };
      }
    >
  >;
  components: { schemas: Record<string, JsonSchema> };
};

/** Every operation of the document; a tool route's body also as GET query parameters (the route answers both). */
export function operationsOf(doc: OpenApi): Operation[] {
  const resolve = (schema: JsonSchema): JsonSchema =>
    schema.$ref ? resolve(doc.components.schemas[schema.$ref.split("/").at(-1)!]!) : schema;
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params = op.parameters ?? [];
      const media = op.requestBody?.content["application/json"];
      const body = media?.schema;
      const operation: Operation = {
        method: method.toUpperCase() as "GET" | "POST",
        path,
        pathParams: params.filter((p) => p.in === "path").map((p) => p.name),
        query: Object.fromEntries(params.filter((p) => p.in === "query").map((p) => [p.name, resolve(p.schema)])),
        ...(body ? { body: resolveDeep(resolve(body), resolve) } : {}),
        ...(media?.example ? { example: media.example } : {}),
      };
      operations.push(operation);
      if (operation.method === "POST" && operation.body?.properties && path !== "/dispatch") {
        operations.push({
          method: "GET",
          path,
          pathParams: [],
          query: operation.body.properties,
          ...(operation.example ? { example: operation.example } : {}),
        });
      }
    }
  }
  return operations;
}

function resolveDeep(schema: JsonSchema, resolve: (s: JsonSchema) => JsonSchema): JsonSchema {
  const out: JsonSchema = { ...resolve(schema) };
  if (out.properties) {
    out.properties = Object.fromEntries(
      Object.entries(out.properties).map(([k, v]) => [k, resolveDeep(v, resolve)] as const),
    );
  }
  if (out.items) out.items = resolveDeep(out.items, resolve);
  return out;
}

/** Percent-encoding of any string, lone surrogates included (as their UTF-8 replacement). */
function percentEncode(value: string): string {
  let out = "";
  for (const byte of Buffer.from(value, "utf8")) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

const PROTOTYPE_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf"];

/** Strings a parser may stumble on. */
const nastyString = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "",
    " ",
    "%",
    "%zz",
    "%00",
    "\u0000",
    "\uD800",
    "🦊",
    "NaN",
    "Infinity",
    "-1",
    "1e309",
    "0x",
    "9".repeat(400),
    "null",
    "[]",
    "{}",
    "true",
    "<script>",
    "' OR 1=1 --",
    ...PROTOTYPE_KEYS,
  ),
  fc.integer({ min: 1000, max: 60_000 }).map((n) => "x".repeat(n)),
);

const anyJson = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  nastyString,
  fc.array(fc.integer(), { maxLength: 5 }),
  fc.dictionary(fc.constantFrom("a", "__proto__", "constructor"), fc.integer(), { maxKeys: 3 }),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, -0, 1e308, 2 ** 64),
);

/** A value for `schema`: usually of its type and near its bounds, sometimes anything at all. */
function valueFor(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const fitting = ((): fc.Arbitrary<unknown> => {
    if (schema.enum) return fc.constantFrom(...schema.enum);
    switch (schema.type) {
      case "integer":
      case "number": {
        const min = schema.minimum ?? -1000;
        const max = schema.maximum ?? 1_000_000;
        return fc.oneof(
          fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) }),
          fc.constantFrom(min - 1, max + 1, 0, -1, 1.5, 2 ** 53 + 1),
        );
      }
      case "boolean":
        return fc.boolean();
      case "string":
        return fc.oneof(
          schema.example !== undefined ? fc.constant(schema.example) : nastyString,
          nastyString,
          fc.constantFrom("0x0000000000000000000000000000000000000000", "2026-13-45T99:99:99Z", "base", "bsc"),
        );
      case "array":
        return fc.array(schema.items && depth < 3 ? valueFor(schema.items, depth + 1) : anyJson, {
          maxLength: (schema.maxItems ?? 5) + 2,
        });
      case "object":
        return depth < 3 ? objectOf(schema, depth + 1) : fc.constant({});
      default:
        return anyJson;
    }
  })();
  return fc.oneof({ weight: 4, arbitrary: fitting }, { weight: 1, arbitrary: anyJson });
}

/** An object for `schema`: some of its properties, maybe not the required ones, maybe extra and prototype keys. */
function objectOf(schema: JsonSchema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(schema.properties ?? {});
  const chosen = fc
    .subarray(properties)
    .chain((picked) => fc.tuple(...picked.map(([name, prop]) => valueFor(prop, depth).map((v) => [name, v] as const))));
  const extra = fc.array(
    fc.tuple(fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 12 })), anyJson),
    {
      maxLength: 3,
    },
  );
  return fc.tuple(chosen, extra).map(([entries, extras]) => {
    const out: Record<string, unknown> = {};
    // Defined as own properties, as JSON.parse would make them: `__proto__` included.
    for (const [k, v] of [...entries, ...extras])
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  });
}

/** A query string for `query`: values as strings, keys repeated, prototype keys, broken percent-encoding. */
function queryOf(query: Record<string, JsonSchema>): fc.Arbitrary<string> {
  const names = [...Object.keys(query), ...PROTOTYPE_KEYS, "x"];
  const pair = fc.tuple(
    fc.constantFrom(...names),
    fc.oneof(
      ...Object.values(query).map((s) =>
        valueFor(s).map((v) => (typeof v === "string" ? v : (JSON.stringify(v) ?? ""))),
      ),
      nastyString,
    ),
    fc.boolean(),
  );
  // At most 8,000 characters in all: the request line counts toward the 16 KiB of headers a server takes.
  return fc.array(pair, { maxLength: 8 }).map((pairs) =>
    pairs
      .map(([k, v, raw]) => [k, v.slice(0, 900), raw] as const)
      // Some values go out raw: a lone "%" or "%zz" is not valid percent-encoding.
      .map(
        ([k, v, raw]) =>
          `${percentEncode(k)}=${raw ? v.replace(/[^\x21-\x7e]|[&#]/g, percentEncode) : percentEncode(v)}`,
      )
      .join("&"),
  );
}

const base64Json = (value: unknown) => Buffer.from(JSON.stringify(value) ?? "null").toString("base64");

/** `PAYMENT-SIGNATURE` values a client should never send: wrong shapes, wrong types, absurd numbers. */
const junkPayment = fc.oneof(
  nastyString,
  fc.constantFrom("e30=", "bnVsbA==", "W10=", "!!!", "x".repeat(20_000)),
  fc
    .record(
      {
        x402Version: fc.constantFrom(2, 1, "2", null),
        accepted: fc.oneof(fc.constant(null), anyJson, fc.record({ scheme: fc.constant("exact"), amount: anyJson })),
        payload: fc.oneof(
          fc.constant(null),
          anyJson,
          fc.record(
            {
              signature: fc.oneof(nastyString, fc.constant(`0x${"ab".repeat(65)}`)),
              authorization: fc.oneof(
                fc.constant(null),
                fc.record(
                  {
                    from: fc.oneof(nastyString, fc.constant("0x70997970C51812dc3A010C7d01b50e0d17dc79C8")),
                    to: nastyString,
                    value: fc.oneof(nastyString, fc.constantFrom("1000000", "-1", "1e6", "0x10")),
                    validAfter: fc.oneof(nastyString, fc.constantFrom("0", "-5")),
                    validBefore: fc.oneof(nastyString, fc.constantFrom("9000000000000", "99999999999999999999")),
                    nonce: nastyString,
                  },
                  { requiredKeys: [] },
                ),
              ),
            },
            { requiredKeys: [] },
          ),
        ),
      },
      { requiredKeys: [] },
    )
    .map(base64Json),
);

/** `SIGN-IN-WITH-X` values a client should never send. */
const junkSignIn = fc.oneof(
  nastyString,
  fc
    .record(
      {
        domain: nastyString,
        address: fc.oneof(nastyString, fc.constant("0x70997970C51812dc3A010C7d01b50e0d17dc79C8")),
        statement: fc.oneof(nastyString, fc.constant("line one\nline two")),
        uri: nastyString,
        version: fc.oneof(nastyString, fc.constantFrom("1", "2")),
        chainId: fc.oneof(nastyString, fc.constantFrom("eip155:31337", "eip155:1", "solana:x")),
        type: fc.constantFrom("eip191", "ed25519", "x"),
        nonce: fc.oneof(nastyString, fc.constantFrom("short", "n0nce-with-dashes", "a".repeat(500))),
        issuedAt: fc.oneof(nastyString, fc.constant(new Date().toISOString())),
        expirationTime: nastyString,
        resources: fc.array(nastyString, { maxLength: 3 }),
        signature: fc.oneof(nastyString, fc.constant(`0x${"cd".repeat(65)}`)),
      },
      { requiredKeys: [] },
    )
    .map(base64Json),
);

function fillPath(path: string, params: string[], value: string): string {
  let out = path;
  for (const name of params) out = out.replace(`{${name}}`, value);
  return out;
}

/** One hostile request for `operation`. */
function caseFor(operation: Operation): fc.Arbitrary<FuzzCase> {
  const pathValue = fc.oneof(
    fc.integer({ min: -10, max: 7000 }).map(String),
    nastyString.map((s) => percentEncode(s.slice(0, 600))),
    fc.constantFrom("%", "%zz", "%E0%A4%A", "1%00", "..%2F..%2F", "1.5", "0x1", "00001"),
  );
  const path = pathValue.map((v) => fillPath(operation.path, operation.pathParams, v));
  // Each header up to 4,000 characters: oversized for any real value, and the three together under the 16 KiB of
  // headers an HTTP server takes (past that, Node answers 431 itself and closes the connection).
  const cap = (value: string) => value.slice(0, 4000);
  const payment = junkPayment.map(cap);
  const signIn = junkSignIn.map(cap);
  // A bad sign-in is refused before the payment is read: most cases carry a payment alone.
  const headers = fc.oneof(
    { weight: 4, arbitrary: payment.map((p): Record<string, string> => ({ "PAYMENT-SIGNATURE": p })) },
    { weight: 2, arbitrary: signIn.map((s): Record<string, string> => ({ "SIGN-IN-WITH-X": s })) },
    {
      weight: 1,
      arbitrary: fc.tuple(payment, signIn).map(([p, s]) => ({ "PAYMENT-SIGNATURE": p, "SIGN-IN-WITH-X": s })),
    },
    { weight: 1, arbitrary: payment.map((p): Record<string, string> => ({ "X-PAYMENT": p })) },
    { weight: 1, arbitrary: fc.constant<Record<string, string>>({}) },
  );
  if (operation.method === "GET") {
    const exampleQuery = operation.example
      ? fc.constant(
          Object.entries(operation.example)
            .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((item) => `${k}=${percentEncode(String(item))}`))
            .join("&"),
        )
      : queryOf(operation.query);
    const query = fc.oneof(queryOf(operation.query), exampleQuery);
    return fc.tuple(path, query, headers).map(([p, q, h]) => ({
      kind: `GET ${operation.path} (query)`,
      method: "GET" as const,
      path: q ? `${p}?${q}` : p,
      headers: h,
    }));
  }
  const json = operation.body ? objectOf(operation.body) : fc.constant({});
  const example = operation.example;
  const body = fc.oneof(
    { weight: 4, arbitrary: json.map((b) => ({ kind: "json", text: JSON.stringify(b), type: "application/json" })) },
    {
      weight: example ? 4 : 0,
      arbitrary: fc.constant({ kind: "valid body", text: JSON.stringify(example ?? {}), type: "application/json" }),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { kind: "malformed json", text: '{"tokenId": 1,', type: "application/json" },
        { kind: "malformed json", text: "{'tokenId': 1}", type: "application/json" },
        { kind: "json array", text: "[1,2,3]", type: "application/json" },
        { kind: "json scalar", text: "42", type: "application/json" },
        { kind: "empty body", text: "", type: "application/json" },
        { kind: "form body", text: "tokenId=1", type: "application/x-www-form-urlencoded" },
        { kind: "text body", text: '{"tokenId":1}', type: "text/plain" },
        { kind: "charset", text: '{"tokenId":1}', type: "application/json; charset=latin1" },
        { kind: "oversized", text: JSON.stringify({ tokenId: 1, pad: "x".repeat(40_000) }), type: "application/json" },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom("gzip", "deflate", "br", "compress").map((encoding) => ({
        kind: `content-encoding ${encoding}`,
        text: '{"tokenId":1}',
        type: "application/json",
        encoding,
      })),
    },
  );
  return fc.tuple(path, body, headers).map(([p, b, h]) => ({
    kind: `POST ${operation.path} (${b.kind})`,
    method: "POST" as const,
    path: p,
    headers: {
      ...h,
      "content-type": b.type,
      ...("encoding" in b ? { "content-encoding": b.encoding as string } : {}),
    },
    body: b.text,
  }));
}

/** `count` cases spread over every operation, reproducible from `seed`. */
export function fuzzCases(doc: OpenApi, count: number, seed: number): FuzzCase[] {
  const operations = operationsOf(doc);
  const arbitrary = fc.oneof(...operations.map(caseFor));
  return fc.sample(arbitrary, { numRuns: count, seed });
}

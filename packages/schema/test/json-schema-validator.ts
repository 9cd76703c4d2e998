/**
 * A real JSON Schema (draft 2020-12) validator for the tests: Ajv, as installed for @redocly/openapi-core (a
 * devDependency of this package), loaded from that package's own dependencies, with ajv-formats.
 */
interface Validator {
  (data: unknown): boolean;
  errors?: unknown[] | null;
}
interface AjvInstance {
  compile(schema: object): Validator;
  addKeyword(keyword: string): AjvInstance;
}

interface NodeRequire {
  (id: string): unknown;
  resolve(id: string): string;
}
// This package is typed without Node's types (its code also runs in browsers), so Node's module API is
// reached through `process.getBuiltinModule` rather than an import of "node:module".
const { createRequire } = (
  globalThis as unknown as { process: { getBuiltinModule(id: "node:module"): unknown } }
).process.getBuiltinModule("node:module") as { createRequire(from: string): NodeRequire };
const fromOpenapiCore = createRequire(createRequire(import.meta.url).resolve("@redocly/openapi-core"));
const { default: Ajv2020 } = fromOpenapiCore("@redocly/ajv/dist/2020") as {
  default: new (options: object) => AjvInstance;
};
const { default: addFormats } = fromOpenapiCore("ajv-formats") as { default: (ajv: AjvInstance) => void };

/** Compiles a JSON Schema in Ajv's strict mode: unknown keywords and formats are errors, not ignored. */
export function compileJsonSchema(schema: object): Validator {
  // `example` is OpenAPI's keyword, which zod's metadata carries along; it is an annotation, not an assertion.
  const ajv = new Ajv2020({ strict: true, allErrors: true }).addKeyword("example");
  addFormats(ajv);
  return ajv.compile(schema);
}

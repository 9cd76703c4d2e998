import { z } from "zod";
import type { ToolRoute } from "./paid-routes.js";

/** A JSON Schema document as plain JSON. */
export type JsonSchema = Record<string, unknown>;

const LOCAL_DEF = /^#\/\$defs\/(.+)$/;

/**
 * Replaces every local `{"$ref": "#/$defs/Name", ...}` with the definition itself (keywords beside the `$ref`
 * win over the definition's), then drops `$defs`: the result stands alone, so a consumer needs no `$ref`
 * resolution at all, and a document that embeds it (a catalog item, a tool manifest) can put it anywhere.
 * Throws on a recursive definition, which cannot be inlined, and on any non-local `$ref`.
 */
export function inlineLocalRefs(schema: JsonSchema): JsonSchema {
  const defs = (schema.$defs ?? {}) as Record<string, unknown>;

  const visit = (node: unknown, expanding: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => visit(item, expanding));
    if (node === null || typeof node !== "object") return node;
    const { $ref, ...rest } = node as Record<string, unknown>;
    const siblings = Object.fromEntries(
      Object.entries(rest)
        .filter(([key]) => key !== "$defs")
        .map(([key, value]) => [key, visit(value, expanding)]),
    );
    if ($ref === undefined) return siblings;
    const name = typeof $ref === "string" ? LOCAL_DEF.exec($ref)?.[1] : undefined;
    if (name === undefined || !(name in defs)) throw new Error(`JSON Schema: cannot inline $ref ${String($ref)}`);
    if (expanding.includes(name)) throw new Error(`JSON Schema: $defs/${name} is recursive and cannot be inlined`);
    const target = visit(defs[name], [...expanding, name]) as Record<string, unknown>;
    return { ...target, ...siblings };
  };

  const { $schema, ...inlined } = visit(schema, []) as JsonSchema;
  return $schema === undefined ? inlined : { $schema, ...inlined };
}

/** JSON Schema (draft 2020-12) of what a caller sends: the request's input side (defaults may be left out). */
export function requestJsonSchema(route: ToolRoute): JsonSchema {
  return inlineLocalRefs(z.toJSONSchema(route.request, { io: "input" }) as JsonSchema);
}

/** JSON Schema (draft 2020-12) of the tool's 200 body. */
export function responseJsonSchema(route: ToolRoute): JsonSchema {
  return inlineLocalRefs(z.toJSONSchema(route.response) as JsonSchema);
}

import { queryToInput, type ToolName, toolRoutes } from "@agent-tools/sdk/contracts";
import { type Command, Option } from "commander";

export type Field = {
  _zod: { def: { type: string; innerType?: Field; in?: Field; element?: Field } };
  description?: string;
};

/** Kind of a schema field, looking through optional/default/pipe wrappers, and its description. */
export function describeField(field: Field): { kind: string; description: string | undefined } {
  let current = field;
  let description = field.description;
  for (;;) {
    const def = current._zod.def;
    const inner = def.innerType ?? (def.type === "pipe" ? def.in : undefined);
    if (!inner) return { kind: def.type, description };
    current = inner;
    description ??= current.description;
  }
}

export const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
/** Repeated flags read better singular: --watch-slug a --watch-slug b. */
export const singular = (name: string) => (name.endsWith("s") ? name.slice(0, -1) : name);

/** The request fields that are lists, in any tool: given by repeating a singular flag (slugs -> --slug). */
export const listFields = new Set(
  Object.values(toolRoutes).flatMap((route) =>
    Object.entries(route.request.shape as Record<string, Field>)
      .filter(([, field]) => describeField(field).kind === "array")
      .map(([key]) => key),
  ),
);

/** Adds a flag per request field of the tool, named from the schema (tokenId -> --token-id). */
export function addToolOptions(command: Command, name: ToolName): Command {
  const shape = toolRoutes[name].request.shape as Record<string, Field>;
  for (const [key, field] of Object.entries(shape)) {
    const { kind, description } = describeField(field);
    const text = description ?? key;
    if (kind === "boolean") {
      command.addOption(new Option(`--${kebab(key)}`, text));
      command.addOption(new Option(`--no-${kebab(key)}`, `turn ${kebab(key)} off`).hideHelp());
    } else if (kind === "array") {
      command.addOption(
        new Option(`--${kebab(singular(key))} <value>`, `${text} (repeat the flag for several)`).argParser(
          (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
        ),
      );
    } else {
      command.addOption(new Option(`--${kebab(key)} <value>`, text));
    }
  }
  return command;
}

/** The tool's request from parsed flags, typed by the same schema the service validates with. */
export function toolInputFromOptions(name: ToolName, options: Record<string, unknown>): Record<string, unknown> {
  const shape = toolRoutes[name].request.shape as Record<string, Field>;
  const query: Record<string, string | string[]> = {};
  const booleans: Record<string, boolean> = {};
  for (const key of Object.keys(shape)) {
    const kind = describeField(shape[key]!).kind;
    const flagKey = kind === "array" ? singular(key) : key;
    const value = options[flagKey];
    if (value === undefined) continue;
    if (typeof value === "boolean") booleans[key] = value;
    else query[key] = value as string | string[];
  }
  return { ...queryToInput(toolRoutes[name].request, query), ...booleans };
}

import { queryToInput, requestFields, type ToolName, toolRoutes } from "@agent-tools/sdk/contracts";
import { type Command, Option } from "commander";

export const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
/** Repeated flags read better singular: --watch-slug a --watch-slug b. */
export const singular = (name: string) => (name.endsWith("s") ? name.slice(0, -1) : name);

/** The request fields that are lists, in any tool: given by repeating a singular flag (slugs -> --slug). */
export const listFields = new Set(
  Object.values(toolRoutes).flatMap((route) =>
    requestFields(route.request)
      .filter((field) => field.kind === "array")
      .map((field) => field.name),
  ),
);

/**
 * Adds a flag per request field of the tool, named from the contract (tokenId -> --token-id), described with the
 * values it takes and the default the service applies. A boolean the service turns on by default is turned off with
 * its --no- flag, which the help then shows.
 */
export function addToolOptions(command: Command, name: ToolName): Command {
  for (const field of requestFields(toolRoutes[name].request)) {
    const { name: key, kind, description, values, defaultValue, example } = field;
    const shownDefault = defaultValue !== undefined && kind !== "boolean" && String(defaultValue) !== "";
    const about = [
      values
        ? `one of ${values.join(", ")}`
        : kind === "string" && example !== undefined
          ? `for example ${example}`
          : "",
      shownDefault ? `default ${defaultValue}` : "",
    ].filter(Boolean);
    const text = `${description ?? key}${about.length > 0 ? ` (${about.join("; ")})` : ""}`;
    if (kind === "boolean") {
      const on = defaultValue === true;
      command.addOption(new Option(`--${kebab(key)}`, on ? `${text} (on by default)` : text));
      const off = new Option(`--no-${kebab(key)}`, `turn --${kebab(key)} off`);
      command.addOption(on ? off : off.hideHelp());
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
  const query: Record<string, string | string[]> = {};
  const booleans: Record<string, boolean> = {};
  for (const { name: key, kind } of requestFields(toolRoutes[name].request)) {
    const value = options[kind === "array" ? singular(key) : key];
    if (value === undefined) continue;
    if (typeof value === "boolean") booleans[key] = value;
    else query[key] = value as string | string[];
  }
  return { ...queryToInput(toolRoutes[name].request, query), ...booleans };
}

// dispatch's --run-at (a time or a delay) and the mission's params (--param, --params), typed by the tool's schema.
import {
  type MissionTool,
  missionParamsSchema,
  queryToInput,
  type RequestField,
  requestFields,
} from "@agent-tools/sdk/contracts";
import { UsageError } from "../exit-codes.js";
import { kebab } from "../tool-options.js";

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const ISO = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/i;

/**
 * `--run-at`: an ISO-8601 date or date-time (a time without a zone is UTC, as the service's times are) or a delay
 * from now (`+30m`, `+2h`, `+1d`, `+90s`), as the ISO-8601 UTC timestamp the service takes.
 */
export function parseRunAt(value: string, now: number = Date.now()): string {
  const text = value.trim();
  const delay = /^\+(\d+)([smhd])$/i.exec(text);
  if (delay) {
    return new Date(now + Number(delay[1]) * UNIT_MS[delay[2]!.toLowerCase() as keyof typeof UNIT_MS]).toISOString();
  }
  const iso = ISO.exec(text);
  const time = iso ? Date.parse(text.includes("T") && !iso[1] ? `${text}Z` : text) : Number.NaN;
  if (Number.isNaN(time)) {
    throw new UsageError(
      `--run-at ${value} is not a time: use an ISO-8601 UTC time (2026-11-23T08:00:00Z) or a delay (+30m, +2h, +1d).`,
    );
  }
  return new Date(time).toISOString();
}

/** The next 08:00 UTC, as `--run-at` takes it: an example time that is always ahead, and within the 30 days allowed. */
export function nextMorningUtc(now = new Date()): string {
  const morning = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 8));
  if (morning.getTime() <= now.getTime()) morning.setUTCDate(morning.getUTCDate() + 1);
  return morning.toISOString().replace(".000Z", "Z");
}

const camel = (name: string) => name.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** The field of the tool a `--param` key names: as written, camelCased from kebab-case, or the plural of an array. */
function fieldFor(fields: readonly RequestField[], key: string): string | undefined {
  const kindOf = new Map(fields.map((field) => [field.name, field.kind]));
  for (const candidate of [key, camel(key)]) {
    if (kindOf.has(candidate)) return candidate;
    const plural = `${candidate}s`;
    if (kindOf.get(plural) === "array") return plural;
  }
  return undefined;
}

/**
 * The mission's `params` from `--params '<json>'` and repeated `--param key=value` (which win over the JSON):
 * values are typed by the tool's own request schema, as the tool's query parameters are (`limit=10` is a number,
 * a repeated key is an array).
 */
export function missionParams(tool: MissionTool, pairs: string[] = [], json?: string): Record<string, unknown> {
  const schema = missionParamsSchema(tool);
  const fields = requestFields(schema);
  const names = fields.map((field) => kebab(field.name)).join(", ");
  let base: Record<string, unknown> = {};
  if (json !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      throw new UsageError(`--params is not JSON: write the fields as one JSON object, such as '{"limit":10}'.`);
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new UsageError(`--params must be a JSON object of ${tool}'s fields, such as '{"limit":10}'.`);
    }
    base = parsed as Record<string, unknown>;
  }
  const query: Record<string, string | string[]> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new UsageError(`--param ${pair} is not key=value, for example --param limit=10.`);
    const key = pair.slice(0, at).trim();
    const value = pair.slice(at + 1);
    if (key === "tokenId" || key === "token-id") {
      throw new UsageError("the mission's agent is --token-id, not a --param.");
    }
    const field = fieldFor(fields, key);
    if (!field) {
      throw new UsageError(
        `${tool} has no field ${key}; its fields are ${names || "none"} (see agent-tools ${tool} --help).`,
      );
    }
    const previous = query[field];
    query[field] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  if ("tokenId" in base) throw new UsageError("the mission's agent is --token-id, not a field of --params.");
  return { ...base, ...queryToInput(schema, query) };
}

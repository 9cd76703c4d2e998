/** Human output: the brief, then the result's main list as a table. Colour only on a TTY without NO_COLOR. */
import { type ToolName, usdAmountText } from "@agent-tools/sdk/contracts";
import { viewSections } from "./views.js";

export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
}

export function styleFor(stream: NodeJS.WriteStream): Style {
  const on = Boolean(stream.isTTY) && !("NO_COLOR" in process.env) && process.env.TERM !== "dumb";
  const wrap = (open: number, close: number) => (text: string) =>
    on ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return { bold: wrap(1, 22), dim: wrap(2, 22), green: wrap(32, 39), yellow: wrap(33, 39) };
}

/** Columns shown first when present, in this order; other scalar columns follow, up to a width. */
const preferredColumns = [
  "slug",
  "name",
  "symbol",
  "chain",
  "address",
  "collection",
  "identifier",
  "rank",
  "priceUsd",
  "volume24hUsd",
  "liquidityUsd",
  "priceChange24h",
  "remaining",
  "maxSupply",
  "nextStageAt",
  "bidAboveFloor",
  "spreadPct",
  "volumeH24",
  "risk",
  "variant",
  "decimals",
];

function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (typeof value === "number")
    return Number.isInteger(value) ? String(value) : value.toFixed(Math.abs(value) < 1 ? 4 : 2);
  if (typeof value === "object") {
    const v = value as Record<string, unknown>;
    if ("level" in v) return String(v.level); // risk
    if ("usd" in v && typeof v.usd === "number") return usdAmountText(v.usd); // price
    return "…";
  }
  // Addresses in full: they are pasted into --address and --wallet-address.
  return String(value);
}

/** Lifts the scalar fields of nested objects (a token's `market`) up to the row; a `risk` becomes its level. */
function flatten(row: Record<string, unknown>): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    const nested =
      value !== null && typeof value === "object" && !Array.isArray(value) && !("level" in value) && !("usd" in value);
    if (!nested) {
      flat[key] = value;
      continue;
    }
    for (const [inner, innerValue] of Object.entries(value as Record<string, unknown>)) {
      if (inner in row || inner in flat) continue;
      if (innerValue === null || typeof innerValue !== "object") flat[inner] = innerValue;
      else if ("level" in innerValue) flat[inner] = innerValue;
    }
  }
  return flat;
}

const isUrl = (value: unknown) => typeof value === "string" && /^https?:\/\//.test(value);

/** A plain-text table of objects, scalar (and a few summarised) columns only; links are left out. */
export function table(input: Record<string, unknown>[], style: Style, maxColumns = 7): string {
  if (input.length === 0) return style.dim("(none)");
  const rows = input.map(flatten);
  const keys = Object.keys(rows[0]!);
  const summarisable = (key: string) =>
    rows.some(
      (r) =>
        r[key] !== null &&
        typeof r[key] === "object" &&
        !Array.isArray(r[key]) &&
        ("level" in (r[key] as object) || "usd" in (r[key] as object)),
    );
  const usable = keys.filter(
    (k) =>
      (rows.every((r) => typeof r[k] !== "object" || r[k] === null) || summarisable(k)) &&
      !rows.some((r) => isUrl(r[k])),
  );
  const columns = [
    ...preferredColumns.filter((k) => usable.includes(k)),
    ...usable.filter((k) => !preferredColumns.includes(k)),
  ].slice(0, maxColumns);
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.min(48, Math.max(c.length, ...cells.map((row) => row[i]!.length))));
  const line = (values: string[]) =>
    values.map((v, i) => (v.length > widths[i]! ? `${v.slice(0, widths[i]! - 1)}…` : v.padEnd(widths[i]!))).join("  ");
  return [style.bold(line(columns)), ...cells.map(line)].join("\n");
}

/** The first list of objects in a result (drops, tokens, nfts, collections, eligible). */
export function mainList(result: Record<string, unknown>): [string, Record<string, unknown>[]] | undefined {
  for (const [key, value] of Object.entries(result)) {
    if (Array.isArray(value) && (value.length === 0 || typeof value[0] === "object"))
      return [key, value as Record<string, unknown>[]];
  }
  return undefined;
}

/**
 * Rows already in their view's words (views.ts): every column shown. A column is cut at 60 characters, except the
 * last, which runs to the end of the line: nothing after it needs aligning.
 */
export function viewTable(rows: Record<string, string>[], style: Style): string {
  if (rows.length === 0) return style.dim("(none)");
  const columns = Object.keys(rows[0]!);
  const widths = columns.map((c) => Math.min(60, Math.max(c.length, ...rows.map((r) => (r[c] ?? "").length))));
  const last = columns.length - 1;
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === last ? v : v.length > widths[i]! ? `${v.slice(0, widths[i]! - 1)}…` : v.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [style.bold(line(columns)), ...rows.map((r) => line(columns.map((c) => r[c] ?? "")))].join("\n");
}

/** The whole human rendering of a tool result, in the tool's view when it has one. */
export function renderResult(result: Record<string, unknown>, style: Style, tool?: ToolName): string {
  const parts = [String(result.brief ?? "")];
  if (result.traits && typeof result.traits === "object" && Object.keys(result.traits).length > 0) {
    const traits = Object.entries(result.traits as Record<string, string>);
    parts.push(traits.map(([k, v]) => `${style.dim(k.padEnd(10))} ${v}`).join("\n"));
  }
  const sections = tool ? viewSections(tool, result) : undefined;
  if (sections) {
    for (const { field, rows } of sections)
      parts.push(`${style.bold(field)} (${rows.length})\n${viewTable(rows, style)}`);
  } else {
    const list = mainList(result);
    if (list) parts.push(`${style.bold(list[0])} (${list[1].length})\n${table(list[1], style)}`);
  }
  return `${parts.filter(Boolean).join("\n\n")}\n`;
}

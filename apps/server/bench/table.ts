/** Prints the bench's table. */
import { breakdown, STEPS } from "./breakdown.js";
import type { LoadResult } from "./load.js";

export interface Row {
  line: string;
  app: string;
  result: LoadResult;
  /** The reference row this one is compared with. */
  versus?: LoadResult;
  /** Why answers were not of the expected status, with counts. */
  failures?: Record<string, number>;
}

/** A number for a table cell, with `digits` decimals ("-" when not finite). */
export const fmt = (value: number, digits = 0) =>
  Number.isFinite(value)
    ? value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "-";

/** Columns padded to their widest cell, the first `leftColumns` to the left, the rest to the right. */
export function table(header: string[], rows: string[][], leftColumns: number): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i < leftColumns ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

function others(result: LoadResult, expected: string): string {
  const parts = Object.entries(result.statuses)
    .filter(([status]) => status !== expected)
    .map(([status, count]) => `${fmt(count)}×${status}`);
  if (result.errors) parts.push(`${fmt(result.errors)} socket errors`);
  return parts.join(", ") || "none";
}

export function printTable(
  rows: Row[],
  breakdowns: { label: string; serverTimings: string[] }[],
  info: {
    environment: string;
    seconds: number;
    /** Lines said under the table. */
    notes: string[];
  },
): void {
  const out: string[] = [`Agent Tools bench: ${info.environment}`, ""];
  out.push(
    table(
      [
        "line",
        "app",
        "req/s",
        "p50 ms",
        "p99 ms",
        "counted",
        "other answers",
        "CPU ms/answer",
        "ours/ref req/s",
        "ours/ref p50",
        "ours/ref CPU",
      ],
      rows.map(({ line, app, result, versus }) => {
        const expected = line.includes("402") ? "402" : "200";
        return [
          line,
          app,
          fmt(result.rps),
          fmt(result.p50, 2),
          fmt(result.p99, 2),
          `${fmt(result.ok)}×${expected}`,
          others(result, expected),
          fmt(result.cpuMsPerAnswer ?? Number.NaN, 3),
          versus ? `${fmt(result.rps / versus.rps, 2)}×` : "",
          versus ? `${fmt(result.p50 / versus.p50, 2)}×` : "",
          versus ? `${fmt((result.cpuMsPerAnswer ?? Number.NaN) / (versus.cpuMsPerAnswer ?? Number.NaN), 2)}×` : "",
        ];
      }),
      2,
    ),
  );
  const failures = rows.flatMap(({ line, app, failures = {} }) =>
    Object.entries(failures).map(([reason, count]) => `  ${line}, ${app}: ${fmt(count)}× ${reason.slice(0, 160)}`),
  );
  if (failures.length) out.push("", "Answers other than 200 in the paid runs:", ...failures);
  if (breakdowns.length) {
    out.push("", "Median server time of our paid call, ms (Server-Timing of the counted 200 answers):");
    out.push(
      table(
        ["", ...STEPS, "sum", "answers"],
        breakdowns.map(({ label, serverTimings }) => {
          const medians = breakdown(serverTimings);
          return [
            label,
            ...STEPS.map((step) => fmt(medians[step], 2)),
            fmt(medians.total, 2),
            fmt(serverTimings.length),
          ];
        }),
        1,
      ),
    );
  }
  out.push("", ...info.notes);
  out.push(
    "Each comparison alternates its sides in 2 rounds and adds the rounds up. req/s counts only answers of the " +
      "expected status (200; 402 for a challenge); latencies are theirs. CPU ms/answer: the serving process " +
      "(all its threads) during the run, per counted answer; the chains run in a process of their own.",
  );
  out.push(`Whole bench: ${fmt(info.seconds, 1)} s.`);
  process.stdout.write(`${out.join("\n")}\n`);
}

/** Prints the bench's table. */
import { breakdown, STEPS } from "./breakdown.js";
import type { LoadResult } from "./load.js";
import type { HostReport } from "./protocol.js";

export interface Row {
  line: string;
  app: string;
  result: LoadResult;
  /** The anchor measured on this machine kind (ENVIRONMENT.md). */
  anchor?: string;
  /** The reference row this one is compared with. */
  versus?: LoadResult;
  /** Why answers were not of the expected status, with counts. */
  failures?: Record<string, number>;
}

const fmt = (value: number, digits = 0) =>
  Number.isFinite(value)
    ? value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "-";

function table(header: string[], rows: string[][], leftColumns: number): string {
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
    chain: HostReport | undefined;
    seconds: number;
    /** Share of the machine's CPU other processes used during the bench. */
    othersShare?: number;
    profileDir?: string;
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
        "anchor req/s",
        "ours/ref req/s",
        "ours/ref p50",
        "ours/ref CPU",
      ],
      rows.map(({ line, app, result, anchor, versus }) => {
        const expected = line.startsWith("402") ? "402" : "200";
        return [
          line,
          app,
          fmt(result.rps),
          fmt(result.p50, 2),
          fmt(result.p99, 2),
          `${fmt(result.ok)}×${expected}`,
          others(result, expected),
          fmt(result.cpuMsPerAnswer ?? Number.NaN, 3),
          anchor ?? "",
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
  out.push("");
  out.push(
    "Anchors (ENVIRONMENT.md, this machine kind, 10 connections): bare Express 5 ~11k req/s; " +
      "@x402/express 402 challenge ~7.1k; full paid call on an in-process EDR chain ~200/s.",
  );
  out.push(
    "Each comparison alternates its sides in 2 rounds and adds the rounds up. " +
      "req/s counts only answers of the expected status (200; 402 for the challenge); latencies are theirs. " +
      "CPU ms/answer: the servers' process (all threads, devnet included) during the run, per counted answer.",
  );
  if (info.chain) {
    out.push(
      `Payment chain: ${fmt(info.chain.blocks)} blocks during the bench, block time advanced ` +
        `${fmt(info.chain.chainTimeAdvancedSeconds)} s, ends ${fmt(info.chain.chainTimeAheadSeconds)} s from the wall clock.`,
    );
  }
  if (info.profileDir) out.push(`CPU profile of the servers' process: ${info.profileDir}`);
  out.push(
    `Whole bench: ${fmt(info.seconds, 1)} s` +
      (info.othersShare === undefined
        ? "."
        : `; other processes used ${fmt(info.othersShare * 100)}% of the machine's CPU meanwhile ` +
          "(figures are only comparable between runs when that is near 0)."),
  );
  process.stdout.write(`${out.join("\n")}\n`);
}

/** The median server-side time of each step of a paid call, from the answers' `Server-Timing`. */

export const STEPS = [
  "validate",
  "identify",
  "policy",
  "price",
  "signature",
  "claim",
  "verify",
  "tool",
  "settle",
] as const;

export type Breakdown = Record<(typeof STEPS)[number] | "total", number>;

function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Medians per step (and of the steps' sum) over `Server-Timing: validate;dur=0.12, identify;dur=1.51, ...`. */
export function breakdown(serverTimings: string[]): Breakdown {
  const byStep = new Map<string, number[]>();
  const totals: number[] = [];
  for (const header of serverTimings) {
    let total = 0;
    for (const entry of header.split(",")) {
      const [name, ...params] = entry.trim().split(";");
      const dur = params.find((p) => p.trim().startsWith("dur="));
      if (!name || !dur) continue;
      const ms = Number(dur.trim().slice(4));
      total += ms;
      const values = byStep.get(name) ?? [];
      values.push(ms);
      byStep.set(name, values);
    }
    totals.push(total);
  }
  const result = { total: median(totals) } as Breakdown;
  for (const step of STEPS) result[step] = median(byStep.get(step) ?? []);
  return result;
}

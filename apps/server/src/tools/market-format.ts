/** Wording of the market radars' briefs: moves, block spans and risk summaries (USD figures: @agent-tools/schema). */
import type { Risk } from "./risk.js";
import { count, listOf, plural } from "./wording.js";

/** "+1,240.5%", "-96.1%", "0%". */
export function move(pct: number): string {
  const sign = pct > 0 ? "+" : pct < 0 ? "-" : "";
  const digits = Math.abs(pct) < 1 ? 2 : 1;
  return `${sign}${Math.abs(pct).toLocaleString("en-US", { maximumFractionDigits: digits })}%`;
}

/** A span of blocks as time: "~33 minutes", "~6 hours", "~7 days". */
export function blockSpan(blocks: number, secondsPerBlock: number): string {
  const minutes = (blocks * secondsPerBlock) / 60;
  if (minutes < 120) return `~${plural(Math.max(1, Math.round(minutes)), "minute")}`;
  const hours = minutes / 60;
  if (hours < 48) return `~${plural(Math.round(hours), "hour")}`;
  const days = Math.round((hours / 24) * 10) / 10;
  return `~${days} day${days === 1 ? "" : "s"}`;
}

/**
 * Flags of ./risk.ts (and the radars' own) that alone make a token high risk, most telling first: a copied symbol,
 * no or thin liquidity and extreme moves say more about a token than its youth, which every new token shares.
 */
const HIGH_FLAGS = [
  /^impostor/,
  /^(?:no liquidity|thin liquidity)/,
  /^extreme 24h move/,
  /^24h volume is ([\d.]+)x liquidity/,
  /^no market/,
  /^trading for less than a day/,
];

/** The flag that explains a high level (its rank among HIGH_FLAGS; a volume ratio counts above 10x only). */
function highFlag(flags: readonly string[]): { flag: string; rank: number } {
  for (const [rank, pattern] of HIGH_FLAGS.entries()) {
    const flag = flags.find((f) => {
      const match = pattern.exec(f);
      return match !== null && (match[1] === undefined || Number(match[1]) > 10);
    });
    if (flag) return { flag, rank };
  }
  return { flag: flags[0] ?? "high risk", rank: HIGH_FLAGS.length };
}

export interface RiskItem {
  symbol: string;
  risk: Risk;
}

/**
 * "Risk: 3 high (BRINE: thin liquidity ($2k); WAVE: extreme 24h move (+1240.5%); KEY: ...), 2 elevated and 5 low."
 * Up to three high-risk tokens are named, the most telling reasons first.
 */
export function riskSentence(items: readonly RiskItem[]): string | undefined {
  if (items.length === 0) return undefined;
  const by = (level: Risk["level"]) => items.filter((i) => i.risk.level === level);
  const high = by("high");
  const elevated = by("elevated");
  const low = by("low");
  if (high.length === 0 && elevated.length === 0) return `Risk: all ${plural(low.length, "token")} low.`;
  const parts: string[] = [];
  if (high.length > 0) {
    const named = high
      .map((i) => ({ symbol: i.symbol, ...highFlag(i.risk.flags) }))
      .sort((a, b) => a.rank - b.rank)
      .slice(0, 3)
      .map((i) => `${i.symbol}: ${i.flag}`);
    if (high.length > 3) named.push(`${count(high.length - 3)} more`);
    parts.push(`${count(high.length)} high (${named.join("; ")})`);
  }
  if (elevated.length > 0) parts.push(`${count(elevated.length)} elevated`);
  if (low.length > 0) parts.push(`${count(low.length)} low`);
  return `Risk: ${listOf(parts)}.`;
}

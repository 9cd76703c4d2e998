/**
 * Market risk of a token for both radars: each rule raises the level to `elevated` or `high` and adds a flag a person
 * can read, and the level is the highest any rule gives. The thresholds are {@link RISK_THRESHOLDS} (docs/api.md,
 * "Market tools and their sources").
 */
import { usdCompactText } from "@agent-tools/schema";

export type RiskLevel = "low" | "elevated" | "high";

export interface RiskInput {
  liquidityUsd: number | null;
  volumeH24: number | null;
  priceChangeH24: number | null;
  /** When the token's first pair was created (ms since epoch); null when unknown. */
  pairCreatedAt: number | null;
}

export interface Risk {
  level: RiskLevel;
  volToLiq: number | null;
  flags: string[];
}

/**
 * Where each rule gives `elevated` and `high`: liquidity in USD (below it; none known is high), 24h volume over
 * liquidity (above it), the 24h price move either way in % (at or above it), the age of the token's oldest pair
 * (under it).
 */
export const RISK_THRESHOLDS = {
  liquidityElevatedUsd: 50_000,
  liquidityHighUsd: 10_000,
  volToLiqElevated: 3,
  volToLiqHigh: 10,
  moveElevatedPct: 20,
  moveHighPct: 50,
  ageElevatedMs: 7 * 24 * 3600_000,
  ageHighMs: 24 * 3600_000,
} as const;

export function assessRisk(input: RiskInput, now: number): Risk {
  const t = RISK_THRESHOLDS;
  let level: RiskLevel = "low";
  const flags: string[] = [];
  const raise = (to: RiskLevel, flag: string) => {
    if (to === "high" || (to === "elevated" && level === "low")) level = to;
    flags.push(flag);
  };

  const { liquidityUsd, volumeH24, priceChangeH24, pairCreatedAt } = input;
  if (liquidityUsd === null || liquidityUsd <= 0) raise("high", "no liquidity known");
  else if (liquidityUsd < t.liquidityHighUsd) raise("high", `thin liquidity (${usdCompactText(liquidityUsd)})`);
  else if (liquidityUsd < t.liquidityElevatedUsd)
    raise("elevated", `shallow liquidity (${usdCompactText(liquidityUsd)})`);

  const volToLiq =
    liquidityUsd && liquidityUsd > 0 && volumeH24 !== null ? Math.round((volumeH24 / liquidityUsd) * 100) / 100 : null;
  if (volToLiq !== null && volToLiq > t.volToLiqHigh) raise("high", `24h volume is ${volToLiq.toFixed(1)}x liquidity`);
  else if (volToLiq !== null && volToLiq > t.volToLiqElevated)
    raise("elevated", `24h volume is ${volToLiq.toFixed(1)}x liquidity`);

  if (priceChangeH24 !== null) {
    const move = Math.abs(priceChangeH24);
    const sign = priceChangeH24 > 0 ? "+" : "-";
    if (move >= t.moveHighPct) raise("high", `extreme 24h move (${sign}${move.toFixed(1)}%)`);
    else if (move >= t.moveElevatedPct) raise("elevated", `large 24h move (${sign}${move.toFixed(1)}%)`);
  }

  if (pairCreatedAt !== null) {
    const age = now - pairCreatedAt;
    if (age < t.ageHighMs) raise("high", `trading for less than a day (${Math.max(1, Math.round(age / 3600_000))} h)`);
    else if (age < t.ageElevatedMs) {
      const days = Math.round(age / (24 * 3600_000));
      raise("elevated", `trading for ${days} day${days === 1 ? "" : "s"}`);
    }
  }
  return { level, volToLiq, flags };
}

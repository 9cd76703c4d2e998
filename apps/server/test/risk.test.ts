import { describe, expect, it } from "vitest";
import { assessRisk, RISK_THRESHOLDS as T } from "../src/tools/risk.js";

const now = Date.UTC(2026, 10, 22);
const calm = {
  liquidityUsd: 1_000_000,
  volumeH24: 500_000,
  priceChangeH24: 2,
  pairCreatedAt: now - 90 * 24 * 3600_000,
};

describe("assessRisk", () => {
  it("is low with no flag for a deep, calm, old market", () => {
    expect(assessRisk(calm, now)).toEqual({ level: "low", volToLiq: 0.5, flags: [] });
  });

  it.each([
    ["liquidity just above the elevated line", { liquidityUsd: T.liquidityElevatedUsd, volumeH24: 0 }, "low"],
    ["liquidity just below it", { liquidityUsd: T.liquidityElevatedUsd - 1, volumeH24: 0 }, "elevated"],
    ["liquidity just below the high line", { liquidityUsd: T.liquidityHighUsd - 1, volumeH24: 0 }, "high"],
    ["no liquidity", { liquidityUsd: null }, "high"],
    ["volume exactly 3x liquidity", { volumeH24: 3_000_000 }, "low"],
    ["volume just over 3x", { volumeH24: 3_010_000 }, "elevated"],
    ["volume just over 10x", { volumeH24: 10_010_000 }, "high"],
    ["a 19.9% move", { priceChangeH24: -19.9 }, "low"],
    ["a 20% move", { priceChangeH24: 20 }, "elevated"],
    ["a -50% move", { priceChangeH24: -50 }, "high"],
    ["a pair 8 days old", { pairCreatedAt: now - 8 * 24 * 3600_000 }, "low"],
    ["a pair 6 days old", { pairCreatedAt: now - 6 * 24 * 3600_000 }, "elevated"],
    ["a pair 3 hours old", { pairCreatedAt: now - 3 * 3600_000 }, "high"],
  ] as const)("%s -> %s", (_name, change, level) => {
    const risk = assessRisk({ ...calm, ...change }, now);
    expect(risk.level).toBe(level);
    expect(risk.flags.length > 0).toBe(level !== "low");
  });

  it("takes the highest level and lists every flag", () => {
    const risk = assessRisk(
      { liquidityUsd: 8_000, volumeH24: 200_000, priceChangeH24: 75, pairCreatedAt: now - 2 * 3600_000 },
      now,
    );
    expect(risk.level).toBe("high");
    expect(risk.volToLiq).toBe(25);
    expect(risk.flags).toEqual([
      "thin liquidity ($8k)",
      "24h volume is 25.0x liquidity",
      "extreme 24h move (+75.0%)",
      "trading for less than a day (2 h)",
    ]);
  });
});

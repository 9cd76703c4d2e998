import type { Clearance } from "./primitives.js";

/** Decimals of the USD stablecoin the service is paid in. */
export const PAYMENT_ASSET_DECIMALS = 6;

/** The two price points of every tool route, in the payment asset's smallest unit. */
export const pricePoints = {
  /** Any caller, no token or account needed: 1.00 USD. */
  standard: "1000000",
  /** A signed-in holder whose token meets the route's clearance: 0.01 USD. */
  discounted: "10000",
} as const;
/** A price point of a paid route: `standard` (anyone) or `discounted` (holders signed in with enough clearance). */
export type PricePoint = keyof typeof pricePoints;

/** "1000000" -> "1.00" (USD, for a 6-decimal stablecoin). */
export function formatUsd(amount: string): string {
  const value = BigInt(amount);
  const unit = 10n ** BigInt(PAYMENT_ASSET_DECIMALS);
  const cents = (value * 100n + unit / 2n) / unit;
  return `${cents / 100n}.${(cents % 100n).toString().padStart(2, "0")}`;
}

/** 1000000 -> "1.00", 5000 -> "0.005": USD to the cent, and to the last unit when the amount has more. */
export function unitsToUsd(units: bigint | string): string {
  const value = BigInt(units);
  const unit = 10n ** BigInt(PAYMENT_ASSET_DECIMALS);
  const fraction = (value % unit).toString().padStart(PAYMENT_ASSET_DECIMALS, "0").replace(/0+$/, "");
  return `${value / unit}.${fraction.padEnd(2, "0")}`;
}

/** An amount in the asset's smallest unit as USD to the last unit ("0.010000"): what books add up exactly. */
export function exactUsd(amount: string): string {
  const value = BigInt(amount);
  const unit = 10n ** BigInt(PAYMENT_ASSET_DECIMALS);
  return `${value / unit}.${(value % unit).toString().padStart(PAYMENT_ASSET_DECIMALS, "0")}`;
}

/** Who the discounted price point is for, by the route's minimum clearance. */
export const clearanceWording = {
  Holder: "any holder of the collection",
  Rare: "holders of a Rare-tier or better token",
  Elite: "holders of an Epic-tier or better token (Elite clearance)",
} as const satisfies Record<Clearance, string>;

/**
 * The work a paid call's answer took, counted while its tool ran: what a metered price is computed from
 * (docs/api.md, "Prices by the work done").
 */
export interface CountedWork {
  /** Reads of the marketplace and the market-data aggregator the answer needed, served from cache or not. */
  upstreamReads: number;
  /** Drops, collections, tokens, pairs or missions the tool looked at to answer. */
  itemsExamined: number;
  /** Blocks of the B20 chain whose logs the answer covers. */
  blocksScanned: number;
}

/** The rates of a metered price, in the payment asset's smallest unit. */
export const meteredRates = {
  /** Every call: 0.01 USD, the lowest charge. */
  base: 10_000n,
  /** Each upstream read: 0.005 USD. */
  upstreamRead: 5_000n,
  /** Each item examined: 0.002 USD. */
  itemExamined: 2_000n,
  /** Each started thousand blocks scanned: 0.001 USD. */
  thousandBlocks: 1_000n,
} as const;

/** The schemes whose payment signs a ceiling and is charged the work done under it; `exact` pays the ceiling. */
export const METERED_SCHEMES = ["batch-settlement", "upto"] as const;

/** True for a scheme charged by the work done (METERED_SCHEMES). */
export function isMeteredScheme(scheme: string): boolean {
  return (METERED_SCHEMES as readonly string[]).includes(scheme);
}

/** The formula of a metered charge, as published in the catalog, the OpenAPI document and docs/api.md. */
export const METERED_FORMULA =
  "charge = 0.01 + 0.005 × upstream reads + 0.002 × items examined + 0.001 × started thousands of blocks scanned " +
  "(USD), at least 0.01 and at most the price point quoted (the ceiling the payment signs)";

/**
 * What a call over a metered scheme is charged for `work`, in the asset's smallest unit: METERED_FORMULA, never
 * below the base (0.01 USD) nor above `ceiling` (the price point quoted: a holder's 0.01 is always charged 0.01).
 */
export function meteredCharge(work: CountedWork, ceiling: bigint | string): bigint {
  const top = BigInt(ceiling);
  const count = (n: number) => BigInt(Math.max(0, Math.trunc(n)));
  const raw =
    meteredRates.base +
    meteredRates.upstreamRead * count(work.upstreamReads) +
    meteredRates.itemExamined * count(work.itemsExamined) +
    meteredRates.thousandBlocks * ((count(work.blocksScanned) + 999n) / 1000n);
  return raw > top ? top : raw;
}

/** A metered price as the catalog and the OpenAPI document publish it (USD strings, METERED_FORMULA). */
export const meteredPricing = {
  schemes: [...METERED_SCHEMES] as string[],
  formula: METERED_FORMULA,
  rates: {
    base: unitsToUsd(meteredRates.base),
    upstreamRead: unitsToUsd(meteredRates.upstreamRead),
    itemExamined: unitsToUsd(meteredRates.itemExamined),
    thousandBlocks: unitsToUsd(meteredRates.thousandBlocks),
  },
  min: unitsToUsd(meteredRates.base),
};

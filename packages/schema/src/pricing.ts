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

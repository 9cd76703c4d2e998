/** Decimals of the USD stablecoin the service is paid in. */
export const PAYMENT_ASSET_DECIMALS = 6;

/** The two price points of every tool route, in the payment asset's smallest unit. */
export const pricePoints = {
  /** Any caller, no token or account needed: 1.00 USD. */
  standard: "1000000",
  /** A signed-in holder whose token meets the route's clearance: 0.01 USD. */
  discounted: "10000",
} as const;
export type PricePoint = keyof typeof pricePoints;

/** "1000000" -> "1.00" (USD, for a 6-decimal stablecoin). */
export function formatUsd(amount: string): string {
  const value = BigInt(amount);
  const unit = 10n ** BigInt(PAYMENT_ASSET_DECIMALS);
  const cents = (value * 100n + unit / 2n) / unit;
  return `${cents / 100n}.${(cents % 100n).toString().padStart(2, "0")}`;
}

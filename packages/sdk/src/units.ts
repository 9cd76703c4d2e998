/** USD amounts and the units of the 6-decimal stablecoins the service is paid in. */

/** Decimals of the USD stablecoins the service is paid in. */
const USD_DECIMALS = 6;

/** "1.00" or 1 (USD) -> 1000000 (units of a 6-decimal stablecoin). */
export function usdToUnits(usd: string | number): bigint {
  const text = typeof usd === "number" ? usd.toFixed(USD_DECIMALS) : usd.trim();
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!match) throw new RangeError(`not a USD amount: ${String(usd)} (use a decimal such as "0.50")`);
  return BigInt(match[1]!) * 10n ** BigInt(USD_DECIMALS) + BigInt((match[2] ?? "").padEnd(USD_DECIMALS, "0"));
}

/** 1000000 -> "1.00"; keeps more decimals only when they matter (the schema's, where the service uses it too). */
export { unitsToUsd } from "@agent-tools/schema";

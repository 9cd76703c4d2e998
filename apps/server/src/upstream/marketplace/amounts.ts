/** Amounts of the marketplace's answers: integers in the currency's smallest unit, and their USD value. */
import { type Address, getAddress, isAddress } from "viem";

/** An amount of a currency: an integer in its smallest unit. */
export interface Amount {
  amount: bigint;
  currency: string;
  decimals: number;
}

/** A currency the collection is priced in, with its USD price when the marketplace knows it. */
export interface Currency {
  symbol: string;
  decimals: number;
  usd: number | null;
}

/**
 * A decimal number the marketplace sends as a JSON number (stats' `floor_price`: 0.0069) in the smallest unit
 * of a currency with `decimals` decimals, from the number's shortest decimal form (so 0.0069 is 6.9e15 wei,
 * not the binary float's 6899999999999999.5). Digits past `decimals` are dropped.
 */
export function decimalToUnits(value: number, decimals: number): bigint {
  if (!Number.isFinite(value) || value <= 0) return 0n;
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(String(value));
  if (!match) return 0n;
  const [, whole = "0", fraction = "", exponent = "0"] = match;
  const digits = `${whole}${fraction}`;
  const shift = decimals + Number(exponent) - fraction.length;
  if (shift >= 0) return BigInt(digits) * 10n ** BigInt(shift);
  return -shift >= digits.length ? 0n : BigInt(digits.slice(0, digits.length + shift));
}

/** The amount's value in USD, from its currency's USD price; null when that price is unknown. */
export function usdValue(amount: Amount, usdPerUnit: number | null): number | null {
  if (usdPerUnit === null) return null;
  return (Number(amount.amount) / 10 ** amount.decimals) * usdPerUnit;
}

const ISO_MAX_SECONDS = 253_402_300_799; // 9999-12-31T23:59:59Z

/** Unix seconds (a Seaport `endTime`) as ISO-8601 UTC; null when absent or not a date (open-ended orders). */
export function secondsToIso(seconds: string | number | null | undefined): string | null {
  if (seconds === null || seconds === undefined) return null;
  const value = Number(seconds);
  if (!Number.isSafeInteger(value) || value <= 0 || value > ISO_MAX_SECONDS) return null;
  return new Date(value * 1000).toISOString();
}

export function addressOrNull(value: string | null | undefined): Address | null {
  return value && isAddress(value, { strict: false }) ? getAddress(value) : null;
}

export const UINT = /^(0|[1-9][0-9]*)$/;

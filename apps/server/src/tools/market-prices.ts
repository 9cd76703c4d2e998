import { type priceSchema, usdAmountText } from "@agent-tools/schema";
import { formatUnits } from "viem";
import type { z } from "zod";
import { type Amount, type Currency, usdValue } from "../upstream/marketplace/amounts.js";

/** A price on the wire: integer amount in the smallest unit, currency, decimals and USD value when known. */
export type Price = z.infer<typeof priceSchema>;

/** A USD figure rounded for the wire: cents from one dollar up, six decimals below. */
export function roundUsd(value: number): number {
  return Number(value.toFixed(Math.abs(value) >= 1 ? 2 : 6));
}

/** The USD price of one unit of the amount's currency, from the collection's currencies; null when unknown. */
export function usdRate(amount: Amount, currencies: ReadonlyMap<string, Currency>): number | null {
  const currency = currencies.get(amount.currency);
  return currency && currency.decimals === amount.decimals ? currency.usd : null;
}

/** The amount as a wire price, valued in USD with the collection's currency prices. */
export function toPrice(amount: Amount, currencies: ReadonlyMap<string, Currency>): Price {
  const usd = usdValue(amount, usdRate(amount, currencies));
  return {
    amount: amount.amount.toString(),
    currency: amount.currency,
    decimals: amount.decimals,
    usd: usd === null ? null : roundUsd(usd),
  };
}

/** "2.35 ETH", "0.0035 WETH": the amount in whole units, six significant digits at most. */
export function formatPrice(price: Price): string {
  const units = Number(formatUnits(BigInt(price.amount), price.decimals));
  return `${units.toLocaleString("en-US", { maximumSignificantDigits: 6 })} ${price.currency}`;
}

/** "2.35 ETH ($7,403.49)", or the amount alone when its USD value is unknown. */
export function formatPriceWithUsd(price: Price): string {
  return price.usd === null ? formatPrice(price) : `${formatPrice(price)} (${usdAmountText(price.usd)})`;
}

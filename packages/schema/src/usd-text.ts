/**
 * USD figures as the service writes them in its briefs and the CLI in its tables, so that one figure reads the same
 * in both: money with cents and thousands separators, prices with four significant digits, totals compact.
 */

/** A number below 1 with `digits` significant digits and no exponent: "0.0004821", "0.00000041". */
function smallText(abs: number, digits: number): string {
  const places = Math.min(20, digits - 1 - Math.floor(Math.log10(abs)));
  return Number(abs.toPrecision(digits))
    .toFixed(places)
    .replace(/\.?0+$/, "");
}

/**
 * An amount of money: cents and thousands separators from one dollar up ("$7,403.49"), two significant digits below
 * ("$0.0042"). For what something is worth: a floor, an offer, a wallet's estimate.
 */
export function usdAmountText(value: number): string {
  const abs = Math.abs(value);
  const sign = value < 0 ? "-" : "";
  if (abs === 0) return "$0.00";
  if (abs < 1) return `${sign}$${smallText(abs, 2)}`;
  return `${sign}$${abs.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/**
 * A token's unit price: four significant digits, never an exponent, whole dollars with separators from 1,000 up
 * ("$0.0004821", "$612.4", "$97,250").
 */
export function usdPriceText(value: number): string {
  if (value <= 0) return "$0";
  if (value >= 1000) return `$${Math.round(value).toLocaleString("en-US")}`;
  if (value >= 1) return `$${Number(value.toPrecision(4))}`;
  return `$${smallText(value, 4)}`;
}

/** A volume, a liquidity or a market cap: three significant digits with a unit ("$1.2B", "$9.85M", "$412k", "$950"). */
export function usdCompactText(value: number): string {
  const abs = Math.abs(value);
  const sign = value < 0 ? "-" : "";
  const sig = (n: number) => Number(n.toPrecision(3)).toString();
  if (abs >= 1e9) return `${sign}$${sig(abs / 1e9)}B`;
  if (abs >= 1e6) return `${sign}$${sig(abs / 1e6)}M`;
  if (abs >= 1e4) return `${sign}$${Math.round(abs / 1e3)}k`;
  if (abs >= 1e3) return `${sign}$${sig(abs / 1e3)}k`;
  if (abs >= 1) return `${sign}$${sig(abs)}`;
  if (abs === 0) return "$0";
  return `${sign}$${smallText(abs, 4)}`;
}

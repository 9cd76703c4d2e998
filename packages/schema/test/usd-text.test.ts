/**
 * USD figures are written once, here, for the service's briefs and the CLI's tables: a figure reads the same in both.
 */
import { describe, expect, it } from "vitest";
import { usdAmountText, usdCompactText, usdPriceText } from "../src/index.js";

describe("USD figures", () => {
  it("writes money with cents and thousands separators, and small amounts with two significant digits", () => {
    expect([1323.18, 7403.494, 12, 1, 0.0042, 0.000012345, 0, -1500].map(usdAmountText)).toEqual([
      "$1,323.18",
      "$7,403.49",
      "$12.00",
      "$1.00",
      "$0.0042",
      "$0.000012",
      "$0.00",
      "-$1,500.00",
    ]);
  });

  it("writes unit prices with four significant digits and never as $0.0000 or an exponent", () => {
    expect([97_250.5, 612.37, 1.0021, 0.0004821, 0.00000041, 0].map(usdPriceText)).toEqual([
      "$97,251",
      "$612.4",
      "$1.002",
      "$0.0004821",
      "$0.00000041",
      "$0",
    ]);
    for (const tiny of [1e-5, 3.2e-9, 4.99e-12]) {
      expect(usdPriceText(tiny)).toMatch(/^\$0\.0*[1-9]\d{0,3}$/);
    }
  });

  it("writes volumes and liquidity compactly", () => {
    expect([1.23e9, 9_850_000, 412_000, 2_400, 950, 0, 0.5].map(usdCompactText)).toEqual([
      "$1.23B",
      "$9.85M",
      "$412k",
      "$2.4k",
      "$950",
      "$0",
      "$0.5",
    ]);
  });
});

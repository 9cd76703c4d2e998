import { describe, expect, it } from "vitest";
import {
  type Clearance,
  clearanceMeets,
  formatUsd,
  PAYMENT_ASSET_DECIMALS,
  pricePoints,
  type ToolName,
  toolNames,
  toolRoutes,
} from "../src/index.js";

const expected: Record<ToolName, { path: string; operationId: string; minimumClearance: Clearance }> = {
  intel: { path: "/intel", operationId: "serviceIntel", minimumClearance: "Holder" },
  dropRadar: { path: "/drop-radar", operationId: "serviceDropRadar", minimumClearance: "Holder" },
  b20Radar: { path: "/b20-radar", operationId: "serviceB20Radar", minimumClearance: "Holder" },
  altchainRadar: { path: "/altchain-radar", operationId: "serviceAltchainRadar", minimumClearance: "Elite" },
  portfolio: { path: "/portfolio", operationId: "servicePortfolio", minimumClearance: "Rare" },
  allowlistScan: { path: "/allowlist-scan", operationId: "serviceAllowlistScan", minimumClearance: "Rare" },
  offerRadar: { path: "/offer-radar", operationId: "serviceOfferRadar", minimumClearance: "Elite" },
};

describe("route table", () => {
  it("has the seven tools", () => {
    expect(toolNames).toHaveLength(7);
    expect([...toolNames].sort()).toEqual(Object.keys(expected).sort());
  });

  it("uses exactly the spec's operationIds", () => {
    expect(toolNames.map((tool) => toolRoutes[tool].operationId).sort()).toEqual(
      [
        "serviceIntel",
        "serviceDropRadar",
        "serviceB20Radar",
        "serviceAltchainRadar",
        "servicePortfolio",
        "serviceAllowlistScan",
        "serviceOfferRadar",
      ].sort(),
    );
  });

  it.each(toolNames)("%s has the spec's path, operationId and minimum clearance", (tool) => {
    const { path, operationId, minimumClearance } = toolRoutes[tool];
    expect({ path, operationId, minimumClearance }).toEqual(expected[tool]);
  });

  it("paths, operationIds and manifest slugs are unique", () => {
    for (const key of ["path", "operationId", "slug"] as const) {
      const values = toolNames.map((tool) => toolRoutes[tool][key]);
      expect(new Set(values).size).toBe(values.length);
    }
  });

  it("every tool has a non-empty summary, description and tags", () => {
    for (const tool of toolNames) {
      const route = toolRoutes[tool];
      expect(route.summary.length).toBeGreaterThan(0);
      expect(route.description.length).toBeGreaterThan(0);
      expect(route.tags.length).toBeGreaterThan(0);
    }
  });
});

describe("who gets the discounted price (clearance meets the route's minimum)", () => {
  it.each<[Clearance, ToolName[]]>([
    ["Holder", ["intel", "dropRadar", "b20Radar"]],
    ["Rare", ["intel", "dropRadar", "b20Radar", "portfolio", "allowlistScan"]],
    ["Elite", [...toolNames]],
  ])("%s clearance qualifies for %j", (held, tools) => {
    const qualifying = toolNames.filter((tool) => clearanceMeets(held, toolRoutes[tool].minimumClearance));
    expect(qualifying.sort()).toEqual([...tools].sort());
  });
});

describe("price points", () => {
  it("standard is 1000000 and discounted is 10000, in the asset's smallest unit", () => {
    expect(pricePoints).toEqual({ standard: "1000000", discounted: "10000" });
    expect(PAYMENT_ASSET_DECIMALS).toBe(6);
  });

  it("formatUsd gives the spec's 1.00 and 0.01 USD", () => {
    expect(formatUsd(pricePoints.standard)).toBe("1.00");
    expect(formatUsd(pricePoints.discounted)).toBe("0.01");
  });

  it.each([
    ["0", "0.00"],
    ["1", "0.00"],
    ["5000", "0.01"],
    ["4999", "0.00"],
    ["1234567", "1.23"],
    ["1235000", "1.24"],
    ["100000000", "100.00"],
    ["123456789012", "123456.79"],
  ])("formatUsd(%j) is %j (rounded to the cent)", (amount, usd) => {
    expect(formatUsd(amount)).toBe(usd);
  });
});

/**
 * The metered price: what a call paid over `batch-settlement` or `upto` is charged for the work its answer took, and
 * how the catalog and the OpenAPI document publish it (docs/api.md, "Prices by the work done").
 */
import { describe, expect, it } from "vitest";
import {
  buildOpenApiDocument,
  buildPaymentCatalog,
  isMeteredScheme,
  METERED_FORMULA,
  meteredCharge,
  paidRoutes,
  paymentCatalogSchema,
  pricePoints,
} from "../src/index.js";
import { PAYMENT_TERMS } from "./helpers.js";

const payment = PAYMENT_TERMS;
const work = (upstreamReads: number, itemsExamined: number, blocksScanned: number) => ({
  upstreamReads,
  itemsExamined,
  blocksScanned,
});

describe("meteredCharge", () => {
  it("charges by the published rates, in the asset's smallest unit", () => {
    // Worked by hand from the formula: 0.01 + 0.005 × reads + 0.002 × items + 0.001 × started thousands of blocks.
    const table: [ReturnType<typeof work>, bigint][] = [
      [work(0, 0, 0), 10_000n],
      [work(0, 1, 0), 12_000n],
      [work(2, 0, 0), 20_000n],
      [work(3, 20, 0), 65_000n],
      [work(1, 0, 1), 16_000n],
      [work(1, 0, 1000), 16_000n],
      [work(1, 0, 1001), 17_000n],
      [work(2, 25, 86_400), 157_000n],
    ];
    for (const [w, expected] of table) expect(meteredCharge(w, pricePoints.standard), JSON.stringify(w)).toBe(expected);
  });

  it("stops at the ceiling, and a holder's 0.01 is always charged 0.01", () => {
    expect(meteredCharge(work(100, 500, 604_800), pricePoints.standard)).toBe(1_000_000n);
    expect(meteredCharge(work(0, 0, 0), pricePoints.discounted)).toBe(10_000n);
    expect(meteredCharge(work(40, 100, 604_800), pricePoints.discounted)).toBe(10_000n);
  });

  it("never leaves 0.01 to the ceiling, and never charges less for more work", () => {
    const reads = [0, 1, 2, 7, 40, 200];
    const items = [0, 1, 3, 25, 100, 500];
    const blocks = [0, 1, 999, 1000, 1001, 86_400, 604_800, 10_000_000];
    for (const ceiling of [pricePoints.standard, pricePoints.discounted]) {
      for (const [r, rs] of reads.entries()) {
        for (const [i, is] of items.entries()) {
          for (const [b, bs] of blocks.entries()) {
            const charge = meteredCharge(work(rs, is, bs), ceiling);
            expect(charge >= 10_000n && charge <= BigInt(ceiling)).toBe(true);
            // One more of any kind of work costs at least as much.
            for (const more of [
              work(reads[r + 1] ?? rs, is, bs),
              work(rs, items[i + 1] ?? is, bs),
              work(rs, is, blocks[b + 1] ?? bs),
            ]) {
              expect(meteredCharge(more, ceiling) >= charge).toBe(true);
            }
          }
        }
      }
    }
  });

  it("is for batch-settlement and upto; exact pays its price point", () => {
    expect(["exact", "batch-settlement", "upto"].map(isMeteredScheme)).toEqual([false, true, true]);
  });
});

describe("the metered price as published", () => {
  const catalog = buildPaymentCatalog({ publicUrl: "https://tools.test", payment, now: new Date(0) });
  it("is in every catalog item but the mission queue's, rates in USD", () => {
    expect(paymentCatalogSchema.safeParse(catalog).success).toBe(true);
    for (const item of catalog.items) {
      if (item.resource.endsWith("/dispatch") && item.method === "POST") {
        expect(item.metered).toBeNull();
        continue;
      }
      expect(item.metered).toEqual({
        schemes: ["batch-settlement", "upto"],
        formula: METERED_FORMULA,
        rates: { base: "0.01", upstreamRead: "0.005", itemExamined: "0.002", thousandBlocks: "0.001" },
        min: "0.01",
      });
    }
  });

  it("is in each paid operation of the OpenAPI document, with the formula in its description", () => {
    const document = buildOpenApiDocument({ serverUrl: "https://tools.test", payment }) as unknown as {
      paths: Record<string, Record<string, { description: string; "x-payment-info": { metered: unknown } }>>;
    };
    for (const route of Object.values(paidRoutes)) {
      const operation = document.paths[route.path]?.["method" in route ? route.method : "post"];
      if (!operation) throw new Error(`no operation for ${route.path}`);
      if ("paidAhead" in route && route.paidAhead) {
        expect(operation["x-payment-info"].metered).toBeNull();
        expect(operation.description).not.toContain(METERED_FORMULA);
      } else {
        expect(operation["x-payment-info"].metered, route.path).toMatchObject({ formula: METERED_FORMULA });
        expect(operation.description, route.path).toContain(METERED_FORMULA);
      }
    }
  });
});

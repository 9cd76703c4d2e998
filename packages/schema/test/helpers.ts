import type { z } from "zod";
import { type ToolName, toolRoutes } from "../src/index.js";

export const HOLDER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
export const ASSET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

/** The payment terms of a service on Base paid in USD Coin, as the catalog and OpenAPI tests build them. */
export const PAYMENT_TERMS = {
  network: "eip155:8453",
  asset: ASSET,
  payTo: HOLDER,
  assetName: "USD Coin",
  assetVersion: "2",
  maxTimeoutSeconds: 120,
} as const;

/** Dotted paths of the issues of a failed parse ("" for the body itself); [] when the parse succeeded. */
export function issuePaths(schema: z.ZodType, input: unknown): string[] {
  const result = schema.safeParse(input);
  if (result.success) return [];
  return result.error.issues.map((issue) => issue.path.map(String).join("."));
}

/** The smallest valid body of each tool: its required fields only. */
export const minimalInput = {
  intel: { tokenId: 7 },
  dropRadar: { tokenId: 7 },
  b20Radar: { tokenId: 7 },
  altchainRadar: { tokenId: 7 },
  portfolio: { tokenId: 7 },
  allowlistScan: { tokenId: 7 },
  offerRadar: { tokenId: 7, slugs: ["night-owls"] },
} as const satisfies Record<ToolName, Record<string, unknown>>;

export function requestOf(tool: ToolName): z.ZodObject {
  return toolRoutes[tool].request;
}

/** The integer bounds and defaults of the spec's Limits table, by tool and field. */
export const integerLimits = [
  { tool: "dropRadar", field: "limit", min: 1, max: 50, default: 20 },
  { tool: "b20Radar", field: "blocksBack", min: 100, max: 604800, default: 302400 },
  { tool: "b20Radar", field: "limit", min: 1, max: 100, default: 25 },
  { tool: "altchainRadar", field: "limit", min: 5, max: 30, default: 15 },
  { tool: "portfolio", field: "nftLimit", min: 1, max: 100, default: 50 },
  { tool: "allowlistScan", field: "limit", min: 1, max: 50, default: 25 },
] as const satisfies readonly { tool: ToolName; field: string; min: number; max: number; default: number }[];

/** A valid slug list of n items. */
export function slugList(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `collection-${i + 1}`);
}

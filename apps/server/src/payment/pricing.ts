import {
  type PaymentRequirements,
  type PaymentTerms,
  paymentRequirementsFor,
  pricePoints,
  type ToolRoute,
} from "@agent-tools/schema";

const clearanceWording = {
  Holder: "any holder of the collection",
  Rare: "holders of a Rare-tier or better token",
  Elite: "holders of an Epic-tier or better token (Elite clearance)",
} as const;

export type PricePointName = keyof typeof pricePoints;

/**
 * The requirement of one price point of a route. Built the same way on the challenge and on the paid retry,
 * so the price quoted and the price charged are the same object, field for field.
 */
export function priceRequirements(terms: PaymentTerms, route: ToolRoute, point: PricePointName): PaymentRequirements {
  const who =
    point === "standard" ? "standard price, any caller" : `price for ${clearanceWording[route.minimumClearance]}`;
  return paymentRequirementsFor(terms, pricePoints[point], `${route.summary}: ${who}`);
}

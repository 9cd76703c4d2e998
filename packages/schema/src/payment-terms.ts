/**
 * What a paid route costs and how it is paid: the payment terms of the deployment and the x402 `accepts` entry of
 * each price point. The OpenAPI document, the 402 answers, the payment catalog and the tool manifests all quote
 * these, so they agree field for field.
 */
import type { ToolRoute } from "./paid-routes.js";
import { clearanceWording, type PricePoint, pricePoints } from "./pricing.js";
import type { PaymentRequirements } from "./x402.js";

/** Where and how the service is paid; the document's examples and `x-payment-info` are built from it. */
export interface PaymentTerms {
  /** CAIP-2 payment network, `eip155:<chainId>`. */
  network: string;
  asset: string;
  payTo: string;
  /** EIP-712 domain of the asset. */
  assetName: string;
  assetVersion: string;
  maxTimeoutSeconds: number;
}

/** Builds one `accepts` entry for a price point of a route. */
export function paymentRequirementsFor(terms: PaymentTerms, amount: string, description: string): PaymentRequirements {
  return {
    scheme: "exact",
    network: terms.network,
    asset: terms.asset,
    currency: terms.asset,
    amount,
    payTo: terms.payTo,
    recipient: terms.payTo,
    maxTimeoutSeconds: terms.maxTimeoutSeconds,
    mimeType: "application/json",
    description,
    extra: { name: terms.assetName, version: terms.assetVersion },
  };
}

/**
 * The `accepts` entry of one price point of a route, its description saying who the point is for. The OpenAPI
 * document, the payment catalog and the tool manifests all quote this, so they agree field for field.
 */
export function routePaymentRequirements(
  terms: PaymentTerms,
  route: ToolRoute,
  point: PricePoint,
): PaymentRequirements {
  const who =
    point === "standard" ? "standard price, any caller" : `price for ${clearanceWording[route.minimumClearance]}`;
  return paymentRequirementsFor(terms, pricePoints[point], `${route.summary}: ${who}`);
}

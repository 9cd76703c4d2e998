import { requestJsonSchema, responseJsonSchema } from "./json-schema.js";
import { paidRoutes, routeMethod, type ToolRoute } from "./paid-routes.js";
import { type PaymentTerms, routePaymentRequirements } from "./payment-terms.js";
import { meteredPricing } from "./pricing.js";
import { SERVICE_DESCRIPTION, SERVICE_DISPLAY_NAME, SERVICE_ICON_PATH } from "./service.js";
import type { PaymentCatalog } from "./x402.js";

/** Options of `buildPaymentCatalog`: the service's public origin and payment terms. */
export interface PaymentCatalogOptions {
  /** Public origin of the service, for example `https://tools.example.com` (no trailing slash). */
  publicUrl: string;
  payment: PaymentTerms;
  /** When the catalog is generated (`generatedAt`). */
  now: Date;
  /** The address that signs offers and receipts, when the service signs them. */
  receiptSigner?: string;
}

/** The catalog item of one tool route: both price points, a sample input and self-contained JSON Schemas. */
export function buildCatalogItem(route: ToolRoute, options: Omit<PaymentCatalogOptions, "now">) {
  return {
    resource: `${options.publicUrl}${route.path}`,
    type: "http" as const,
    method: routeMethod(route),
    serviceName: SERVICE_DISPLAY_NAME,
    description: route.description,
    tags: [...route.tags],
    accepts: [
      routePaymentRequirements(options.payment, route, "standard"),
      routePaymentRequirements(options.payment, route, "discounted"),
    ],
    input: structuredClone(route.sampleInput),
    inputSchema: requestJsonSchema(route),
    outputSchema: responseJsonSchema(route),
    metered: "paidAhead" in route && route.paidAhead ? null : structuredClone(meteredPricing),
  };
}

/**
 * The x402 v2 payment catalog (`GET /.well-known/x402`): every paid tool with its two price points, generated
 * from the route table and the Zod contracts.
 */
export function buildPaymentCatalog(options: PaymentCatalogOptions): PaymentCatalog {
  const { publicUrl, payment } = options;
  return {
    x402Version: 2,
    serviceName: SERVICE_DISPLAY_NAME,
    description: SERVICE_DESCRIPTION,
    homepage: publicUrl,
    openapi: `${publicUrl}/openapi.json`,
    iconUrl: `${publicUrl}${SERVICE_ICON_PATH}`,
    network: payment.network,
    asset: payment.asset,
    items: Object.values(paidRoutes).map((route) => buildCatalogItem(route, { publicUrl, payment })),
    ...(options.receiptSigner ? { receiptSigner: options.receiptSigner } : {}),
    generatedAt: options.now.toISOString(),
  };
}

import { z } from "zod";
import { addressSchema, caip2Schema, uintStringSchema } from "./primitives.js";

/**
 * One price point as an x402 v2 `accepts` entry. x402 v2 needs scheme, network, asset, amount, payTo,
 * maxTimeoutSeconds and extra {name, version} (the asset's EIP-712 domain); the spec adds currency, recipient,
 * mimeType and description, which mirror asset, payTo and the resource. The scheme is `exact`, `batch-settlement`
 * (a payment channel), whose `extra` adds the channel terms (`receiverAuthorizer`, `withdrawDelay`), or `upto` (a
 * Permit2 authorization of up to the amount), whose `extra` adds the `facilitatorAddress` its witness must name.
 */
export const paymentRequirementsSchema = z
  .object({
    scheme: z.enum(["exact", "batch-settlement", "upto"]).meta({
      description:
        "exact: one transfer per call; batch-settlement: a voucher over a payment channel (docs/channels.md); " +
        "upto: a Permit2 authorization of up to the amount, settled for the work done.",
    }),
    network: caip2Schema,
    asset: addressSchema,
    currency: addressSchema.meta({ description: "Same as asset." }),
    amount: uintStringSchema.meta({ description: "Price in the asset's smallest unit." }),
    payTo: addressSchema,
    recipient: addressSchema.meta({ description: "Same as payTo." }),
    maxTimeoutSeconds: z.number().int().positive(),
    mimeType: z.literal("application/json"),
    description: z.string(),
    extra: z
      .object({ name: z.string(), version: z.string() })
      .catchall(z.unknown())
      .meta({ description: "EIP-712 domain of the asset (name, version), as x402's EVM exact scheme needs." }),
  })
  .meta({ id: "PaymentRequirements" });
/** One way to pay a route (x402 v2): scheme, network, asset, amount, recipient. */
export type PaymentRequirements = z.infer<typeof paymentRequirementsSchema>;

/** The resource a 402 answer is about: its URL, description and media type (x402 v2). */
export const resourceInfoSchema = z.object({
  url: z.string(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
});

/** Body of a 402 and content of the `PAYMENT-REQUIRED` header (base64 JSON). */
export const paymentRequiredSchema = z
  .object({
    x402Version: z.literal(2),
    error: z.string().optional().meta({ description: "Why payment or sign-in is required." }),
    resource: resourceInfoSchema,
    accepts: z.array(paymentRequirementsSchema),
    extensions: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: "PaymentRequired" });
/** The body of a 402 answer (x402 v2 `PaymentRequired`): the resource, the ways to pay, extensions and an error. */
export type PaymentRequired = z.infer<typeof paymentRequiredSchema>;

/** Content of the `PAYMENT-RESPONSE` header on a paid success. */
export const settlementResponseSchema = z
  .object({
    success: z.boolean(),
    transaction: z.string(),
    network: caip2Schema,
    payer: z.string().optional(),
    errorReason: z.string().optional(),
  })
  .meta({ id: "SettlementResponse" });

const usdText = z.string().regex(/^\d+\.\d{2,6}$/);

/** A metered price as published (`meteredPricing`): the schemes, the formula and its rates in USD. */
export const meteredPricingSchema = z
  .object({
    schemes: z
      .array(z.string())
      .meta({ description: "The schemes charged by the work done: a payment signs a ceiling." }),
    formula: z.string(),
    rates: z.object({ base: usdText, upstreamRead: usdText, itemExamined: usdText, thousandBlocks: usdText }),
    min: usdText.meta({ description: "The lowest charge, USD; the highest is the price point quoted." }),
  })
  .meta({ id: "MeteredPricing" });

/** One paid route in the payment catalog: its resource, method, description and accepted payments. */
export const catalogItemSchema = z
  .object({
    resource: z.string().meta({ description: "Absolute URL of the tool route." }),
    type: z.literal("http"),
    method: z.enum(["POST", "GET"]),
    serviceName: z.string(),
    description: z.string(),
    tags: z.array(z.string()),
    accepts: z.array(paymentRequirementsSchema),
    input: z.record(z.string(), z.unknown()).meta({ description: "A sample request body." }),
    inputSchema: z.record(z.string(), z.unknown()).meta({ description: "JSON Schema of the request body." }),
    outputSchema: z.record(z.string(), z.unknown()).meta({ description: "JSON Schema of the 200 response." }),
    metered: meteredPricingSchema.nullable().meta({
      description:
        "How a call paid over a metered scheme is charged (the price point in `accepts` is its ceiling); null for a " +
        "route charged its price point on every scheme (`/dispatch`: the mission runs later).",
    }),
  })
  .meta({ id: "PaymentCatalogItem" });

/** The payment catalog served at `/.well-known/x402`: every paid route and its prices. */
export const paymentCatalogSchema = z
  .object({
    x402Version: z.literal(2),
    serviceName: z.string(),
    description: z.string(),
    homepage: z.string(),
    openapi: z.string().meta({ description: "URL of the OpenAPI document." }),
    iconUrl: z.string(),
    network: caip2Schema,
    asset: addressSchema,
    items: z.array(catalogItemSchema),
    receiptSigner: addressSchema.optional().meta({
      description:
        "The address whose key signs each 402's offer and each paid answer's receipt (x402 offer-receipt, EIP-712). " +
        "Absent when the service signs none.",
    }),
    generatedAt: z.iso.datetime(),
  })
  .meta({ id: "PaymentCatalog" });
/** The payment catalog served at `/.well-known/x402` (see {@link paymentCatalogSchema}). */
export type PaymentCatalog = z.infer<typeof paymentCatalogSchema>;

/**
 * A signed offer of x402's offer-receipt extension, EIP-712 form (`extensions["offer-receipt"].info.offers[]` of a
 * 402): the price of a resource, signed by the service (domain `x402 offer`, version 1, chain id 1).
 */
export const signedOfferSchema = z
  .object({
    format: z.literal("eip712"),
    acceptIndex: z.number().int().nonnegative().optional(),
    payload: z.object({
      version: z.number().int(),
      resourceUrl: z.string(),
      scheme: z.string(),
      network: z.string(),
      asset: z.string(),
      payTo: z.string(),
      amount: z.string(),
      validUntil: z.number().int().meta({ description: "Unix seconds." }),
    }),
    signature: z.string(),
  })
  .meta({ id: "SignedOffer" });
/** See {@link signedOfferSchema}. */
export type SignedOffer = z.infer<typeof signedOfferSchema>;

/**
 * A signed receipt of x402's offer-receipt extension, EIP-712 form (`extensions["offer-receipt"].info.receipt` of a
 * settlement): who paid for which resource, in which transaction, signed by the service (domain `x402 receipt`,
 * version 1, chain id 1).
 */
export const signedReceiptSchema = z
  .object({
    format: z.literal("eip712"),
    payload: z.object({
      version: z.number().int(),
      network: z.string(),
      resourceUrl: z.string(),
      payer: z.string(),
      issuedAt: z.number().int().meta({ description: "Unix seconds." }),
      transaction: z.string(),
    }),
    signature: z.string(),
  })
  .meta({ id: "SignedReceipt" });
/** See {@link signedReceiptSchema}. */
export type SignedReceipt = z.infer<typeof signedReceiptSchema>;

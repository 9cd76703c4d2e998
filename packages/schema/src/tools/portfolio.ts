import { z } from "zod";
import { portfolioNftSchema, receivedOfferSchema } from "../objects.js";
import { addressSchema, chainSchema, tokenIdSchema } from "../primitives.js";
import { briefField, callerField, clearanceField } from "./common.js";

/** The request of `POST /portfolio` (and its GET form). */
export const portfolioRequestSchema = z
  .object({
    tokenId: tokenIdSchema,
    walletAddress: addressSchema
      .optional()
      .meta({ description: "Wallet to scan; defaults to the authenticated caller." }),
    chain: chainSchema.default("ethereum"),
    nftLimit: z.number().int().min(1).max(100).default(50).meta({ description: "NFTs returned, 1 to 100." }),
  })
  .meta({ id: "PortfolioRequest" });

/** The answer of `/portfolio`: a wallet's NFTs with their floors, and the offers it received. */
export const portfolioResponseSchema = z
  .object({
    wallet: addressSchema,
    chain: chainSchema,
    nftCount: z.number().int().min(0),
    nfts: z.array(portfolioNftSchema),
    offersReceived: z.array(receivedOfferSchema),
    estimatedValueUsd: z.number().optional(),
    brief: briefField,
    caller: callerField.optional(),
    clearance: clearanceField.optional(),
  })
  .meta({ id: "PortfolioResponse" });

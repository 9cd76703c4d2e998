import { z } from "zod";
import { dropSchema } from "../objects.js";
import { addressSchema, chainSchema, slugSchema, tokenIdSchema } from "../primitives.js";
import { briefField, callerField, dropFeedSchema, generatedAtField } from "./common.js";

/** The request of `POST /drop-radar` (and its GET form). */
export const dropRadarRequestSchema = z
  .object({
    tokenId: tokenIdSchema,
    type: dropFeedSchema.default("all"),
    limit: z.number().int().min(1).max(50).default(20).meta({ description: "Maximum drops returned, 1 to 50." }),
    chain: chainSchema.optional().meta({ description: "Chain filter; omit for all chains." }),
    scanChains: z.boolean().default(true).meta({
      description: "Also query each known chain on its own, to catch drops missing from the unfiltered feed.",
    }),
    enrich: z.boolean().default(false).meta({ description: "Fetch per-drop detail instead of using list-stage data." }),
    checkWalletEligibility: z
      .boolean()
      .default(false)
      .meta({ description: "Probe mint eligibility for `walletAddress` (or the authenticated caller)." }),
    walletAddress: addressSchema
      .optional()
      .meta({ description: "Wallet for eligibility checks; defaults to the caller." }),
    watchSlugs: z
      .array(slugSchema)
      .max(10, { error: "watchSlugs takes at most 10 slugs" })
      .default([])
      .meta({ description: "Collection slugs resolved directly, even when absent from the feeds (at most 10)." }),
  })
  .meta({ id: "DropRadarRequest" });

/** The answer of `/drop-radar`: live and upcoming NFT drops, with their stages and verdicts. */
export const dropRadarResponseSchema = z
  .object({
    type: dropFeedSchema,
    generatedAt: generatedAtField,
    count: z.number().int().min(0),
    drops: z.array(dropSchema),
    brief: briefField,
    caller: callerField.optional(),
  })
  .meta({ id: "DropRadarResponse" });

import { z } from "zod";
import { allowlistEntrySchema } from "../objects.js";
import { addressSchema, chainSchema, tokenIdSchema } from "../primitives.js";
import { briefField, callerField, clearanceField, dropFeedSchema, generatedAtField } from "./common.js";

/** The request of `POST /allowlist-scan` (and its GET form). */
export const allowlistScanRequestSchema = z
  .object({
    tokenId: tokenIdSchema,
    type: dropFeedSchema.default("all"),
    limit: z.number().int().min(1).max(50).default(25).meta({ description: "Maximum drops scanned, 1 to 50." }),
    chain: chainSchema.optional(),
    scanChains: z.boolean().default(true).meta({
      description: "Also query each known chain on its own, to catch drops missing from the unfiltered feed.",
    }),
    walletAddress: addressSchema
      .optional()
      .meta({ description: "Wallet to check; defaults to the authenticated caller." }),
    eligibleOnly: z
      .boolean()
      .default(false)
      .meta({
        description:
          "true: leave the drops the wallet cannot mint out of the answer (no `ineligible` list); false (the default): " +
          "list them in `ineligible`.",
      }),
  })
  .meta({ id: "AllowlistScanRequest" });

/** The answer of `/allowlist-scan`: the drops the wallet is eligible for, and why not for the others. */
export const allowlistScanResponseSchema = z
  .object({
    type: dropFeedSchema,
    generatedAt: generatedAtField,
    scanned: z.number().int().min(0),
    eligibleCount: z.number().int().min(0),
    eligible: z.array(allowlistEntrySchema),
    ineligible: z.array(allowlistEntrySchema).optional(),
    brief: briefField,
    caller: callerField.optional(),
    clearance: clearanceField.optional(),
  })
  .meta({ id: "AllowlistScanResponse" });

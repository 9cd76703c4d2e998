import { z } from "zod";
import { radarTokenSchema } from "../objects.js";
import { addressSchema, tokenIdSchema } from "../primitives.js";
import { briefField, callerField, clearanceField, generatedAtField } from "./common.js";

/** The only tool request that rejects unknown properties (spec: "no properties beyond these are allowed"). */
export const altchainRadarRequestSchema = z
  .strictObject({
    tokenId: tokenIdSchema,
    address: addressSchema
      .optional()
      .meta({ description: "Token address to inspect; omit to scan the most active tokens." }),
    limit: z.number().int().min(5).max(30).default(15).meta({ description: "Tokens returned, 5 to 30." }),
    includeStables: z.boolean().default(false).meta({ description: "Include stablecoins and wrapped natives." }),
  })
  .meta({ id: "AltchainRadarRequest" });

/** The answer of `/altchain-radar`: the second chain's tokens, ranked, with their markets and risk. */
export const altchainRadarResponseSchema = z
  .object({
    generatedAt: generatedAtField,
    count: z.number().int().min(0),
    tokens: z.array(radarTokenSchema),
    brief: briefField,
    caller: callerField.optional(),
    clearance: clearanceField.optional(),
  })
  .meta({ id: "AltchainRadarResponse" });

import { z } from "zod";
import { b20TokenSchema } from "../objects.js";
import { addressSchema, tokenIdSchema, uintStringSchema } from "../primitives.js";
import { briefField, callerField, generatedAtField } from "./common.js";

/** The request of `POST /b20-radar` (and its GET form). */
export const b20RadarRequestSchema = z
  .object({
    tokenId: tokenIdSchema,
    address: addressSchema.optional().meta({
      description:
        "B20 token address to inspect (B20 tokens begin with the 10-byte prefix 0xB200000000000000000000, then the " +
        "variant byte; 0xB20f000000000000000000000000000000000000 is the factory itself, not a token); omit to scan " +
        "recent deployments of the factory.",
      example: "0xB200000000000000000000000000000000000001",
    }),
    blocksBack: z
      .number()
      .int()
      .min(100)
      .max(604800)
      .default(302400)
      .meta({ description: "Blocks to scan back, 100 to 604800 (about 14 days); default about 7 days." }),
    limit: z.number().int().min(1).max(100).default(25).meta({ description: "Maximum tokens returned, 1 to 100." }),
  })
  .meta({ id: "B20RadarRequest" });

/** The answer of `/b20-radar`: B20 tokens created on Base, with their markets and risk. */
export const b20RadarResponseSchema = z
  .object({
    generatedAt: generatedAtField,
    count: z.number().int().min(0),
    detectedCount: z.number().int().min(0).optional(),
    truncated: z.boolean().optional(),
    fromBlock: uintStringSchema.optional(),
    toBlock: uintStringSchema.optional(),
    blocksBack: z.number().int().optional(),
    tokens: z.array(b20TokenSchema),
    brief: briefField,
    caller: callerField.optional(),
  })
  .meta({ id: "B20RadarResponse" });

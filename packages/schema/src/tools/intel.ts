import { z } from "zod";
import { rarityTierSchema, tokenIdSchema } from "../primitives.js";
import { briefField, callerField } from "./common.js";

/** The request of `POST /intel`: the agent's token. */
export const intelRequestSchema = z.object({ tokenId: tokenIdSchema }).meta({ id: "IntelRequest" });

/** The answer of `/intel`: the agent's name, rarity tier and score, traits, and a brief. */
export const intelResponseSchema = z
  .object({
    tokenId: tokenIdSchema,
    name: z.string(),
    rarity_tier: rarityTierSchema,
    rarity_score: z.number().optional(),
    edition: z.string().optional(),
    traits: z.record(z.string(), z.string()).meta({ description: "Trait values keyed by trait name." }),
    brief: briefField,
    caller: callerField.optional(),
  })
  .meta({ id: "IntelResponse" });

import { z } from "zod";
import { offerRadarEntrySchema } from "../objects.js";
import { slugSchema, tokenIdSchema } from "../primitives.js";
import { briefField, callerField, clearanceField } from "./common.js";

/** The request of `POST /offer-radar` (and its GET form). */
export const offerRadarRequestSchema = z
  .object({
    tokenId: tokenIdSchema,
    slugs: z
      .array(slugSchema)
      .min(1, { error: "slugs needs at least 1 slug" })
      .max(10, { error: "slugs takes at most 10 slugs" })
      .meta({ description: "Marketplace collection slugs, 1 to 10." }),
  })
  .meta({ id: "OfferRadarRequest" });

/** The answer of `/offer-radar`: the collections' floors, top offers and spreads. */
export const offerRadarResponseSchema = z
  .object({
    count: z.number().int().min(0),
    collections: z.array(offerRadarEntrySchema),
    brief: briefField,
    caller: callerField.optional(),
    clearance: clearanceField.optional(),
  })
  .meta({ id: "OfferRadarResponse" });

import { z } from "zod";
import { addressSchema, clearanceSchema, isoDateTimeSchema } from "../primitives.js";

export const briefField = z.string().min(1).meta({ description: "Human-readable summary of the result." });
export const callerField = addressSchema.meta({ description: "Address of the authenticated (SIWE) caller." });
export const clearanceField = clearanceSchema;
export const generatedAtField = isoDateTimeSchema.meta({
  description: "When the answer was generated (ISO-8601 UTC).",
});

/** Drop discovery feeds of the marketplace. */
export const dropFeedSchema = z
  .enum(["all", "featured", "upcoming", "recently_minted"])
  .meta({ description: "Discovery feed to scan; `all` merges every feed." });

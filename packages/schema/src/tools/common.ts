import { z } from "zod";
import { addressSchema, clearanceSchema, isoDateTimeSchema } from "../primitives.js";

/** The `brief` every tool answers with: one human-readable summary of the result. */
export const briefField = z.string().min(1).meta({ description: "Human-readable summary of the result." });
/** The `caller` field of an answer: the signed-in address, when there is one. */
export const callerField = addressSchema.meta({ description: "Address of the authenticated (SIWE) caller." });
/** The `clearance` field of an answer: the clearance of the token the call was made for. */
export const clearanceField = clearanceSchema;
/** The `generatedAt` field of an answer: when it was generated. */
export const generatedAtField = isoDateTimeSchema.meta({
  description: "When the answer was generated (ISO-8601 UTC).",
});

/** Drop discovery feeds of the marketplace. */
export const dropFeedSchema = z
  .enum(["all", "featured", "upcoming", "recently_minted"])
  .meta({ description: "Discovery feed to scan; `all` merges every feed." });

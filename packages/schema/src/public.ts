import { z } from "zod";
import {
  addressSchema,
  COLLECTION_SIZE,
  clearanceSchema,
  rarityTierSchema,
  tokenIdSchema,
  uintStringSchema,
} from "./primitives.js";

/** The answer of `GET /healthz`. */
export const healthSchema = z
  .object({ ok: z.boolean().meta({ description: "True when the service is up." }), service: z.string() })
  .meta({ id: "Health" });
/** The answer of `GET /healthz`. */
export type Health = z.infer<typeof healthSchema>;

/** Path parameter `tokenId`: digits only, then the same bounds as in the tool bodies. */
export const tokenIdParamSchema = z
  .string()
  .regex(/^[0-9]{1,6}$/, { error: "tokenId must be an integer" })
  .transform(Number)
  .pipe(tokenIdSchema);

/** An agent's ERC-8217 binding, in short, as its identity record gives it. */
export const bindingSummarySchema = z.object({
  bound: z.boolean(),
  standard: z.literal("ERC-8217"),
  statusUrl: z.string(),
});

/** The answer of `GET /agents/info/:tokenId`: a revealed agent's identity record. */
export const agentInfoSchema = z
  .object({
    tokenId: tokenIdSchema,
    name: z.string(),
    edition: z.string(),
    owner: addressSchema,
    image: z.string(),
    traits: z.record(z.string(), z.string()).meta({ description: "On-chain trait labels keyed by trait name." }),
    rarity: z
      .object({
        tier: rarityTierSchema,
        score: z
          .number()
          .meta({ description: "Information content: sum of -log2(frequency) of the token's trait values." }),
        rank: z.number().int().min(1).max(COLLECTION_SIZE).meta({ description: "1 is the rarest." }),
        of: z.number().int().meta({ description: "Number of ranked (revealed) agents." }),
      })
      .meta({
        description:
          "Rarity among the revealed agents; tiers by rank (top 1% Legendary, 4% Epic, 15% Rare, 30% Uncommon).",
      }),
    clearance: clearanceSchema,
    registration: z.object({
      agentId: uintStringSchema,
      agentRegistry: z.string().meta({ description: "CAIP-10 address of the ERC-8004 Identity Registry." }),
      registrationFile: z.string(),
      binding: bindingSummarySchema,
    }),
  })
  .meta({ id: "AgentInfo", description: "Public identity record of a revealed agent." });
/** A revealed agent's identity record (see {@link agentInfoSchema}). */
export type AgentInfo = z.infer<typeof agentInfoSchema>;

/** ERC-8004 agent registration file (registration-v1). */
export const registrationFileSchema = z
  .object({
    type: z.literal("https://eips.ethereum.org/EIPS/eip-8004#registration-v1"),
    name: z.string(),
    description: z.string(),
    image: z.string(),
    services: z.array(z.object({ name: z.string(), endpoint: z.string(), version: z.string().optional() })),
    x402Support: z.boolean(),
    active: z.boolean(),
    registrations: z.array(z.object({ agentId: z.number().int(), agentRegistry: z.string() })),
    supportedTrust: z.array(z.string()),
  })
  .meta({ id: "RegistrationFile", description: "ERC-8004 registration file of a token-bound agent." });
/** An agent's ERC-8004 registration file (see {@link registrationFileSchema}). */
export type RegistrationFile = z.infer<typeof registrationFileSchema>;

/** ERC-8217 binding status, as of a block (see the route's description in the OpenAPI document). */
export const bindingStatusSchema = z
  .object({
    tokenId: tokenIdSchema,
    agentId: uintStringSchema.meta({ description: "ERC-8004 agent id of the token's agent." }),
    agentRegistry: z.string().meta({ description: "CAIP-10 address of the ERC-8004 Identity Registry." }),
    bound: z.boolean().meta({ description: "True when the agent's binding contract binds it to this token." }),
    standard: z.literal("ERC-8217"),
    bindingContract: addressSchema
      .nullable()
      .meta({ description: "Binding contract named by the registry's `agent-binding` metadata." }),
    tokenStandard: z.enum(["ERC721", "ERC1155", "ERC6909"]).nullable(),
    tokenContract: addressSchema.nullable(),
    boundTokenId: uintStringSchema.nullable(),
    owner: addressSchema.meta({ description: "Current owner of the token." }),
    blockNumber: uintStringSchema.meta({ description: "Block the status was read at." }),
  })
  .meta({ id: "BindingStatus", description: "ERC-8217 binding status of the token's agent, as of `blockNumber`." });
/** An agent's live ERC-8217 binding status (see {@link bindingStatusSchema}). */
export type BindingStatus = z.infer<typeof bindingStatusSchema>;

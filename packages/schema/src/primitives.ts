import { z } from "zod";

/** Size of the collection: token ids run from 1 to this number inclusive. */
export const COLLECTION_SIZE = 6666;

/** A missing field is required; a value of another type must be `what`. */
const requiredOr = (what: string) => (issue: { input?: unknown }) => (issue.input === undefined ? "is required" : what);

/** A token of the collection: an integer from 1 to 6666. */
export const tokenIdSchema = z
  .number({ error: requiredOr("tokenId must be an integer") })
  .int({ error: "tokenId must be an integer" })
  .min(1, { error: `tokenId must be between 1 and ${COLLECTION_SIZE}` })
  .max(COLLECTION_SIZE, { error: `tokenId must be between 1 and ${COLLECTION_SIZE}` })
  .meta({ description: `Token id of the collection, 1 to ${COLLECTION_SIZE}.`, example: 7 });

/** A 20-byte EVM address in hex; any letter case is accepted on input, responses are EIP-55. */
export const addressSchema = z
  .string({ error: requiredOr("must be a string") })
  .regex(/^0x[0-9a-fA-F]{40}$/, { error: "must be a 20-byte hex address (0x followed by 40 hex digits)" })
  .meta({ description: "EVM address (20 bytes, hex).", example: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" });

/** Marketplace collection slug; the pattern keeps it from injecting a path or a query upstream. */
export const slugSchema = z
  .string({ error: requiredOr("must be a string") })
  .regex(/^[a-z0-9][a-z0-9_-]{0,99}$/, {
    error: "must be a collection slug: lowercase letters, digits, '-' or '_', at most 100 characters",
  })
  .meta({ description: "Marketplace collection slug.", example: "agent-tools-genesis" });

/** Marketplace chain identifier (for example `ethereum`, `base`, `ape_chain`). */
export const chainSchema = z
  .string({ error: requiredOr("must be a string") })
  .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, {
    error: "must be a chain identifier: lowercase letters, digits, '-' or '_', at most 40 characters",
  })
  .meta({ description: "Chain identifier as the marketplace names it.", example: "ethereum" });

/** An unsigned integer written as a decimal string (amounts in an asset's smallest unit, block numbers). */
export const uintStringSchema = z
  .string()
  .regex(/^(0|[1-9][0-9]*)$/, { error: "must be an unsigned integer written in decimal" })
  .meta({ description: "Unsigned integer as a decimal string.", example: "1000000" });

/** ISO-8601 timestamp in UTC. */
export const isoDateTimeSchema = z.iso.datetime().meta({ example: "2026-11-22T12:00:00.000Z" });

/** CAIP-2 EVM chain id, `eip155:<chainId>`. */
export const caip2Schema = z
  .string()
  .regex(/^eip155:[0-9]{1,20}$/, { error: "must be a CAIP-2 EVM chain id (eip155:<chainId>)" })
  .meta({ example: "eip155:8453" });

/** The rarity tiers of the collection, rarest last but for `Unrevealed`. */
export const rarityTiers = ["Common", "Uncommon", "Rare", "Epic", "Legendary", "Unrevealed"] as const;
/** A rarity tier of the collection. */
export const rarityTierSchema = z.enum(rarityTiers).meta({ description: "Rarity tier of the token." });
/** A rarity tier of the collection (see {@link rarityTiers}). */
export type RarityTier = z.infer<typeof rarityTierSchema>;

/** ERC-7496 `clearance` trait values, ascending. */
export const clearances = ["Holder", "Rare", "Elite"] as const;
/** A clearance level of the ERC-7496 clearance trait: `Holder`, `Rare` or `Elite`. */
export const clearanceSchema = z
  .enum(clearances)
  .meta({ description: "Clearance of the token (ERC-7496 trait `clearance`): Holder < Rare < Elite." });
/** A clearance level (see {@link clearanceSchema}). */
export type Clearance = z.infer<typeof clearanceSchema>;

/** True when `held` meets or exceeds `required`. */
export function clearanceMeets(held: Clearance, required: Clearance): boolean {
  return clearances.indexOf(held) >= clearances.indexOf(required);
}

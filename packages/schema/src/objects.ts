import { z } from "zod";
import { addressSchema, chainSchema, isoDateTimeSchema, slugSchema, uintStringSchema } from "./primitives.js";

const nullableNumber = z.number().nullable();

/** A token's risk assessment: a level and the flags that set it. */
export const riskSchema = z
  .object({
    level: z.enum(["low", "elevated", "high"]),
    volToLiq: nullableNumber.meta({ description: "24h volume divided by liquidity." }),
    flags: z
      .array(z.string())
      .meta({ description: "Human-readable flags, such as thin liquidity or an extreme 24h move." }),
  })
  .meta({ id: "Risk", description: "Risk assessment of a token's market." });

/** A B20 token's market: price, 24h volume and change, liquidity, market cap, risk and a link. */
export const marketSchema = z
  .object({
    priceUsd: nullableNumber,
    volumeH24: nullableNumber,
    liquidityUsd: nullableNumber,
    priceChangeH24: nullableNumber,
    txns24: nullableNumber,
    marketCap: nullableNumber,
    risk: riskSchema,
    url: z.string().nullable().meta({ description: "Link to the market page." }),
  })
  .meta({ id: "Market", description: "Market data of a B20 token." });

/** A price in a currency: integer amount in the currency's smallest unit, with its USD value when known. */
export const priceSchema = z
  .object({
    amount: uintStringSchema,
    currency: z.string().meta({ example: "ETH" }),
    decimals: z.number().int().min(0).max(36),
    usd: nullableNumber,
  })
  .meta({
    id: "Price",
    description: "A price: integer amount in the currency's smallest unit, and its USD value when known.",
  });

/** One stage of a drop's mint (public or allowlist): when it runs and at what price. */
export const mintStageSchema = z
  .object({
    name: z.string().meta({ example: "Public" }),
    kind: z.enum(["public", "allowlist", "token_gated", "unknown"]),
    startsAt: isoDateTimeSchema.nullable(),
    endsAt: isoDateTimeSchema.nullable(),
    price: priceSchema.nullable(),
    maxPerWallet: z.number().int().nullable(),
  })
  .meta({ id: "MintStage", description: "A mint stage of a drop, with its window and price." });

/** Whether a wallet may mint in one stage of a drop. */
export const stageEligibilitySchema = z.object({
  stage: z.string(),
  eligible: z.boolean(),
  reason: z.string().nullable(),
});

/** A wallet's eligibility for a drop, stage by stage. */
export const walletEligibilitySchema = z
  .object({
    wallet: addressSchema.nullable(),
    checked: z.boolean().meta({ description: "False when no eligibility check was asked for or it could not run." }),
    eligible: z
      .boolean()
      .nullable()
      .meta({ description: "Eligible for at least one open or upcoming stage; null when unchecked." }),
    stages: z.array(stageEligibilitySchema),
    error: z.string().nullable(),
  })
  .meta({ id: "WalletEligibility", description: "Mint eligibility of a wallet for a drop, per stage." });

/** An NFT drop: collection, chain, supply, mint stages, and a wallet's eligibility when asked. */
export const dropSchema = z
  .object({
    slug: slugSchema,
    name: z.string(),
    chain: chainSchema,
    imageUrl: z.string(),
    openseaUrl: z.string().meta({ description: "Link to the marketplace page." }),
    contractAddress: addressSchema,
    totalSupply: z
      .number()
      .int()
      .min(0)
      .nullable()
      .meta({ description: "Tokens minted so far; null when unknown (list data carries no supply: ask `enrich`)." }),
    maxSupply: z
      .number()
      .int()
      .min(0)
      .nullable()
      .meta({ description: "Supply cap; null for open editions (no cap) and when unknown." }),
    remaining: z
      .number()
      .int()
      .min(0)
      .nullable()
      .meta({ description: "maxSupply - totalSupply when both are known; otherwise null." }),
    stages: z.array(mintStageSchema),
    walletEligibility: walletEligibilitySchema,
  })
  .meta({ id: "Drop", description: "An active or upcoming NFT drop." });

/** A B20 token on Base: its variant, name, symbol, supply, currency, and its market when it has one. */
export const b20TokenSchema = z
  .object({
    address: addressSchema,
    variant: z.string().meta({ example: "ASSET" }),
    name: z.string(),
    symbol: z.string(),
    decimals: z.number().int(),
    totalSupply: uintStringSchema,
    currency: z.string(),
    initialized: z.boolean(),
    market: marketSchema,
  })
  .meta({ id: "B20Token", description: "A token of the B20 standard with its market data." });

/** A token of the second chain: identity, price, volume, liquidity, market cap and risk. */
export const radarTokenSchema = z
  .object({
    address: addressSchema,
    symbol: z.string(),
    name: z.string(),
    priceUsd: nullableNumber,
    volume24hUsd: nullableNumber,
    liquidityUsd: nullableNumber,
    marketCapUsd: nullableNumber,
    priceChange24h: nullableNumber,
    txns24: nullableNumber,
    risk: riskSchema,
    url: z.string(),
  })
  .meta({ id: "RadarToken", description: "A token of the second chain's radar." });

/** An NFT in a wallet's portfolio, with its collection's floor. */
export const portfolioNftSchema = z
  .object({
    contract: addressSchema,
    identifier: uintStringSchema,
    collection: z.string(),
    name: z.string().nullable(),
    imageUrl: z.string().nullable(),
    openseaUrl: z.string().nullable(),
    tokenStandard: z.string(),
    floorPrice: priceSchema.nullable(),
  })
  .meta({ id: "PortfolioNft", description: "An NFT held by the wallet, with its collection floor." });

/** An offer a wallet received on one of its NFTs. */
export const receivedOfferSchema = z
  .object({
    collection: z.string(),
    kind: z.enum(["item", "collection", "trait"]),
    contract: addressSchema.nullable(),
    identifier: uintStringSchema.nullable(),
    price: priceSchema,
    maker: addressSchema,
    expiresAt: isoDateTimeSchema.nullable(),
  })
  .meta({ id: "ReceivedOffer", description: "An offer the wallet can accept on an NFT it holds." });

/** A listing of an NFT for sale. */
export const listingSchema = z
  .object({
    identifier: uintStringSchema.nullable(),
    price: priceSchema,
    maker: addressSchema.nullable(),
    expiresAt: isoDateTimeSchema.nullable(),
  })
  .meta({ id: "Listing", description: "A listing for sale." });

/** An offer on any NFT of a collection. */
export const collectionOfferSchema = z
  .object({
    price: priceSchema.meta({ description: "Price per item." }),
    quantity: z.number().int(),
    maker: addressSchema.nullable(),
    expiresAt: isoDateTimeSchema.nullable(),
  })
  .meta({ id: "CollectionOffer", description: "An offer on any item of a collection." });

/** One collection in the offer radar: floor, best listings, collection offers, top bid and spread, or its error. */
export const offerRadarEntrySchema = z
  .object({
    slug: slugSchema,
    rank: z
      .number()
      .int()
      .min(1)
      .nullable()
      .meta({ description: "Opportunity rank, 1 is best; null when the slug failed." }),
    floor: priceSchema.nullable(),
    bestListings: z.array(listingSchema),
    collectionOffers: z.array(collectionOfferSchema),
    topBid: priceSchema.nullable(),
    bidAboveFloor: z.boolean().meta({ description: "True when the best collection offer is at or above the floor." }),
    spreadPct: nullableNumber.meta({
      description: "(floor - top bid) / floor, in percent; negative when the bid is above floor.",
    }),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
  })
  .meta({ id: "OfferRadarCollection", description: "Floor, best listings and collection offers of one slug." });

/** One drop in an allowlist scan: the drop, when its next stage opens, and the stages the wallet may mint in. */
export const allowlistEntrySchema = z
  .object({
    slug: slugSchema,
    name: z.string(),
    chain: chainSchema,
    openseaUrl: z.string(),
    nextStageAt: isoDateTimeSchema.nullable(),
    stages: z.array(stageEligibilitySchema),
  })
  .meta({ id: "AllowlistEntry", description: "A drop checked for the wallet's eligibility, per stage." });

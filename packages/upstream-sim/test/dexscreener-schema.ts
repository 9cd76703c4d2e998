/**
 * DexScreener's pair shape as JSON Schema: the fields the service reads (priceUsd, volume.h24, liquidity.usd,
 * priceChange.h24, txns.h24.{buys,sells}, marketCap, fdv, url, baseToken, pairCreatedAt) and the rest of the
 * documented Pair (docs.dexscreener.com API reference). Unknown properties are refused, so the simulator cannot
 * invent fields.
 */
const numberMap = { type: "object", additionalProperties: { type: "number" } };
const txnWindow = {
  type: "object",
  required: ["buys", "sells"],
  additionalProperties: false,
  properties: { buys: { type: "integer", minimum: 0 }, sells: { type: "integer", minimum: 0 } },
};
const tokenRef = {
  type: "object",
  required: ["address", "name", "symbol"],
  additionalProperties: false,
  properties: { address: { type: "string" }, name: { type: "string" }, symbol: { type: "string" } },
};

export const pairSchema = {
  type: "object",
  additionalProperties: false,
  required: [
    "chainId",
    "dexId",
    "url",
    "pairAddress",
    "baseToken",
    "quoteToken",
    "priceNative",
    "txns",
    "volume",
    "priceChange",
    "pairCreatedAt",
  ],
  properties: {
    chainId: { type: "string" },
    dexId: { type: "string" },
    url: { type: "string", format: "uri" },
    pairAddress: { type: "string" },
    labels: { type: "array", items: { type: "string" } },
    baseToken: tokenRef,
    quoteToken: tokenRef,
    priceNative: { type: "string", pattern: "^\\d+(\\.\\d+)?$" },
    priceUsd: { type: "string", pattern: "^\\d+(\\.\\d+)?$" },
    txns: {
      type: "object",
      required: ["m5", "h1", "h6", "h24"],
      additionalProperties: false,
      properties: { m5: txnWindow, h1: txnWindow, h6: txnWindow, h24: txnWindow },
    },
    volume: {
      type: "object",
      required: ["h24", "h6", "h1", "m5"],
      additionalProperties: false,
      properties: { h24: { type: "number" }, h6: { type: "number" }, h1: { type: "number" }, m5: { type: "number" } },
    },
    priceChange: {
      ...numberMap,
      propertyNames: { enum: ["m5", "h1", "h6", "h24"] },
    },
    liquidity: {
      type: "object",
      required: ["base", "quote"],
      additionalProperties: false,
      properties: { usd: { type: "number" }, base: { type: "number" }, quote: { type: "number" } },
    },
    fdv: { type: "number" },
    marketCap: { type: "number" },
    pairCreatedAt: { type: "integer" },
    info: {
      type: "object",
      additionalProperties: false,
      properties: {
        imageUrl: { type: "string", format: "uri" },
        header: { type: "string", format: "uri" },
        openGraph: { type: "string", format: "uri" },
        websites: {
          type: "array",
          items: {
            type: "object",
            required: ["url"],
            properties: { label: { type: "string" }, url: { type: "string", format: "uri" } },
          },
        },
        socials: {
          type: "array",
          items: {
            type: "object",
            required: ["type", "url"],
            properties: { type: { type: "string" }, url: { type: "string", format: "uri" } },
          },
        },
      },
    },
    boosts: {
      type: "object",
      required: ["active"],
      additionalProperties: false,
      properties: { active: { type: "integer" } },
    },
  },
};

const links = {
  type: "array",
  items: {
    type: "object",
    required: ["url"],
    additionalProperties: false,
    properties: { type: { type: "string" }, label: { type: "string" }, url: { type: "string", format: "uri" } },
  },
};

export const profileSchema = {
  type: "object",
  required: ["url", "chainId", "tokenAddress", "icon"],
  additionalProperties: false,
  properties: {
    url: { type: "string", format: "uri" },
    chainId: { type: "string" },
    tokenAddress: { type: "string" },
    icon: { type: "string", format: "uri" },
    header: { type: "string", format: "uri" },
    description: { type: "string" },
    links,
  },
};

export const boostSchema = {
  ...profileSchema,
  required: ["url", "chainId", "tokenAddress", "amount", "totalAmount"],
  properties: { ...profileSchema.properties, amount: { type: "number" }, totalAmount: { type: "number" } },
};

export const tokensResponseSchema = { type: "array", items: pairSchema };
export const searchResponseSchema = {
  type: "object",
  required: ["schemaVersion", "pairs"],
  additionalProperties: false,
  properties: { schemaVersion: { type: "string" }, pairs: { type: "array", items: pairSchema } },
};
export const pairsResponseSchema = {
  type: "object",
  required: ["schemaVersion", "pairs"],
  additionalProperties: false,
  properties: {
    schemaVersion: { type: "string" },
    pairs: { anyOf: [{ type: "array", items: pairSchema }, { type: "null" }] },
  },
};

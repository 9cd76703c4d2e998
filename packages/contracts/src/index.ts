/**
 * @agent-tools/contracts — ABIs (typed `as const` for viem), bytecode and the encodings shared by the devnet,
 * the server and the SDK: clearance trait values, packed token data, B20 addresses.
 */
import {
  type Address,
  decodeAbiParameters,
  encodeAbiParameters,
  getAddress,
  type Hex,
  keccak256,
  padHex,
  toHex,
} from "viem";
import type { Clearance } from "./clearance.js";

export * from "./abis.js";
export * from "./bytecode.js";
export * from "./clearance.js";
export * from "./collection.js";

/* -------------------------------------------------------------------------- */
/*                                 Collection                                 */
/* -------------------------------------------------------------------------- */

export const COLLECTION_NAME = "Agent Tools Agents";
export const COLLECTION_SYMBOL = "AGENT";
/** Token ids are 1..MAX_SUPPLY. */
export const MAX_SUPPLY = 6666;
/** Most trait types a token can carry (one byte each in the low 128 bits of its data word). */
export const MAX_TRAIT_TYPES = 16;

/** ERC-165 interface id of ERC-7496 (dynamic traits). */
export const ERC7496_INTERFACE_ID = "0xaf332f3e" as const;
/** ERC-165 interface id of ERC-4906 (metadata update events). */
export const ERC4906_INTERFACE_ID = "0x49064906" as const;

/** Packs trait value indexes (byte t = value index of trait type t) as `AgentCollection.reveal` takes them. */
export function packTraits(valueIndexes: readonly number[]): bigint {
  if (valueIndexes.length > MAX_TRAIT_TYPES) throw new RangeError(`at most ${MAX_TRAIT_TYPES} trait types`);
  let packed = 0n;
  valueIndexes.forEach((value, t) => {
    if (!Number.isInteger(value) || value < 0 || value > 255) {
      throw new RangeError(`trait value index out of range: ${value}`);
    }
    packed |= BigInt(value) << BigInt(8 * t);
  });
  return packed;
}

/** Inverse of {@link packTraits} for `traitTypeCount` trait types. */
export function unpackTraits(packed: bigint, traitTypeCount: number): number[] {
  return Array.from({ length: traitTypeCount }, (_, t) => Number((packed >> BigInt(8 * t)) & 0xffn));
}

export interface TokenData {
  revealed: boolean;
  /** Trait value indexes (one per trait type); empty while unrevealed. */
  traits: number[];
  /** The clearance trait as `getTraitValue` reports it ("Holder" when never set). */
  clearance: Clearance;
}

const REVEALED_FLAG = 1n << 255n;

/** Decodes a word of `AgentCollection.tokenDataRange` (layout documented in AgentCollection.sol). */
export function decodeTokenData(word: bigint, traitTypeCount: number): TokenData {
  const revealed = (word & REVEALED_FLAG) !== 0n;
  const code = Number((word >> 128n) & 0xffn);
  const clearance: Clearance = code === 3 ? "Elite" : code === 2 ? "Rare" : "Holder";
  return { revealed, traits: revealed ? unpackTraits(word, traitTypeCount) : [], clearance };
}

/* -------------------------------------------------------------------------- */
/*                        ERC-8004 identity / ERC-8217                        */
/* -------------------------------------------------------------------------- */

/** ERC-8217 reserved metadata key: its value is the 20-byte address of the binding contract. */
export const AGENT_BINDING_METADATA_KEY = "agent-binding";
/** ERC-8004 reserved metadata key of the agent's payment wallet. */
export const AGENT_WALLET_METADATA_KEY = "agentWallet";

/** ERC-8217 `TokenStandard` enum values. */
export const TOKEN_STANDARDS = ["ERC721", "ERC1155", "ERC6909"] as const;
export type TokenStandard = (typeof TOKEN_STANDARDS)[number];

export function tokenStandardName(value: number): TokenStandard | undefined {
  return TOKEN_STANDARDS[value];
}

/** `agentRegistry` string of an ERC-8004 registration: `eip155:<chainId>:<registry>`. */
export function agentRegistryId(chainId: number | bigint, identityRegistry: Address): string {
  return `eip155:${chainId}:${getAddress(identityRegistry)}`;
}

/** Decodes an `agent-binding` metadata value: exactly 20 bytes, else `undefined` (binding unverified). */
export function decodeAgentBindingMetadata(value: Hex): Address | undefined {
  return /^0x[0-9a-fA-F]{40}$/.test(value) ? getAddress(value) : undefined;
}

/* -------------------------------------------------------------------------- */
/*                                Payment token                               */
/* -------------------------------------------------------------------------- */

/** EIP-712 domain name and version of the local EIP-3009 token (what x402's `extra {name, version}` carries). */
export const USD_TOKEN_NAME = "USD Coin";
export const USD_TOKEN_SYMBOL = "USDC";
export const USD_TOKEN_VERSION = "2";
export const USD_TOKEN_DECIMALS = 6;

/** Canonical Multicall3 address (the devnet places `Multicall3`'s runtime code there). */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

/* -------------------------------------------------------------------------- */
/*                        x402 batch-settlement channels                      */
/* -------------------------------------------------------------------------- */

/** Canonical address of x402's batch-settlement contract (the devnet places `BatchSettlement`'s code there). */
export const BATCH_SETTLEMENT_ADDRESS: Address = "0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003";
/** Canonical address of the scheme's EIP-3009 deposit collector (`Erc3009DepositCollector` on the devnet). */
export const ERC3009_DEPOSIT_COLLECTOR_ADDRESS: Address = "0x4020806089470a89826cB9fB1f4059150b550004";
/** EIP-712 domain name and version of the batch-settlement contract (chain id and address complete the domain). */
export const BATCH_SETTLEMENT_DOMAIN_NAME = "x402 Batch Settlement";
export const BATCH_SETTLEMENT_DOMAIN_VERSION = "1";

/* -------------------------------------------------------------------------- */
/*                          x402 upto (Permit2) payments                      */
/* -------------------------------------------------------------------------- */

/** Canonical address of Permit2 (the devnet places `Permit2`'s code there); payers approve it once per token. */
export const PERMIT2_ADDRESS: Address = "0x000000000022D473030F116dDEE9F6B43aC78BA3";
/** Canonical address of x402's upto Permit2 proxy, the spender of `upto` permits (`X402UptoPermit2Proxy`). */
export const UPTO_PERMIT2_PROXY_ADDRESS: Address = "0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002";

/* -------------------------------------------------------------------------- */
/*                                     B20                                    */
/* -------------------------------------------------------------------------- */

/** Address of Base's B20 factory precompile (on the devnet: `B20Factory`'s runtime code). */
export const B20_FACTORY_ADDRESS: Address = "0xB20f000000000000000000000000000000000000";
/** The 10-byte prefix every B20 token address starts with. */
export const B20_TOKEN_PREFIX = "0xb2000000000000000000" as const;

export const B20_VARIANTS = { ASSET: 0, STABLECOIN: 1 } as const;
export type B20VariantName = keyof typeof B20_VARIANTS;
export type B20Variant = (typeof B20_VARIANTS)[B20VariantName];

function checkVariant(variant: number): void {
  if (!Number.isInteger(variant) || variant < 0 || variant > 255) throw new RangeError(`bad B20 variant: ${variant}`);
}

/**
 * A B20 token address with a chosen 9-byte tail: `0xB200…00` (10 bytes) ++ variant byte ++ `index` as 9
 * big-endian bytes. The devnet uses it to place tokens at predictable addresses.
 */
export function b20TokenAddress(variant: number, index: number | bigint): Address {
  checkVariant(variant);
  const tail = BigInt(index);
  if (tail < 0n || tail >= 1n << 72n) throw new RangeError(`B20 index out of range: ${index}`);
  const hex = `${B20_TOKEN_PREFIX}${variant.toString(16).padStart(2, "0")}${tail.toString(16).padStart(18, "0")}`;
  return getAddress(hex);
}

/** The address the factory derives for `(variant, sender, salt)` (same as `B20Factory.getB20Address`). */
export function computeB20Address(variant: number, sender: Address, salt: Hex): Address {
  checkVariant(variant);
  const digest = keccak256(`0x${padHex(sender, { size: 32 }).slice(2)}${padHex(salt, { size: 32 }).slice(2)}`);
  return getAddress(`${B20_TOKEN_PREFIX}${variant.toString(16).padStart(2, "0")}${digest.slice(2, 20)}`);
}

/** Whether `address` has the B20 token form (prefix check, as the factory's `isB20`). */
export function isB20Address(address: string): boolean {
  return /^0x[0-9a-fA-F]{40}$/.test(address) && address.slice(0, 22).toLowerCase() === B20_TOKEN_PREFIX;
}

/** The variant byte (byte 10) of a B20 token address, or `undefined` for other addresses. */
export function b20VariantOf(address: string): number | undefined {
  return isB20Address(address) ? Number.parseInt(address.slice(22, 24), 16) : undefined;
}

/** `B20Created` topic0: `keccak256("B20Created(address,uint8,string,string,uint8,bytes)")`. */
export const B20_CREATED_TOPIC: Hex = "0xfd9bf2730513a1709722ff379a0844dfd8f997d600693c2bcc659e188bbdba0d";

/** `B20StablecoinEventParams` (base/base-std `IB20Factory`): `B20Created`'s `variantEventParams` of a stablecoin. */
const stablecoinEventParams = [
  {
    type: "tuple",
    components: [
      { name: "version", type: "uint8" },
      { name: "currency", type: "string" },
    ],
  },
] as const;

/** `variantEventParams` of a stablecoin: `abi.encode(B20StablecoinEventParams{version: 1, currency})`. */
export function encodeStablecoinEventParams(currency: string, version = 1): Hex {
  return encodeAbiParameters(stablecoinEventParams, [{ version, currency }]);
}

/**
 * Currency of a stablecoin's `variantEventParams` (`abi.encode(B20StablecoinEventParams)`, version 1); `undefined`
 * when they do not decode or are of another version.
 */
export function decodeStablecoinEventParams(variantEventParams: Hex): string | undefined {
  try {
    const [params] = decodeAbiParameters(stablecoinEventParams, variantEventParams);
    return params.version === 1 ? params.currency : undefined;
  } catch {
    return undefined;
  }
}

/** The fields every variant's `createB20` params begin with (B20StablecoinCreateParams, B20AssetCreateParams). */
const CREATE_PARAMS_HEAD = [
  { name: "version", type: "uint8" },
  { name: "name", type: "string" },
  { name: "symbol", type: "string" },
  { name: "initialAdmin", type: "address" },
] as const;

/** `params` of `createB20` for a stablecoin: `abi.encode(B20StablecoinCreateParams)`, version 1. */
export function encodeStablecoinCreateParams(p: {
  name: string;
  symbol: string;
  initialAdmin: Address;
  currency: string;
}): Hex {
  return encodeAbiParameters(
    [{ type: "tuple", components: [...CREATE_PARAMS_HEAD, { name: "currency", type: "string" }] }],
    [{ version: 1, ...p }],
  );
}

/** `params` of `createB20` for an asset: `abi.encode(B20AssetCreateParams)`, version 1. */
export function encodeAssetCreateParams(p: {
  name: string;
  symbol: string;
  initialAdmin: Address;
  decimals: number;
}): Hex {
  return encodeAbiParameters(
    [{ type: "tuple", components: [...CREATE_PARAMS_HEAD, { name: "decimals", type: "uint8" }] }],
    [{ version: 1, ...p }],
  );
}

/** ERC-7496 trait key of a trait name: `keccak256(name)`. */
export function traitKey(name: string): Hex {
  return keccak256(toHex(name));
}

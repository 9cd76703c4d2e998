/**
 * EIP-712 digests, the same as viem's `hashTypedData` gives, with each domain's separator computed once: a paid call
 * hashes two typed messages (its payment, to recover the payer; its receipt, to sign it) under a handful of domains
 * that never change, and the domain's half was about half the hashing's time (docs/architecture.md, "Settlement").
 */
import {
  concat,
  getTypesForEIP712Domain,
  type Hex,
  hashDomain,
  hashStruct,
  keccak256,
  type TypedDataDefinition,
  validateTypedData,
} from "viem";

/** Domains kept; past this many (never, with the service's own), the cache starts over. */
const DOMAINS_KEPT = 64;
const separators = new Map<string, Hex>();

const withBigInts = (_key: string, value: unknown) => (typeof value === "bigint" ? `${value}n` : value);

export function hashTypedDataOfKnownDomain(parameters: TypedDataDefinition): Hex {
  const { domain = {}, message, primaryType } = parameters as TypedDataDefinition & { message: unknown };
  const types = { EIP712Domain: getTypesForEIP712Domain({ domain }), ...parameters.types };
  validateTypedData({ domain, message, primaryType, types } as never);
  const key = JSON.stringify([types.EIP712Domain, domain], withBigInts);
  let separator = separators.get(key);
  if (separator === undefined) {
    separator = hashDomain({ domain, types } as never);
    if (separators.size >= DOMAINS_KEPT) separators.clear();
    separators.set(key, separator);
  }
  const parts: Hex[] = ["0x1901", separator];
  if (primaryType !== "EIP712Domain") {
    parts.push(hashStruct({ data: message as Record<string, unknown>, primaryType, types } as never));
  }
  return keccak256(concat(parts));
}

import fc from "fast-check";
import { type Address, getAddress, type Hex, hashTypedData, type TypedDataDefinition, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { transferWithAuthorizationTypes } from "../src/schemes/exact/authorization-signer.js";
import { hashTypedDataOfKnownDomain } from "../src/signatures/typed-data-hash.js";

/**
 * The EIP-712 digests of src/signatures/typed-data-hash.ts (a domain's separator kept once computed) against viem's
 * `hashTypedData`, which computes everything each time: equal for any domain and message, repeated or not.
 */
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => getAddress(toHex(b)) as Address);
const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => toHex(b) as Hex);
const uint256 = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });

/** Domains with any subset of EIP-712's fields, chain ids as numbers or bigints. */
const domain = fc.record(
  {
    name: fc.string({ maxLength: 20 }),
    version: fc.string({ maxLength: 5 }),
    chainId: fc.oneof(fc.integer({ min: 1, max: 2 ** 31 }), fc.bigInt({ min: 1n, max: 2n ** 64n })),
    verifyingContract: address,
    salt: bytes32,
  },
  { requiredKeys: [] },
);

const authorization = fc.record({
  from: address,
  to: address,
  value: uint256,
  validAfter: uint256,
  validBefore: uint256,
  nonce: bytes32,
});

/** A message of another shape, with a nested struct and an array (an x402 receipt is of this kind). */
const receiptTypes = {
  Receipt: [
    { name: "payer", type: "address" },
    { name: "resource", type: "string" },
    { name: "issuedAt", type: "uint64" },
    { name: "part", type: "Part" },
    { name: "tags", type: "string[]" },
  ],
  Part: [
    { name: "transaction", type: "bytes32" },
    { name: "ok", type: "bool" },
  ],
} as const;
const receipt = fc.record({
  payer: address,
  resource: fc.string({ maxLength: 40 }),
  issuedAt: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  part: fc.record({ transaction: bytes32, ok: fc.boolean() }),
  tags: fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
});

describe("EIP-712 digests with each domain's separator kept", () => {
  it("equal viem's for any domain and payment authorization, the first time and again", () => {
    fc.assert(
      fc.property(domain, authorization, authorization, (domain, first, second) => {
        for (const message of [first, second, first]) {
          const parameters = {
            domain,
            types: transferWithAuthorizationTypes,
            primaryType: "TransferWithAuthorization",
            message,
          } as TypedDataDefinition;
          expect(hashTypedDataOfKnownDomain(parameters)).toBe(hashTypedData(parameters));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("equal viem's for messages with nested structs and arrays, under domains that differ in one field", () => {
    fc.assert(
      fc.property(domain, receipt, fc.string({ maxLength: 20 }), (domain, message, otherName) => {
        for (const d of [domain, { ...domain, name: otherName }, domain]) {
          const parameters = { domain: d, types: receiptTypes, primaryType: "Receipt", message } as TypedDataDefinition;
          expect(hashTypedDataOfKnownDomain(parameters)).toBe(hashTypedData(parameters));
        }
      }),
      { numRuns: 200 },
    );
  });

  it("refuses a message that does not fit its types, as viem does", () => {
    const parameters = {
      domain: { name: "USD Coin", version: "2", chainId: 8453 },
      types: transferWithAuthorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: { from: "0x1234", to: "0x1234", value: 1n, validAfter: 0n, validBefore: 1n, nonce: "0x00" },
    } as unknown as TypedDataDefinition;
    expect(() => hashTypedData(parameters)).toThrow();
    expect(() => hashTypedDataOfKnownDomain(parameters)).toThrow();
  });
});

import {
  decodeFunctionData,
  decodeFunctionResult,
  encodeFunctionData,
  encodeFunctionResult,
  getAddress,
  keccak256,
  stringToHex,
  toHex,
} from "viem";
import { describe, expect, it } from "vitest";
import {
  AGENT_BINDING_METADATA_KEY,
  agentBindingsAbi,
  agentCollectionAbi,
  agentRegistryId,
  B20_FACTORY_ADDRESS,
  B20_VARIANTS,
  b20TokenAddress,
  b20VariantOf,
  CLEARANCE_TRAIT_KEY,
  CLEARANCES,
  clearanceCode,
  computeB20Address,
  decodeAgentBindingMetadata,
  decodeClearance,
  decodeTokenData,
  encodeClearance,
  isB20Address,
  MULTICALL3_ADDRESS,
  meetsClearance,
  packTraits,
  tokenStandardName,
  traitKey,
  tryDecodeClearance,
  unpackTraits,
} from "../src/index.js";

describe("clearance trait", () => {
  it("uses keccak256('clearance') as its ERC-7496 key", () => {
    expect(CLEARANCE_TRAIT_KEY).toBe(keccak256(toHex("clearance")));
    expect(traitKey("clearance")).toBe(CLEARANCE_TRAIT_KEY);
  });

  it.each(CLEARANCES)("round-trips %s through its bytes32 encoding", (clearance) => {
    const encoded = encodeClearance(clearance);
    expect(encoded).toMatch(/^0x[0-9a-f]{64}$/);
    expect(encoded.startsWith(stringToHex(clearance))).toBe(true);
    expect(encoded.slice(2 + clearance.length * 2)).toMatch(/^0+$/);
    expect(decodeClearance(encoded)).toBe(clearance);
    expect(decodeClearance(encoded.toUpperCase().replace("0X", "0x") as `0x${string}`)).toBe(clearance);
  });

  it("matches the encodings the contract's trait metadata lists", () => {
    expect(encodeClearance("Holder")).toBe("0x486f6c6465720000000000000000000000000000000000000000000000000000");
    expect(encodeClearance("Rare")).toBe("0x5261726500000000000000000000000000000000000000000000000000000000");
    expect(encodeClearance("Elite")).toBe("0x456c697465000000000000000000000000000000000000000000000000000000");
  });

  it("rejects anything else", () => {
    expect(tryDecodeClearance(`0x${"00".repeat(32)}`)).toBeUndefined();
    expect(tryDecodeClearance(stringToHex("Epic", { size: 32 }))).toBeUndefined();
    expect(tryDecodeClearance(stringToHex("Rare"))).toBeUndefined();
    expect(tryDecodeClearance(`0x52617265${"00".repeat(27)}01`)).toBeUndefined();
    expect(() => decodeClearance("0x1234")).toThrow(/not a clearance/);
  });

  it("orders Holder < Rare < Elite", () => {
    expect(meetsClearance("Elite", "Rare")).toBe(true);
    expect(meetsClearance("Rare", "Rare")).toBe(true);
    expect(meetsClearance("Holder", "Rare")).toBe(false);
    expect(CLEARANCES.map(clearanceCode)).toEqual([1, 2, 3]);
  });
});

describe("packed token data", () => {
  it("packs one byte per trait type and unpacks it", () => {
    const traits = [3, 0, 255, 7, 1, 12];
    const packed = packTraits(traits);
    expect(packed).toBe(0x0c0107ff0003n);
    expect(unpackTraits(packed, 6)).toEqual(traits);
    expect(() => packTraits([256])).toThrow(RangeError);
    expect(() => packTraits(Array(17).fill(0))).toThrow(RangeError);
  });

  it("decodes revealed flag, traits and clearance", () => {
    const word = (1n << 255n) | (2n << 128n) | packTraits([1, 2, 3]);
    expect(decodeTokenData(word, 3)).toEqual({ revealed: true, traits: [1, 2, 3], clearance: "Rare" });
    expect(decodeTokenData(3n << 128n, 3)).toEqual({ revealed: false, traits: [], clearance: "Elite" });
    expect(decodeTokenData(0n, 3)).toEqual({ revealed: false, traits: [], clearance: "Holder" });
  });
});

describe("B20 addresses", () => {
  it("keeps the factory at the precompile address", () => {
    expect(B20_FACTORY_ADDRESS).toBe(getAddress("0xb20f000000000000000000000000000000000000"));
    expect(isB20Address(B20_FACTORY_ADDRESS)).toBe(false);
  });

  it.each([
    [B20_VARIANTS.ASSET, 1n],
    [B20_VARIANTS.STABLECOIN, 42n],
    [B20_VARIANTS.STABLECOIN, (1n << 72n) - 1n],
  ])("builds variant %i, index %s with byte 10 = variant", (variant, index) => {
    const address = b20TokenAddress(variant, index);
    expect(address).toBe(getAddress(address));
    expect(address.toLowerCase().startsWith("0xb200")).toBe(true);
    expect(address.slice(2, 22).toLowerCase()).toBe("b2000000000000000000");
    expect(Number.parseInt(address.slice(22, 24), 16)).toBe(variant);
    expect(BigInt(`0x${address.slice(24)}`)).toBe(index);
    expect(isB20Address(address)).toBe(true);
    expect(b20VariantOf(address)).toBe(variant);
  });

  it("rejects out-of-range indexes and variants", () => {
    expect(() => b20TokenAddress(0, 1n << 72n)).toThrow(RangeError);
    expect(() => b20TokenAddress(0, -1)).toThrow(RangeError);
    expect(() => b20TokenAddress(256, 0)).toThrow(RangeError);
  });

  it("derives createB20 addresses from (variant, sender, salt)", () => {
    const sender = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
    const salt = keccak256(toHex("salt"));
    const address = computeB20Address(1, sender, salt);
    expect(b20VariantOf(address)).toBe(1);
    const digest = keccak256(`0x${sender.slice(2).toLowerCase().padStart(64, "0")}${salt.slice(2)}`);
    expect(address.slice(24).toLowerCase()).toBe(digest.slice(2, 20));
  });

  it("does not take other addresses for B20 tokens", () => {
    expect(b20VariantOf(MULTICALL3_ADDRESS)).toBeUndefined();
    expect(isB20Address("0xb2000000000000000000")).toBe(false);
  });
});

describe("identity helpers", () => {
  it("decodes agent-binding metadata only when it is exactly 20 bytes", () => {
    expect(AGENT_BINDING_METADATA_KEY).toBe("agent-binding");
    const address = "0x9c4e8f2a1b7d6e3c0a5f8d2b9e1c4a7f3d6e8b0c";
    expect(decodeAgentBindingMetadata(address)).toBe(getAddress(address));
    expect(decodeAgentBindingMetadata("0x")).toBeUndefined();
    expect(decodeAgentBindingMetadata(`${address}00`)).toBeUndefined();
  });

  it("formats agentRegistry ids and token standards", () => {
    expect(agentRegistryId(31337, "0x5fbdb2315678afecb367f032d93f642f64180aa3")).toBe(
      "eip155:31337:0x5FbDB2315678afecb367f032d93F642f64180aa3",
    );
    expect(tokenStandardName(0)).toBe("ERC721");
    expect(tokenStandardName(2)).toBe("ERC6909");
    expect(tokenStandardName(3)).toBeUndefined();
  });
});

describe("typed ABIs", () => {
  it("let viem infer function names and argument types", () => {
    const data = encodeFunctionData({
      abi: agentCollectionAbi,
      functionName: "reveal",
      args: [[1n], [packTraits([1, 2])], [clearanceCode("Rare")]],
    });
    const decoded = decodeFunctionData({ abi: agentCollectionAbi, data });
    expect(decoded.functionName).toBe("reveal");
    expect(decoded.args).toEqual([[1n], [0x0201n], [2]]);

    const binding = encodeFunctionResult({
      abi: agentBindingsAbi,
      functionName: "bindingOf",
      result: { standard: 0, tokenContract: MULTICALL3_ADDRESS, tokenId: 7n },
    });
    const result = decodeFunctionResult({ abi: agentBindingsAbi, functionName: "bindingOf", data: binding });
    const tokenId: bigint = result.tokenId;
    expect(tokenId).toBe(7n);

    // @ts-expect-error: not a function of the collection
    expect(() => encodeFunctionData({ abi: agentCollectionAbi, functionName: "noSuchFunction", args: [] })).toThrow();
  });
});

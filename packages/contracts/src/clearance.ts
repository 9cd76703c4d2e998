/** The clearance trait (ERC-7496): its key, its three values and their on-chain encoding. */
import { type Hex, hexToString, stringToHex } from "viem";

/** ERC-7496 trait key of the clearance trait: `keccak256("clearance")`. */
export const CLEARANCE_TRAIT_KEY: Hex = "0x694cba7b970e6c32b37e56c790692b70616087d9c170389427c070869bcafdbc";

/** Clearance levels, ascending. */
export const CLEARANCES = ["Holder", "Rare", "Elite"] as const;
export type Clearance = (typeof CLEARANCES)[number];

/**
 * On-chain encoding of a clearance value: the UTF-8 name right-padded with zero bytes to 32 bytes
 * (what a Solidity `bytes32` string literal gives), e.g. "Rare" -> 0x52617265000…000.
 */
export function encodeClearance(clearance: Clearance): Hex {
  return stringToHex(clearance, { size: 32 });
}

/** Decodes a clearance trait value; `undefined` for anything that is not one of the three encodings. */
export function tryDecodeClearance(value: Hex): Clearance | undefined {
  if (!/^0x[0-9a-fA-F]{64}$/.test(value)) return undefined;
  const text = hexToString(value, { size: 32 });
  const clearance = CLEARANCES.find((c) => c === text);
  return clearance !== undefined && encodeClearance(clearance) === value.toLowerCase() ? clearance : undefined;
}

/** Decodes a clearance trait value; throws on anything else. */
export function decodeClearance(value: Hex): Clearance {
  const clearance = tryDecodeClearance(value);
  if (clearance === undefined) throw new Error(`not a clearance trait value: ${value}`);
  return clearance;
}

/** 0 Holder, 1 Rare, 2 Elite. */
export function clearanceRank(clearance: Clearance): number {
  return CLEARANCES.indexOf(clearance);
}

/** Whether `have` meets the minimum `need`. */
export function meetsClearance(have: Clearance, need: Clearance): boolean {
  return clearanceRank(have) >= clearanceRank(need);
}

/** Clearance codes as `AgentCollection.reveal` takes them: 0 keeps the current value, 1 Holder, 2 Rare, 3 Elite. */
export function clearanceCode(clearance: Clearance): 1 | 2 | 3 {
  return (clearanceRank(clearance) + 1) as 1 | 2 | 3;
}

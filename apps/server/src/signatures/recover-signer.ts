/**
 * secp256k1 public-key recovery, the one costly step of checking a signature: libsecp256k1's native binding (the
 * `secp256k1` package, prebuilt for common platforms) when it loads, about 30 times faster than viem's own
 * JavaScript recovery, which it falls back to elsewhere. Signatures with a high `s` are refused, as EIP-3009
 * tokens (USDC, OpenZeppelin's ECDSA) refuse them.
 */
import { createRequire } from "node:module";
import {
  type Address,
  getAddress,
  type Hex,
  hashMessage,
  hexToBytes,
  keccak256,
  type TypedDataDefinition,
  toHex,
  recoverAddress as viemRecoverAddress,
} from "viem";
import { hashTypedDataOfKnownDomain } from "./typed-data-hash.js";

/** The part of the `secp256k1` package's API used here (its native binding, wrapped by the package). */
export interface NativeSecp256k1 {
  ecdsaRecover(signature: Uint8Array, recid: number, message: Uint8Array, compressed: boolean): Uint8Array;
  ecdsaSign(message: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
}

/** Half the curve order: an `s` above it is the malleable twin of a valid signature. */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

function loadNative(): NativeSecp256k1 | undefined {
  try {
    // The binding itself, not the package's entry point, which falls back to a slower JavaScript curve.
    return createRequire(import.meta.url)("secp256k1/bindings") as NativeSecp256k1;
  } catch {
    return undefined;
  }
}

/** libsecp256k1, when its binding loads here (./local-account.ts signs with it too). */
export const native = loadNative();

/** Whether recovery runs natively here. */
export const nativeRecovery = native !== undefined;

/** The address that signed `hash` (65-byte `r || s || v` signature), or undefined for a signature that cannot be one. */
export async function recoverHashSigner(hash: Hex, signature: Hex): Promise<Address | undefined> {
  const bytes = hexToBytes(signature);
  if (bytes.length !== 65) return undefined;
  const s = BigInt(toHex(bytes.subarray(32, 64)));
  if (s === 0n || s > HALF_N) return undefined;
  const v = bytes[64]!;
  const recid = v >= 27 ? v - 27 : v;
  if (recid !== 0 && recid !== 1) return undefined;
  if (!native) return viemRecoverAddress({ hash, signature });
  try {
    const publicKey = native.ecdsaRecover(bytes.subarray(0, 64), recid, hexToBytes(hash), false);
    return getAddress(`0x${keccak256(publicKey.subarray(1)).slice(-40)}`);
  } catch {
    return undefined;
  }
}

/** The signer of EIP-712 typed data. */
export async function recoverTypedDataSigner(parameters: TypedDataDefinition & { signature: Hex }): Promise<Address> {
  const signer = await recoverHashSigner(hashTypedDataOfKnownDomain(parameters), parameters.signature);
  if (!signer) throw new Error("the signature is not a recoverable secp256k1 signature");
  return signer;
}

/** The signer of an EIP-191 personal message (a sign-in message). */
export function recoverMessageSigner(message: string, signature: Hex): Promise<Address | undefined> {
  return recoverHashSigner(hashMessage(message), signature);
}

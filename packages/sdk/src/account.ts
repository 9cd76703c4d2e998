import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { InvalidPrivateKeyError } from "./errors.js";

/** The order of secp256k1's group: a private key is a number from 1 to this, less one. */
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** What is wrong with `key` as a private key, in words that never quote it; undefined when it is one. */
function keyProblem(key: unknown): string | undefined {
  if (typeof key !== "string") return `is ${key === null ? "null" : typeof key}, not text`;
  if (key.length === 0) return "is empty";
  if (key.trim() !== key) return "has spaces or a line break around it";
  if (!key.startsWith("0x")) {
    return /^[0-9a-fA-F]{64}$/.test(key) ? "lacks its 0x prefix" : "does not start with 0x";
  }
  const digits = key.slice(2);
  if (!/^[0-9a-fA-F]*$/.test(digits)) return "holds characters that are not hex digits (0-9, a-f) after 0x";
  if (digits.length !== 64) {
    return `is ${digits.length} hex digit${digits.length === 1 ? "" : "s"} long after 0x, not 64`;
  }
  return undefined;
}

/**
 * The local account of a private key (`0x` and 64 hex digits), to sign in and pay with: viem's `privateKeyToAccount`,
 * with what is wrong said in plain words. Throws `InvalidPrivateKeyError` for anything that is not a private key; its
 * message never holds the key.
 *
 * @param privateKey The key, `0x` followed by 64 hex digits.
 * @param options viem's options of a local account (`nonceManager`).
 *
 * @example
 * import { accountFromPrivateKey, createAgentToolsClient } from "@agent-tools/sdk";
 * const account = accountFromPrivateKey(key);
 * const payer = createAgentToolsClient({ baseUrl: "http://127.0.0.1:8402", account });
 */
export function accountFromPrivateKey(
  privateKey: `0x${string}` | string,
  options?: Parameters<typeof privateKeyToAccount>[1],
): PrivateKeyAccount {
  const problem = keyProblem(privateKey);
  if (problem) {
    throw new InvalidPrivateKeyError(
      `The private key ${problem}: a private key is 0x followed by 64 hex digits (32 bytes).`,
    );
  }
  const value = BigInt(privateKey);
  if (value === 0n || value >= CURVE_ORDER) {
    throw new InvalidPrivateKeyError(
      "The private key is outside the range of secp256k1 keys: it must be a number from 1 to the curve's order less one.",
    );
  }
  try {
    return privateKeyToAccount(privateKey as `0x${string}`, options);
  } catch {
    // viem's own text may quote the key's value: none of it is passed on.
    throw new InvalidPrivateKeyError("The private key is not a valid secp256k1 private key.");
  }
}

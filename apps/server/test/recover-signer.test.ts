import { type Hex, recoverMessageAddress, recoverTypedDataAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { transferWithAuthorizationTypes } from "../src/schemes/exact/authorization-signer.js";
import { nativeRecovery, recoverMessageSigner, recoverTypedDataSigner } from "../src/signatures/recover-signer.js";

const typedData = {
  domain: {
    name: "USD Coin",
    version: "2",
    chainId: 31338,
    verifyingContract: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  },
  types: transferWithAuthorizationTypes,
  primaryType: "TransferWithAuthorization",
} as const;

/** The same signature with `s` replaced by n - s (and v flipped): valid to ecrecover, refused by EIP-3009 tokens. */
function malleable(signature: Hex): Hex {
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130, 132), 16);
  return `${signature.slice(0, 66)}${(n - s).toString(16).padStart(64, "0")}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
}

describe("signature recovery", () => {
  it("runs natively on this platform", () => {
    expect(nativeRecovery).toBe(true);
  });

  it("recovers the signer of EIP-3009 typed data and of sign-in messages, as viem does", async () => {
    for (let i = 0; i < 20; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const message = {
        from: account.address,
        to: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        value: BigInt(i + 1) * 10_000n,
        validAfter: 0n,
        validBefore: 1_900_000_000n,
        nonce: `0x${i.toString(16).padStart(64, "0")}`,
      } as const;
      const signature = await account.signTypedData({ ...typedData, message });
      expect(await recoverTypedDataSigner({ ...typedData, message, signature })).toBe(account.address);
      expect(await recoverTypedDataAddress({ ...typedData, message, signature })).toBe(account.address);

      const text = `127.0.0.1:8402 wants you to sign in with your Ethereum account:\n${account.address}\n\nNonce: ${i}`;
      const signed = await account.signMessage({ message: text });
      expect(await recoverMessageSigner(text, signed)).toBe(
        await recoverMessageAddress({ message: text, signature: signed }),
      );
      // Another message: another signer.
      expect(await recoverMessageSigner(`${text}!`, signed)).not.toBe(account.address);
    }
  });

  it("refuses a high-s twin, a short signature and a bad recovery byte", async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const signed = await account.signMessage({ message: "hello" });
    expect(await recoverMessageSigner("hello", malleable(signed))).toBeUndefined();
    expect(await recoverMessageSigner("hello", signed.slice(0, 130) as Hex)).toBeUndefined();
    expect(await recoverMessageSigner("hello", `${signed.slice(0, 130)}1d` as Hex)).toBeUndefined();
  });
});

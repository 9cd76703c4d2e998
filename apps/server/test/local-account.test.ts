import { keccak256, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { transferWithAuthorizationTypes } from "../src/schemes/exact/authorization-signer.js";
import { localAccount } from "../src/signatures/local-account.js";

/** The native signer against viem's own account: the same key must give the same signature, byte for byte. */
describe("the facilitator's and the receipt signer's account", () => {
  it("signs hashes, messages, typed data and transactions exactly as viem's account does", async () => {
    for (let i = 0; i < 10; i++) {
      const key = generatePrivateKey();
      const ours = localAccount(key);
      const viems = privateKeyToAccount(key);
      expect(ours.address).toBe(viems.address);
      expect(ours.publicKey).toBe(viems.publicKey);

      const hash = keccak256(toHex(`hash ${i}`));
      expect(await ours.sign!({ hash })).toBe(await viems.sign({ hash }));
      const message = `a sign-in message ${i}`;
      expect(await ours.signMessage({ message })).toBe(await viems.signMessage({ message }));

      const typedData = {
        domain: { name: "USD Coin", version: "2", chainId: 8453, verifyingContract: viems.address },
        types: transferWithAuthorizationTypes,
        primaryType: "TransferWithAuthorization",
        message: {
          from: viems.address,
          to: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
          value: BigInt(i + 1),
          validAfter: 0n,
          validBefore: 1_900_000_000n,
          nonce: keccak256(toHex(i)),
        },
      } as const;
      expect(await ours.signTypedData(typedData)).toBe(await viems.signTypedData(typedData));

      const to = "0xcA11bde05977b3631167028862bE2a173976CA11";
      for (const transaction of [
        {
          type: "eip1559",
          chainId: 8453,
          nonce: i,
          to,
          data: toHex(`call ${i}`),
          gas: 150_000n,
          maxFeePerGas: 3n * 10n ** 9n,
          maxPriorityFeePerGas: 10n ** 6n,
        },
        { type: "legacy", chainId: 31338, nonce: i, to, data: toHex(`call ${i}`), gas: 150_000n, gasPrice: 10n ** 9n },
      ] as const) {
        expect(await ours.signTransaction(transaction)).toBe(await viems.signTransaction(transaction));
      }
    }
  });
});

import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { createSIWxPayload, encodeSIWxHeader } from "@x402/extensions/sign-in-with-x";
import type { PrivateKeyAccount, PublicClient } from "viem";

/** A fresh SIGN-IN-WITH-X header: `account` signs in to `url`'s origin on `chainId` (CAIP-2). */
export async function signInHeader(
  account: PrivateKeyAccount,
  url: string,
  chainId: string,
  overrides: { domain?: string; uri?: string; issuedAt?: string; nonce?: string } = {},
): Promise<string> {
  const payload = await createSIWxPayload(
    {
      domain: overrides.domain ?? new URL(url).host,
      uri: overrides.uri ?? url,
      version: "1",
      nonce: overrides.nonce ?? crypto.randomUUID().replaceAll("-", ""),
      issuedAt: overrides.issuedAt ?? new Date().toISOString(),
      chainId,
      type: "eip191",
      resources: [url],
    },
    account,
    overrides.uri ?? url,
  );
  return encodeSIWxHeader(payload);
}

/** A PAYMENT-SIGNATURE header paying the first requirement of a 402 answer in `asset` on `network`. */
export async function paymentHeader(
  account: PrivateKeyAccount,
  client: PublicClient,
  paymentRequired: PaymentRequired,
  allowed: { network: string; asset: string },
): Promise<string> {
  const x402 = new x402Client();
  registerExactEvmScheme(x402, { signer: toClientEvmSigner(account, client as never) });
  x402.setSpendControls({
    allowedAssets: [{ network: allowed.network as `${string}:${string}`, asset: allowed.asset }],
  });
  return encodePaymentSignatureHeader(await x402.createPaymentPayload(paymentRequired));
}

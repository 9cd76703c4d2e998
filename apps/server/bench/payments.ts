/**
 * The paying side: reads a 402 challenge and pre-signs distinct x402 payments for it (each its own EIP-3009
 * nonce), and fresh SIGN-IN-WITH-X headers, with the devnet accounts' keys, the way an x402 client does.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { createSIWxPayload, encodeSIWxHeader } from "@x402/extensions/sign-in-with-x";
import { privateKeyToAccount } from "viem/accounts";
/** What the paying side needs to know of the chains and the service it pays. */
export interface PayingSide {
  /** The devnet accounts' well-known keys (0 = operator, 1..9 = holders). */
  privateKeys: `0x${string}`[];
  /** CAIP-2 payment network and asset. */
  network: `${string}:${string}`;
  asset: string;
  l1ChainId: number;
}

export const INTEL_BODY = JSON.stringify({ tokenId: 7 });
/** Token 1 belongs to devnet account 1 (the signed-in holder of the bench). */
export const HOLDER_INDEX = 1;
export const HOLDER_BODY = JSON.stringify({ tokenId: 1 });

/** The PaymentRequired of a 402 answer (from its `PAYMENT-REQUIRED` header). */
export async function challenge(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<PaymentRequired> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  await res.arrayBuffer();
  const header = res.headers.get("payment-required");
  if (res.status !== 402 || !header) throw new Error(`expected a 402 challenge from ${url}, got ${res.status}`);
  return decodePaymentRequiredHeader(header);
}

export function createSigners(host: PayingSide) {
  const clients = new Map<number, x402Client>();
  const client = (index: number) => {
    let c = clients.get(index);
    if (!c) {
      c = new x402Client();
      registerExactEvmScheme(c, { signer: toClientEvmSigner(privateKeyToAccount(host.privateKeys[index]!)) });
      c.setSpendControls({ allowedAssets: [{ network: host.network, asset: host.asset }] });
      clients.set(index, c);
    }
    return c;
  };

  return {
    /** `count` PAYMENT-SIGNATURE headers for the challenge's first requirement, from the payers in turn. */
    async payments(paymentRequired: PaymentRequired, count: number, payers: number[]): Promise<string[]> {
      const headers: string[] = [];
      for (let i = 0; i < count; i++) {
        const payload = await client(payers[i % payers.length]!).createPaymentPayload(paymentRequired);
        headers.push(encodePaymentSignatureHeader(payload));
      }
      return headers;
    },

    /** `count` SIGN-IN-WITH-X headers of devnet account `index` for `origin` + `path`, each with its own nonce. */
    async signIns(index: number, origin: string, path: string, count: number): Promise<string[]> {
      const account = privateKeyToAccount(host.privateKeys[index]!);
      const url = `${origin}${path}`;
      const headers: string[] = [];
      for (let i = 0; i < count; i++) {
        const payload = await createSIWxPayload(
          {
            domain: new URL(origin).host,
            uri: url,
            version: "1",
            nonce: crypto.randomUUID().replaceAll("-", ""),
            issuedAt: new Date().toISOString(),
            chainId: `eip155:${host.l1ChainId}`,
            type: "eip191",
            resources: [url],
          },
          account,
          url,
        );
        headers.push(encodeSIWxHeader(payload));
      }
      return headers;
    },
  };
}

export type Signers = ReturnType<typeof createSigners>;

/**
 * A payer that pays with x402's `upto` scheme only: x402's own upto client (`@x402/evm/upto/client`) on
 * `@x402/fetch`, unmodified, as its README builds a client, allowed the service's asset at up to 1 USD a payment.
 * The payer must have approved Permit2 for the asset once (the devnet's accounts 1-9 have).
 */
import type { Network } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { LocalAccount } from "viem";

export interface X402UptoPayerParameters {
  account: LocalAccount;
  /** The payment chain (x402's client reads it only for its gas-sponsoring extensions). */
  chain: unknown;
  network: Network;
  asset: string;
}

export function x402UptoPayer({ account, chain, network, asset }: X402UptoPayerParameters) {
  const signer = toClientEvmSigner(account, chain as never);
  const scheme = new UptoEvmScheme(signer);
  const client = new x402Client();
  client.register(network, scheme);
  client.setSpendControls({ allowedAssets: [{ network, asset, maxAmountPerPayment: "1000000" }] });
  const paidFetch = wrapFetchWithPayment(fetch, client);
  /** A JSON POST to `url`, paid with an upto authorization when answered 402. */
  const post = (url: string, body: Record<string, unknown>) =>
    paidFetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { signer, scheme, client, post };
}

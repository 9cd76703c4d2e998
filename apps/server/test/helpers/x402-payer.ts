/**
 * A payer on x402's own clients, unmodified, as their READMEs build one: a scheme client of `@x402/evm` registered on
 * an `x402Client`, on `@x402/fetch`, allowed the service's asset at up to 1 USD a payment. `x402ChannelPayer` pays
 * over `batch-settlement` channels only (its options choose the channel, `salt`, and the deposit); `x402UptoPayer`
 * pays with `upto` only (the payer must have approved Permit2 for the asset once: the devnet's accounts 1-9 have).
 */
import type { Network, SchemeNetworkClient } from "@x402/core/types";
import { type ClientEvmSigner, toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { LocalAccount } from "viem";

export interface X402PayerParameters {
  account: LocalAccount;
  /** The payment chain, which a channel client reads its channel from. */
  chain: unknown;
  network: Network;
  asset: string;
}

export function x402Payer<Scheme extends SchemeNetworkClient>(
  { account, chain, network, asset }: X402PayerParameters,
  schemeOf: (signer: ClientEvmSigner) => Scheme,
) {
  const signer = toClientEvmSigner(account, chain as never);
  const scheme = schemeOf(signer);
  const client = new x402Client();
  client.register(network, scheme);
  client.setSpendControls({ allowedAssets: [{ network, asset, maxAmountPerPayment: "1000000" }] });
  const paidFetch = wrapFetchWithPayment(fetch, client);
  /** A JSON POST to `url`, paid with the scheme when answered 402. */
  const post = (url: string, body: Record<string, unknown>) =>
    paidFetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { signer, scheme, client, post };
}

export const x402ChannelPayer = ({
  options,
  ...parameters
}: X402PayerParameters & { options?: ConstructorParameters<typeof BatchSettlementEvmScheme>[1] }) =>
  x402Payer(parameters, (signer) => new BatchSettlementEvmScheme(signer, options));

export const x402UptoPayer = (parameters: X402PayerParameters) =>
  x402Payer(parameters, (signer) => new UptoEvmScheme(signer));

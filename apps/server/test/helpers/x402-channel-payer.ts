/**
 * A payer that pays over `batch-settlement` channels only: x402's own channel client
 * (`@x402/evm/batch-settlement/client`) on `@x402/fetch`, unmodified, as its README builds it, allowed the service's
 * asset at up to 1 USD a call. Its options choose the channel (`salt`) and the deposit (`depositPolicy`).
 */
import type { Network } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { LocalAccount } from "viem";

export interface X402ChannelPayerParameters {
  account: LocalAccount;
  /** The payment chain, which the client reads its channel from. */
  chain: unknown;
  network: Network;
  asset: string;
  options?: ConstructorParameters<typeof BatchSettlementEvmScheme>[1];
}

export function x402ChannelPayer({ account, chain, network, asset, options }: X402ChannelPayerParameters) {
  const signer = toClientEvmSigner(account, chain as never);
  const scheme = new BatchSettlementEvmScheme(signer, options);
  const client = new x402Client();
  client.register(network, scheme);
  client.setSpendControls({ allowedAssets: [{ network, asset, maxAmountPerPayment: "1000000" }] });
  const paidFetch = wrapFetchWithPayment(fetch, client);
  /** A JSON POST to `url`, paid over the channel when answered 402. */
  const post = (url: string, body: Record<string, unknown>) =>
    paidFetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { signer, scheme, post };
}

/**
 * x402's own facilitator, as hosted facilitators run it: `x402Facilitator` of `@x402/core` with two EVM schemes of
 * `@x402/evm`, `exact` and `batch-settlement` (payment channels: deposits, claims, sweeps and refunds), settling over
 * a viem wallet on the payment chain's JSON-RPC. The channel scheme is given no authorizer key, as the service's
 * built-in one (src/schemes/batch-settlement/channel-facilitator.ts): the service signs its own claims and refunds.
 * The bench compares ours with it in process; the production rehearsal serves it over HTTP in a process of its own
 * (production/reference-facilitator.ts).
 */
import { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type { Network, SupportedResponse } from "@x402/core/types";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/facilitator";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { createWalletClient, defineChain, http, publicActions } from "viem";
import { nonceManager, privateKeyToAccount } from "viem/accounts";
import { facilitatorSignerOf } from "../../src/settlement/chain-wallet.js";

export interface ReferenceFacilitatorTerms {
  network: Network;
  /** The payment chain's JSON-RPC. */
  rpcUrl: string;
  /** The key the facilitator settles with (it pays the gas). */
  privateKey: `0x${string}`;
}

export function x402FacilitatorClient(terms: ReferenceFacilitatorTerms): FacilitatorClient {
  const chainId = Number(terms.network.split(":")[1]);
  const wallet = createWalletClient({
    // viem's nonce manager: concurrent settlements take consecutive nonces (without it they collide).
    account: privateKeyToAccount(terms.privateKey, { nonceManager }),
    chain: defineChain({
      id: chainId,
      name: terms.network,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [terms.rpcUrl] } },
    }),
    transport: http(terms.rpcUrl),
    pollingInterval: 100,
  }).extend(publicActions);
  const signer = facilitatorSignerOf(wallet);
  const facilitator = new x402Facilitator()
    .register(terms.network, new ExactEvmScheme(signer))
    .register(terms.network, new BatchSettlementEvmScheme(signer));
  const supported: SupportedResponse = {
    kinds: [
      { x402Version: 2, scheme: "exact", network: terms.network },
      { x402Version: 2, scheme: "batch-settlement", network: terms.network },
    ],
    extensions: [],
    signers: { "eip155:*": [wallet.account.address] },
  };
  return {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => supported,
  };
}

/**
 * The built-in facilitator's channel side: x402's own `batch-settlement` facilitator (`@x402/evm`), sending the
 * channels' deposits, claims, sweeps and refunds from the channel key over the payment chain's client. It verifies
 * deposits (the token authorization, the payer's balance) and reads channels first seen. The service signs its own
 * claim and refund authorizations, so this facilitator is given no authorizer key (docs/channels.md).
 */
import { x402Facilitator } from "@x402/core/facilitator";
import type { Network } from "@x402/core/types";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/facilitator";
import { createNonceManager, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { jsonRpc } from "viem/nonce";
import { chainWalletOf, facilitatorSignerOf } from "../../settlement/chain-wallet.js";
import type { Facilitator } from "../../settlement/facilitator.js";

export interface ChannelFacilitatorParameters {
  network: string;
  /** The payment chain: its client's transport carries the facilitator's reads and transactions. */
  chain: Pick<PublicClient, "request">;
  /** The key that sends the channels' transactions (it pays their gas). */
  privateKey: `0x${string}`;
}

export function createChannelFacilitator(parameters: ChannelFacilitatorParameters): Facilitator {
  const wallet = chainWalletOf({
    // Transactions sent at once take consecutive nonces; the manager is this facilitator's own (viem's shared one
    // keeps a nonce per address and chain id, which outlives a chain restarted under the same id).
    account: privateKeyToAccount(parameters.privateKey, { nonceManager: createNonceManager({ source: jsonRpc() }) }),
    network: parameters.network,
    chain: parameters.chain,
    pollingInterval: 100,
  });
  const signer = facilitatorSignerOf(wallet);
  const facilitator = new x402Facilitator().register(
    parameters.network as Network,
    new BatchSettlementEvmScheme(signer),
  );
  return {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
  };
}

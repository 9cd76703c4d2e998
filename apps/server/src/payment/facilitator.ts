import { x402Facilitator } from "@x402/core/facilitator";
import { HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { type Account, type Chain, publicActions, type Transport, type WalletClient } from "viem";

/** What the service needs from an x402 facilitator: verify a payment, then settle it. */
export interface Facilitator {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
}

/**
 * Runs the facilitator's transactions one at a time. Each send asks the chain for the account's next nonce, so
 * settlements sent concurrently would take the same nonce and all but one would fail ("nonce too low"). Only
 * the sending is serialized; waiting for the receipts is not.
 */
function oneAtATime(): <T>(send: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return (send) => {
    const sent = last.then(send);
    last = sent.catch(() => undefined);
    return sent;
  };
}

/**
 * An in-process facilitator that verifies and settles `exact` EIP-3009 payments itself, sending the
 * `transferWithAuthorization` transactions from `wallet` (the embedded default uses the operator account on
 * the local L2).
 */
export function createLocalFacilitator(wallet: WalletClient<Transport, Chain, Account>, network: string): Facilitator {
  const client = wallet.extend(publicActions);
  const send = oneAtATime();
  const signer = toFacilitatorEvmSigner({
    address: wallet.account.address,
    readContract: (args) => client.readContract(args as Parameters<typeof client.readContract>[0]),
    verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
    writeContract: (args) => send(() => client.writeContract(args as Parameters<typeof client.writeContract>[0])),
    sendTransaction: (args) => send(() => client.sendTransaction(args)),
    waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
    getCode: (args) => client.getCode(args),
  });
  const facilitator = new x402Facilitator().register(network as `${string}:${string}`, new ExactEvmScheme(signer));
  return {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
  };
}

/** Any x402 v2 facilitator reached over HTTP (`FACILITATOR_URL`). */
export function createHttpFacilitator(url: string): Facilitator {
  const client = new HTTPFacilitatorClient({ url });
  return {
    verify: (payload, requirements) => client.verify(payload, requirements),
    settle: (payload, requirements) => client.settle(payload, requirements),
  };
}

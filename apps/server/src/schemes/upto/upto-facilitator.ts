/**
 * The built-in facilitator's `upto` side: x402's own `upto` facilitator (`@x402/evm/upto/facilitator`, unmodified),
 * which verifies a Permit2 authorization (its signature, the payer's balance and Permit2 approval, a simulated
 * settlement of the whole amount) and settles the amount the settle-time requirement names, at most the one signed.
 *
 * Its signer is the facilitator key the payers name in their witness (`extra.facilitatorAddress`): x402's upto proxy
 * lets no other sender settle, so its simulations must be sent from that key too. Its reads go through a viem wallet
 * client of that key extended with public actions (a read carries the account); its transactions go through the
 * built-in facilitator's settlement sender (../../settlement/settlement-sender.ts), from that key, so that they take
 * their nonces from the same count as the `exact` settlements the key sends.
 */
import { x402Facilitator } from "@x402/core/facilitator";
import type { Network } from "@x402/core/types";
import type { FacilitatorEvmSigner } from "@x402/evm";
import { UptoEvmScheme } from "@x402/evm/upto/facilitator";
import { type Address, concat, encodeFunctionData, type Hex, type LocalAccount, type PublicClient } from "viem";
import { chainWalletOf } from "../../settlement/chain-wallet.js";
import { type Facilitator, SETTLEMENT_PENDING } from "../../settlement/facilitator.js";
import type { SettlementSender } from "../../settlement/settlement-sender.js";

/** Gas limit of one `upto` settlement: the proxy, Permit2's signature and nonce checks and the token transfer. */
export const UPTO_SETTLEMENT_GAS = 250_000n;

export interface UptoFacilitatorParameters {
  network: string;
  /** The payment chain: its client's transport carries the facilitator's reads. */
  chain: Pick<PublicClient, "request">;
  /** The facilitator key: the address payers name in their witness, and the sender of the settlements. */
  account: LocalAccount;
  /** The built-in facilitator's sender, holding `account` among its keys. */
  sender: SettlementSender;
  /** How long a settlement's receipt is waited for before the settlement is left pending (reconciled later). */
  receiptTimeoutMs: number;
}

export interface UptoFacilitator extends Facilitator {
  /** The address payers name in their witness (`extra.facilitatorAddress`). */
  readonly address: Address;
}

export function createUptoFacilitator(parameters: UptoFacilitatorParameters): UptoFacilitator {
  const { account, sender, receiptTimeoutMs } = parameters;
  // The chain's own client retries what may be retried; a simulated settlement that reverts is an answer.
  const wallet = chainWalletOf({
    account,
    network: parameters.network,
    chain: parameters.chain,
    pollingInterval: 100,
    retryCount: 0,
  });
  const send = (to: Address, data: `0x${string}`, gas?: bigint) =>
    sender.send({ to, data, gas: gas ?? UPTO_SETTLEMENT_GAS, from: account.address }).then((sent) => sent.hash);
  const signer: FacilitatorEvmSigner = {
    getAddresses: () => [account.address],
    readContract: (args) => wallet.readContract(args as never),
    verifyTypedData: (args) => wallet.verifyTypedData(args as never),
    writeContract: (args) => {
      const data = encodeFunctionData({ abi: args.abi, functionName: args.functionName, args: args.args } as never);
      return send(args.address, args.dataSuffix ? concat([data, args.dataSuffix]) : data, args.gas);
    },
    sendTransaction: (args) => send(args.to, args.data),
    waitForTransactionReceipt: (args) =>
      wallet.waitForTransactionReceipt({ hash: args.hash, timeout: receiptTimeoutMs }),
    getCode: (args) => wallet.getCode(args),
  };
  const facilitator = new x402Facilitator().register(parameters.network as Network, new UptoEvmScheme(signer));
  return {
    address: account.address,
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    async settle(payload, requirements) {
      const settled = await facilitator.settle(payload, requirements);
      if (settled.success || !settled.transaction || settled.errorReason === SETTLEMENT_PENDING) return settled;
      // Only this key can settle a permit naming it (x402's upto proxy), and it sends each permit once: when its
      // settlement reverted (the payer burned the nonce or took back its approval meanwhile), nothing was taken, so the
      // payment is refused rather than left pending (docs/decisions.md, "The upto scheme").
      const receipt = await wallet.getTransactionReceipt({ hash: settled.transaction as Hex }).catch(() => undefined);
      if (receipt?.status !== "reverted") return settled;
      return { ...settled, transaction: "", errorMessage: `its settlement ${settled.transaction} reverted` };
    },
  };
}

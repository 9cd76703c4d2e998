/**
 * The payer's way out of a channel when the service does not answer: x402's timed withdrawal, on the channel
 * contract itself. The first call starts it (`initiateWithdraw`), for all that is not claimed; once the channel's
 * `withdrawDelay` has passed, the next call finishes it (`finalizeWithdraw`) and the money comes back. Meanwhile the
 * service can still claim what it charged. The service's docs/channels.md, "For a payer".
 */
import { BATCH_SETTLEMENT_ADDRESS } from "@x402/evm";
import {
  type Account,
  createPublicClient,
  createWalletClient,
  type Hash,
  http,
  type PublicClient,
  parseEventLogs,
  type WalletClient,
} from "viem";
import type { ChannelPayer, ChannelState, ChannelTerms } from "../channels.js";
import type { ClientContext } from "../context.js";
import { ChannelError, NetworkError } from "../errors.js";

/** The parts of x402's channel contract a withdrawal uses (`@x402/evm`'s batch-settlement ABI). */
const termsComponents = [
  { name: "payer", type: "address" },
  { name: "payerAuthorizer", type: "address" },
  { name: "receiver", type: "address" },
  { name: "receiverAuthorizer", type: "address" },
  { name: "token", type: "address" },
  { name: "withdrawDelay", type: "uint40" },
  { name: "salt", type: "bytes32" },
] as const;
const channelContractAbi = [
  {
    type: "function",
    name: "initiateWithdraw",
    stateMutability: "nonpayable",
    inputs: [
      { name: "config", type: "tuple", components: termsComponents },
      { name: "amount", type: "uint128" },
    ],
    outputs: [],
  },
  {
    type: "function",
    name: "finalizeWithdraw",
    stateMutability: "nonpayable",
    inputs: [{ name: "config", type: "tuple", components: termsComponents }],
    outputs: [],
  },
  {
    type: "function",
    name: "channels",
    stateMutability: "view",
    inputs: [{ name: "channelId", type: "bytes32" }],
    outputs: [
      { name: "balance", type: "uint128" },
      { name: "totalClaimed", type: "uint128" },
    ],
  },
  {
    type: "function",
    name: "pendingWithdrawals",
    stateMutability: "view",
    inputs: [{ name: "channelId", type: "bytes32" }],
    outputs: [
      { name: "amount", type: "uint128" },
      { name: "initiatedAt", type: "uint40" },
    ],
  },
  {
    type: "event",
    name: "WithdrawFinalized",
    inputs: [
      { name: "channelId", type: "bytes32", indexed: true },
      { name: "sender", type: "address", indexed: true },
      { name: "amount", type: "uint128", indexed: false },
    ],
  },
] as const;

/** Parameters of {@link withdrawChannel}: which channel (the client's only one when left out). */
export interface WithdrawChannelParameters {
  channelId?: string;
}

/** What {@link withdrawChannel} did: started a withdrawal, found one still waiting, or finished one. */
export type WithdrawChannelReturnType =
  | {
      status: "started";
      channelId: string;
      /** What the withdrawal asks for, in units: all that was not claimed when it started. */
      amount: bigint;
      /** From when it can be finished (the channel's delay after it started). */
      finishableAt: Date;
      transaction: string;
    }
  | { status: "waiting"; channelId: string; amount: bigint; finishableAt: Date }
  | {
      status: "finished";
      channelId: string;
      /** What came back, in units: what was asked for, less what the service claimed meanwhile. */
      withdrawn: bigint;
      transaction: string;
    };

/** The channel to withdraw from, and its kept state with its terms. */
async function channelToWithdraw(
  payer: ChannelPayer,
  channelId: string | undefined,
): Promise<{ id: string; state: ChannelState & { terms: ChannelTerms; network: string } }> {
  const ids = await payer.storage.list();
  const id = channelId?.toLowerCase() ?? (ids.length === 1 ? ids[0] : undefined);
  if (!id) {
    throw new ChannelError(
      ids.length === 0
        ? "This client keeps no channel: there is nothing to withdraw."
        : `This client keeps ${ids.length} channels: name the one to withdraw from (${ids.join(", ")}).`,
    );
  }
  const state = await payer.storage.get(id);
  if (!state) throw new ChannelError(`This client keeps no channel ${id}.`);
  if (!state.terms || !state.network) {
    throw new ChannelError(
      `The terms of channel ${id} are not kept here (it was last paid before this client kept them): make one paid call over it, then withdraw.`,
    );
  }
  return { id, state: state as ChannelState & { terms: ChannelTerms; network: string } };
}

/** A failure of the chain's as the caller reads it: no answer is a NetworkError, a revert a ChannelError. */
function chainFailure(error: unknown, what: string): Error {
  const name = (error as Error | undefined)?.name ?? "";
  if (/HttpRequestError|TimeoutError|FetchError/.test(name) || error instanceof TypeError) {
    return new NetworkError(`The payment chain did not answer while ${what}.`, { cause: error });
  }
  const reason = (error as { shortMessage?: string } | undefined)?.shortMessage ?? String(error);
  return new ChannelError(`The channel contract refused ${what}: ${reason}`, { cause: error });
}

/**
 * Starts or finishes the payer's timed withdrawal from a channel, on the payment chain (the option
 * `channels.rpcUrl`), without the service. Sends one transaction from the client's account, which pays its gas.
 * Throws `ChannelError` when there is nothing to withdraw or the contract refuses, `NetworkError` when the chain
 * does not answer.
 */
export async function withdrawChannel(
  context: ClientContext,
  { channelId }: WithdrawChannelParameters = {},
): Promise<WithdrawChannelReturnType> {
  const payer = context.channels;
  if (!payer) throw new ChannelError("This client pays over no channel: pass the option `channels`.");
  if (!payer.rpcUrl) {
    throw new ChannelError(
      "A withdrawal sends a transaction on the payment chain: pass its JSON-RPC URL as the option `channels.rpcUrl`.",
    );
  }
  const { id, state } = await channelToWithdraw(payer, channelId);
  const transport = http(payer.rpcUrl);
  const chain = createPublicClient({ transport }) as PublicClient;
  const wallet = createWalletClient({ account: payer.account as Account, transport }) as WalletClient;
  const terms = { ...state.terms, withdrawDelay: Number(state.terms.withdrawDelay) };
  const channel = id as Hash;
  const read = async () => {
    const [[balance, totalClaimed], [pending, initiatedAt], block] = await Promise.all([
      chain.readContract({
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: channelContractAbi,
        functionName: "channels",
        args: [channel],
      }),
      chain.readContract({
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: channelContractAbi,
        functionName: "pendingWithdrawals",
        args: [channel],
      }),
      chain.getBlock(),
    ]);
    return { balance, totalClaimed, pending, initiatedAt: Number(initiatedAt), now: Number(block.timestamp) };
  };
  let onChain: Awaited<ReturnType<typeof read>>;
  let chainId: number;
  try {
    [onChain, chainId] = await Promise.all([read(), chain.getChainId()]);
  } catch (error) {
    throw chainFailure(error, "reading the channel");
  }
  if (`eip155:${chainId}` !== state.network) {
    throw new ChannelError(`The RPC serves chain eip155:${chainId}; channel ${id} is on ${state.network}.`);
  }
  const send = async (what: string, write: () => Promise<Hash>) => {
    try {
      const hash = await write();
      const receipt = await chain.waitForTransactionReceipt({ hash });
      if (receipt.status !== "success") throw new ChannelError(`The transaction ${what} reverted: ${hash}.`);
      return receipt;
    } catch (error) {
      throw error instanceof ChannelError ? error : chainFailure(error, what);
    }
  };
  const finishableAt = (startedAt: number) => new Date((startedAt + terms.withdrawDelay) * 1000);

  if (onChain.initiatedAt === 0) {
    const amount = onChain.balance - onChain.totalClaimed;
    if (amount <= 0n) throw new ChannelError(`Nothing in channel ${id} is left to withdraw: it was all claimed.`);
    const receipt = await send("starting the withdrawal", () =>
      wallet.writeContract({
        chain: null,
        account: payer.account as Account,
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: channelContractAbi,
        functionName: "initiateWithdraw",
        args: [terms, amount],
      }),
    );
    const block = await chain.getBlock({ blockNumber: receipt.blockNumber });
    return {
      status: "started",
      channelId: id,
      amount,
      finishableAt: finishableAt(Number(block.timestamp)),
      transaction: receipt.transactionHash,
    };
  }
  if (onChain.now < onChain.initiatedAt + terms.withdrawDelay) {
    return {
      status: "waiting",
      channelId: id,
      amount: onChain.pending,
      finishableAt: finishableAt(onChain.initiatedAt),
    };
  }
  const receipt = await send("finishing the withdrawal", () =>
    wallet.writeContract({
      chain: null,
      account: payer.account as Account,
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: channelContractAbi,
      functionName: "finalizeWithdraw",
      args: [terms],
    }),
  );
  const [finalized] = parseEventLogs({ abi: channelContractAbi, logs: receipt.logs, eventName: "WithdrawFinalized" });
  const withdrawn = finalized?.args.amount ?? 0n;
  // The kept state as the chain now has it: what was withdrawn left the balance.
  try {
    const after = await read();
    await payer.storage.set(id, {
      ...state,
      balance: after.balance.toString(),
      totalClaimed: after.totalClaimed.toString(),
    });
  } catch {
    // The money came back; the next call over the channel sets its state right from the service's answer.
  }
  return { status: "finished", channelId: id, withdrawn, transaction: receipt.transactionHash };
}

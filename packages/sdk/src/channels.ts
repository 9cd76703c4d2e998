/**
 * Paying over x402 `batch-settlement` channels: the first call deposits into a channel, each later call signs a
 * cumulative voucher of it, with no transaction and no wait for a block (the service's docs/channels.md). x402's own
 * channel client (`@x402/evm/batch-settlement/client`) signs the deposits, vouchers and refunds and keeps each
 * channel's state in a {@link ChannelStorage}; this module says when a call uses a channel and what each holds.
 */
import { BATCH_SETTLEMENT_SCHEME, type PaymentRequirements } from "@agent-tools/schema";
import type { PaymentPayload } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import {
  type BatchSettlementDepositStrategyContext,
  BatchSettlementEvmScheme,
  computeChannelId,
  InMemoryClientChannelStorage,
} from "@x402/evm/batch-settlement/client";
import { createPublicClient, http, type LocalAccount } from "viem";
import { usdToUnits } from "./units.js";

/** The scheme's name in a quote's `accepts`. */
export const CHANNEL_SCHEME = BATCH_SETTLEMENT_SCHEME;

/** What a client keeps of one channel (x402's `BatchSettlementClientContext`): amounts in units, as decimal text. */
export interface ChannelState {
  /** What the service charged on the channel, all calls together. */
  chargedCumulativeAmount?: string;
  balance?: string;
  totalClaimed?: string;
  /** The payer's latest voucher: its total and signature. */
  signedMaxClaimable?: string;
  signature?: `0x${string}`;
  /** The payment chain (CAIP-2) and the channel's terms, kept so that the payer can withdraw without the service. */
  network?: string;
  terms?: ChannelTerms;
}

/** A channel's terms as x402's contract takes them (its `ChannelConfig`); `withdrawDelay` in seconds. */
export interface ChannelTerms {
  payer: `0x${string}`;
  payerAuthorizer: `0x${string}`;
  receiver: `0x${string}`;
  receiverAuthorizer: `0x${string}`;
  token: `0x${string}`;
  withdrawDelay: number;
  salt: `0x${string}`;
}

/**
 * Where a client keeps its channels' state, keyed by the channel's id in lower case (x402's `ClientChannelStorage`,
 * which it is handed to), and which channels it holds. The state must outlive the process for a channel to be used
 * again after a restart: memory by default, a file of the caller's own for the command-line tool.
 */
export interface ChannelStorage {
  get(key: string): Promise<ChannelState | undefined>;
  set(key: string, state: ChannelState): Promise<void>;
  delete(key: string): Promise<void>;
  /** The ids of the channels kept. */
  list(): Promise<string[]>;
}

/** A {@link ChannelStorage} in this process's memory: channels are opened again by the next process. */
export function memoryChannelStorage(): ChannelStorage {
  const inner = new InMemoryClientChannelStorage();
  const keys = new Set<string>();
  return {
    get: (key) => inner.get(key),
    async set(key, context) {
      keys.add(key);
      await inner.set(key, context);
    },
    async delete(key) {
      keys.delete(key);
      await inner.delete(key);
    },
    list: async () => [...keys],
  };
}

/** How a client pays over channels (the option `channels` of `createAgentToolsClient`). */
export interface ChannelOptions {
  /**
   * What a deposit puts into a channel, in USD (default "1.00"): the first call over a channel deposits this, and so
   * does a call the channel's balance no longer covers. Never less than the call's price.
   */
  deposit?: string | number;
  /** The channel's salt (bytes32, default zero): another salt opens another channel with the same service. */
  salt?: `0x${string}`;
  /** Where the channels' state is kept (default: in memory, for this process only). */
  storage?: ChannelStorage;
  /**
   * A JSON-RPC URL of the payment chain. With it, a client whose state of a channel is behind the service's (its
   * storage lost or copied) checks the service's word against the chain and goes on; without it, such a call is
   * refused and the channel is left as it is.
   */
  rpcUrl?: string;
}

/** One channel of the client, as its storage last recorded it, in units of the USD stablecoin (6 decimals). */
export interface ChannelSummary {
  channelId: string;
  /** What the payer deposited and the chain still holds in the channel. */
  balance: bigint;
  /** What the service charged on it, all calls together (the latest voucher's cumulative amount). */
  charged: bigint;
  /** What the service has claimed of it on chain. */
  claimed: bigint;
  /** What a refund would return now: the balance less what was charged. */
  refundable: bigint;
}

/** The summary of a channel's stored state. */
export function channelSummary(channelId: string, state: ChannelState): ChannelSummary {
  const balance = BigInt(state.balance ?? 0);
  const charged = BigInt(state.chargedCumulativeAmount ?? 0);
  return {
    channelId,
    balance,
    charged,
    claimed: BigInt(state.totalClaimed ?? 0),
    refundable: balance > charged ? balance - charged : 0n,
  };
}

/** A client's channel payer: x402's channel scheme for the account, where it keeps its channels, what it deposits. */
export interface ChannelPayer {
  scheme: BatchSettlementEvmScheme;
  storage: ChannelStorage;
  /** What a call deposits when its channel needs money, at a price of `price` units. */
  depositFor(price: bigint): bigint;
  /** The account that pays, and sends a timed withdrawal's transactions. */
  account: LocalAccount;
  /** The payment chain's JSON-RPC URL, when the caller gave one (option `rpcUrl`). */
  rpcUrl?: string;
}

/** The channel payer of `account` with the caller's options. */
export function createChannelPayer(account: LocalAccount, options: ChannelOptions): ChannelPayer {
  const storage = options.storage ?? memoryChannelStorage();
  const deposit = usdToUnits(options.deposit ?? "1.00");
  const depositFor = (price: bigint) => (deposit > price ? deposit : price);
  const chain = options.rpcUrl ? createPublicClient({ transport: http(options.rpcUrl) }) : undefined;
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(account, chain as never), {
    storage: clientStorage(storage),
    ...(options.salt ? { salt: options.salt } : {}),
    // The deposit the caller chose, whatever the scheme would pick; x402's client asks only when one is needed.
    depositStrategy: (context: BatchSettlementDepositStrategyContext) =>
      depositFor(BigInt(context.requestAmount)).toString(),
  });
  return { scheme, storage, depositFor, account, ...(options.rpcUrl ? { rpcUrl: options.rpcUrl } : {}) };
}

/** The id of the payer's channel for `requirement` (lower case, as storage keys are) and the channel's terms. */
function channelOf(payer: ChannelPayer, requirement: PaymentRequirements) {
  const terms = payer.scheme.buildChannelConfig(requirement as never) as ChannelTerms;
  return { id: computeChannelId(terms, requirement.network).toLowerCase(), terms };
}

/**
 * Keeps the terms of the channel a call was paid over beside its state, once: a timed withdrawal needs them, and
 * the service that gave them may then be gone.
 */
export async function keepChannelTerms(payer: ChannelPayer, requirement: PaymentRequirements): Promise<void> {
  const { id, terms } = channelOf(payer, requirement);
  const state = await payer.storage.get(id);
  if (state && !state.terms) await payer.storage.set(id, { ...state, network: requirement.network, terms });
}

/**
 * What paying `requirement` over the payer's channel would deposit, before anything is signed: nothing when the
 * channel's stored balance covers the price on top of what was charged, else {@link ChannelPayer.depositFor} (as
 * x402's client is told to deposit). A channel with no stored state is opened with a deposit.
 */
export async function plannedDeposit(payer: ChannelPayer, requirement: PaymentRequirements): Promise<bigint> {
  const { id } = channelOf(payer, requirement);
  const state = await payer.storage.get(id);
  const price = BigInt(requirement.amount);
  const { balance, charged } = channelSummary(id, state ?? {});
  return state && balance - charged >= price ? 0n : payer.depositFor(price);
}

/**
 * The storage as x402's client is handed it. That client forgets a channel once it is refunded in full, and would
 * then open it again from nothing: its deposit, of a total the service already charged, is refused, and only a read
 * of the chain sets it right. Kept instead as the refund left it (balance = charged = claimed), the channel is
 * topped up by the next call, which needs no chain read. And the state it writes, which knows nothing of a
 * channel's terms, keeps the terms kept before (see {@link keepChannelTerms}).
 */
function clientStorage(storage: ChannelStorage): ChannelStorage {
  return {
    get: (key) => storage.get(key),
    async set(key, state) {
      const kept = state.terms ? undefined : await storage.get(key);
      await storage.set(key, kept?.terms ? { ...state, network: kept.network, terms: kept.terms } : state);
    },
    list: () => storage.list(),
    async delete(key) {
      const state = await storage.get(key);
      if (!state) return;
      const charged = state.chargedCumulativeAmount ?? "0";
      await storage.set(key, { ...state, balance: charged, totalClaimed: charged });
    },
  };
}

/**
 * Forgets the client's state of the channel `payment` was signed over, when the service says that channel does not
 * exist (a chain started afresh, a state file copied from elsewhere): the next payment opens it with a deposit.
 * True when there was such a state to forget.
 */
export async function forgetMissingChannel(payer: ChannelPayer, payment: PaymentPayload): Promise<boolean> {
  const payload = payment.payload as { voucher?: { channelId?: string } } | undefined;
  const id = payload?.voucher?.channelId?.toLowerCase();
  if (!id || !(await payer.storage.get(id))) return false;
  await payer.storage.delete(id);
  return true;
}

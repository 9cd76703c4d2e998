/**
 * The EIP-712 messages of x402's `batch-settlement` channels (its EVM binding, "Channel Lifecycle"): a channel's id is
 * the typed hash of its terms, a payer signs cumulative `Voucher`s, the receiver authorizer signs `ClaimBatch`es and
 * `Refund`s. All are bound to the chain and to the channel contract's address (docs/channels.md).
 */
import { BATCH_SETTLEMENT_ADDRESS } from "@agent-tools/contracts";
import type { Address, Hex, LocalAccount } from "viem";
import { recoverTypedDataSigner } from "../../signatures/recover-signer.js";
import { hashTypedDataOfKnownDomain } from "../../signatures/typed-data-hash.js";

/** The bounds of a channel's withdrawal delay, in seconds (15 minutes to 30 days). */
export const WITHDRAW_DELAY_BOUNDS = { min: 900, max: 2_592_000 } as const;

/** The immutable terms of a channel; their typed hash is its id. */
export interface ChannelConfig {
  payer: Address;
  payerAuthorizer: Address;
  receiver: Address;
  receiverAuthorizer: Address;
  token: Address;
  withdrawDelay: number;
  salt: Hex;
}

const CHANNEL_CONFIG_TYPES = {
  ChannelConfig: [
    { name: "payer", type: "address" },
    { name: "payerAuthorizer", type: "address" },
    { name: "receiver", type: "address" },
    { name: "receiverAuthorizer", type: "address" },
    { name: "token", type: "address" },
    { name: "withdrawDelay", type: "uint40" },
    { name: "salt", type: "bytes32" },
  ],
} as const;

const VOUCHER_TYPES = {
  Voucher: [
    { name: "channelId", type: "bytes32" },
    { name: "maxClaimableAmount", type: "uint128" },
  ],
} as const;

const REFUND_TYPES = {
  Refund: [
    { name: "channelId", type: "bytes32" },
    { name: "nonce", type: "uint256" },
    { name: "amount", type: "uint128" },
  ],
} as const;

const CLAIM_BATCH_TYPES = {
  ClaimBatch: [{ name: "claims", type: "ClaimEntry[]" }],
  ClaimEntry: [
    { name: "channelId", type: "bytes32" },
    { name: "maxClaimableAmount", type: "uint128" },
    { name: "totalClaimed", type: "uint128" },
  ],
} as const;

function domainOf(chainId: number) {
  return { name: "x402 Batch Settlement", version: "1", chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS } as const;
}

/** Ids of the channels seen lately, by their terms: every voucher of a channel sends its terms again. */
const knownIds = new Map<string, Hex>();
const KNOWN_IDS = 10_000;

/** The id of the channel with these terms on `chainId`. */
export function channelIdOf(config: ChannelConfig, chainId: number): Hex {
  const terms = [
    chainId,
    config.payer,
    config.payerAuthorizer,
    config.receiver,
    config.receiverAuthorizer,
    config.token,
    config.withdrawDelay,
    config.salt,
  ].join();
  const known = knownIds.get(terms);
  if (known) return known;
  const id = hashTypedDataOfKnownDomain({
    domain: domainOf(chainId),
    types: CHANNEL_CONFIG_TYPES,
    primaryType: "ChannelConfig",
    message: { ...config, withdrawDelay: config.withdrawDelay },
  });
  if (knownIds.size >= KNOWN_IDS) knownIds.delete(knownIds.keys().next().value!);
  knownIds.set(terms, id);
  return id;
}

/**
 * Who signed a voucher of `channelId` for `maxClaimableAmount`: one ECDSA recovery, native where it loads
 * (signatures/recover-signer.ts), and no chain read.
 */
export function voucherSigner(
  chainId: number,
  channelId: Hex,
  maxClaimableAmount: bigint,
  signature: Hex,
): Promise<Address> {
  return recoverTypedDataSigner({
    domain: domainOf(chainId),
    types: VOUCHER_TYPES,
    primaryType: "Voucher",
    message: { channelId, maxClaimableAmount },
    signature,
  });
}

/** One row of a claim: the channel, the voucher's ceiling, and the total the receiver takes of it. */
export interface ClaimEntry {
  channelId: Hex;
  maxClaimableAmount: bigint;
  totalClaimed: bigint;
}

/** The receiver authorizer's signature of a batch of claims (`claimWithSignature`). */
export function signClaimBatch(authorizer: LocalAccount, chainId: number, claims: readonly ClaimEntry[]): Promise<Hex> {
  return authorizer.signTypedData({
    domain: domainOf(chainId),
    types: CLAIM_BATCH_TYPES,
    primaryType: "ClaimBatch",
    message: { claims: [...claims] },
  });
}

/** The receiver authorizer's signature of a cooperative refund (`refundWithSignature`) at the channel's nonce. */
export function signRefund(
  authorizer: LocalAccount,
  chainId: number,
  refund: { channelId: Hex; nonce: bigint; amount: bigint },
): Promise<Hex> {
  return authorizer.signTypedData({
    domain: domainOf(chainId),
    types: REFUND_TYPES,
    primaryType: "Refund",
    message: refund,
  });
}

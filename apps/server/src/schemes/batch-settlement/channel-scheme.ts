/**
 * x402's `batch-settlement` scheme as a plug-in of the paid call (paid-call/payment-scheme.ts): a payer deposits once
 * into a channel, then signs a cumulative voucher per call. A voucher is checked here with one signature recovery
 * and the channel's row (store/channels.ts), held while its call runs, and its charge committed only when the call
 * answered; a deposit goes on chain through the facilitator when its first call answered. A refund payload is an
 * operation of its own: the channel's charges are claimed and the rest goes back to the payer (docs/channels.md).
 */
import type { PaymentRefusalReason, PaymentRequirements } from "@agent-tools/schema";
import type { PaymentPayload, SettleResponse } from "@x402/core/types";
import { type Address, getAddress, type Hex, type LocalAccount, zeroAddress } from "viem";
import type { MeteredCharge, PaymentScheme, SchemeOperation, SchemeRefusal } from "../../paid-call/payment-scheme.js";
import type { Facilitator } from "../../settlement/facilitator.js";
import type { ChainChannelState, ChannelRecord, ChannelStore } from "../../store/channels.js";
import type { SettlementClaim } from "../../store/settlement-ledger.js";
import { type ChannelPayload, readChannelPayload } from "./channel-payload.js";
import { channelIdOf, signClaimBatch, signRefund, voucherSigner } from "./channel-typed-data.js";

export interface ChannelSchemeParameters {
  store: ChannelStore;
  /** Verifies deposits and channels first seen, and carries deposits and refunds out on chain. */
  facilitator: Facilitator;
  /** Signs the claims and refunds of the service's channels: its address is `extra.receiverAuthorizer`. */
  authorizer: LocalAccount;
  /** How long a call may hold its channel before another may take it (an instance that stopped mid-call). */
  holdMs: number;
  now: () => Date;
}

const CHANNEL_KEY_PREFIX = "channel:";
/** Most channels an instance keeps in memory (the least recently used go first). */
const KNOWN_CHANNELS = 10_000;

/** The ledger's key of a call paid over a channel: the channel and the cumulative amount its voucher signs. */
export function channelPaymentKey(channelId: string, cumulative: bigint): string {
  return `${CHANNEL_KEY_PREFIX}${channelId.toLowerCase()}:${cumulative}`;
}

const chainIdOf = (network: string) => Number(network.split(":")[1]);

/** The channel terms of a quoted requirement: what a channel must name to pay the service. */
function quotedTerms(quoted: PaymentRequirements) {
  const extra = (quoted.extra ?? {}) as Record<string, unknown>;
  return {
    receiver: getAddress(quoted.payTo),
    token: getAddress(quoted.asset),
    receiverAuthorizer: getAddress(String(extra.receiverAuthorizer)),
    withdrawDelay: Number(extra.withdrawDelay),
  };
}

/** Why a channel's terms do not pay the quoted requirement (a code of x402's and a sentence); undefined when they do. */
function termsMismatch(
  payload: ChannelPayload,
  quoted: PaymentRequirements,
): { reason: PaymentRefusalReason; why: string } | undefined {
  const { channelConfig: config, voucher } = payload;
  const terms = quotedTerms(quoted);
  if (config.receiver !== terms.receiver) {
    return {
      reason: "invalid_batch_settlement_evm_receiver_mismatch",
      why: `the channel pays ${config.receiver}; this service is paid at ${terms.receiver}`,
    };
  }
  if (config.token !== terms.token) {
    return {
      reason: "invalid_batch_settlement_evm_token_mismatch",
      why: `the channel holds ${config.token}, not ${terms.token}`,
    };
  }
  if (config.receiverAuthorizer !== terms.receiverAuthorizer) {
    return {
      reason: "invalid_batch_settlement_evm_receiver_authorizer_mismatch",
      why: `the channel's receiver authorizer is ${config.receiverAuthorizer}; the service's is ${terms.receiverAuthorizer}`,
    };
  }
  if (config.withdrawDelay !== terms.withdrawDelay) {
    return {
      reason: "invalid_batch_settlement_evm_withdraw_delay_mismatch",
      why: `the channel's withdrawal delay is ${config.withdrawDelay} s; the service quotes ${terms.withdrawDelay} s`,
    };
  }
  if (channelIdOf(config, chainIdOf(quoted.network)) !== voucher.channelId) {
    return {
      reason: "invalid_batch_settlement_evm_channel_id_mismatch",
      why: "the voucher's channelId is not the id of the channelConfig sent with it",
    };
  }
  return undefined;
}

/** The chain's state of a channel as a facilitator reports it (`extra` of verify, `extra.channelState` of settle). */
function chainStateOf(extra: unknown): ChainChannelState | undefined {
  if (!extra || typeof extra !== "object") return undefined;
  const state = extra as Record<string, unknown>;
  const uint = (value: unknown) => (typeof value === "string" || typeof value === "number" ? BigInt(value) : undefined);
  const balance = uint(state.balance);
  const totalClaimed = uint(state.totalClaimed);
  if (balance === undefined || totalClaimed === undefined) return undefined;
  return {
    balance,
    totalClaimed,
    refundNonce: uint(state.refundNonce) ?? 0n,
    withdrawRequestedAt: Number(state.withdrawRequestedAt ?? 0),
  };
}

/** x402's `channelState` of a channel, as responses and corrective 402s carry it. */
export function channelStateOf(channel: ChannelRecord) {
  return {
    channelId: channel.channelId,
    balance: channel.balance.toString(),
    totalClaimed: channel.totalClaimed.toString(),
    withdrawRequestedAt: channel.withdrawRequestedAt,
    refundNonce: channel.refundNonce.toString(),
    chargedCumulativeAmount: channel.charged.toString(),
  };
}

/**
 * The corrective 402 of a voucher out of step with its channel: the channel's state and the payer's latest voucher,
 * which x402's client checks against its own key before it signs the next one.
 */
function outOfStep(channel: ChannelRecord, reason: PaymentRefusalReason, sentence: string): SchemeRefusal {
  return {
    reason,
    sentence,
    extra: {
      channelState: channelStateOf(channel),
      ...(channel.signature
        ? { voucherState: { signedMaxClaimable: channel.signedMax.toString(), signature: channel.signature } }
        : {}),
    },
  };
}

/** The facilitator's refusal as the caller gets it: x402's channel code when it is one, else `invalid_payment`. */
function facilitatorRefusal(invalidReason: string | undefined): SchemeRefusal {
  const code = invalidReason ?? "";
  // A deposit the payer's balance does not cover: the same reason as an `exact` payment's, said of the deposit.
  if (/^invalid_batch_settlement_evm_insufficient_(balance|funds)$/.test(code)) {
    return { reason: "insufficient_funds", sentence: `the payer's balance does not cover the deposit (${code})` };
  }
  const known: PaymentRefusalReason[] = [
    "invalid_batch_settlement_evm_channel_not_found",
    "invalid_batch_settlement_evm_cumulative_exceeds_balance",
    "invalid_batch_settlement_evm_cumulative_below_claimed",
    "invalid_batch_settlement_evm_voucher_signature",
  ];
  const reason = known.find((candidate) => candidate === code);
  return reason
    ? { reason, sentence: `the facilitator refused the channel payment (${code})` }
    : {
        reason: "invalid_payment",
        sentence: `the facilitator refused the channel payment${/^[a-z0-9_]{1,80}$/.test(code) ? ` (${code})` : ""}`,
      };
}

/** The channel scheme, and a way to have it forget a channel the claim pass saw change (a withdrawal started). */
export type ChannelScheme = PaymentScheme & { forget(channelId: string): void };

export function createChannelScheme(parameters: ChannelSchemeParameters): ChannelScheme {
  const { store, facilitator, authorizer, holdMs, now } = parameters;
  // A paid call asks for its payload several times (read, signer, hold): it is parsed once per payment.
  const parsed = new WeakMap<PaymentPayload, ChannelPayload | undefined>();
  const payloadOf = (payment: PaymentPayload): ChannelPayload | undefined => {
    if (!parsed.has(payment)) parsed.set(payment, readChannelPayload(payment.payload));
    return parsed.get(payment);
  };
  // The channels as this instance last wrote or read them (a voucher is checked against this, with no read), and
  // the call holding each channel here now.
  const channels = new Map<string, ChannelRecord>();
  const holders = new Map<string, string>();
  const remember = (channel: ChannelRecord) => {
    channels.delete(channel.channelId);
    channels.set(channel.channelId, channel);
    if (channels.size > KNOWN_CHANNELS) channels.delete(channels.keys().next().value!);
  };
  const letGo = (id: string, holder: string) => {
    if (holders.get(id) === holder) holders.delete(id);
  };

  /**
   * The channel's row. A deposit or a refund is always verified by the facilitator, which reads the chain; so is a
   * voucher of a channel the service has no row of (it starts at what the chain says was claimed).
   */
  async function channelOf(
    payment: PaymentPayload,
    requirements: PaymentRequirements,
    payload: ChannelPayload,
  ): Promise<{ channel: ChannelRecord } | { refusal: SchemeRefusal }> {
    const id = payload.voucher.channelId;
    const known = await store.get(id);
    if (known && payload.type === "voucher") {
      remember(known);
      return { channel: known };
    }
    const verified = await facilitator.verify(payment, requirements as never);
    if (!verified.isValid) return { refusal: facilitatorRefusal(verified.invalidReason) };
    const state = chainStateOf(verified.extra);
    if (!state) throw new Error("the facilitator's verify answer carries no channel state");
    if (known) await store.mirror(id, state);
    else
      await store.open({ channelId: id, config: payload.channelConfig, payer: payload.channelConfig.payer, ...state });
    const channel = await store.get(id);
    if (!channel) throw new Error(`channel ${id} was not recorded`);
    remember(channel);
    return { channel };
  }

  /**
   * Why a voucher cannot pay this call on the channel as known: a withdrawal under way, a cumulative amount out of
   * step with the charged total, or above the balance (with the deposit it comes with). Undefined when it can.
   */
  function voucherRefusal(channel: ChannelRecord, payload: ChannelPayload, price: bigint): SchemeRefusal | undefined {
    const max = payload.voucher.maxClaimableAmount;
    const deposit = payload.type === "deposit" ? payload.deposit.amount : 0n;
    if (channel.withdrawRequestedAt > 0) {
      return {
        reason: "invalid_batch_settlement_evm_channel_busy",
        sentence:
          "the payer started a timed withdrawal of this channel: the service takes no more vouchers on it; " +
          "open a new channel (another salt) or wait for the withdrawal to end",
      };
    }
    if (max <= channel.totalClaimed) {
      return outOfStep(
        channel,
        "invalid_batch_settlement_evm_cumulative_below_claimed",
        `the voucher's ${max} is not above the ${channel.totalClaimed} already claimed`,
      );
    }
    if (max !== channel.charged + price) {
      return outOfStep(
        channel,
        "invalid_batch_settlement_evm_cumulative_amount_mismatch",
        `the voucher's cumulative amount is ${max}; the channel's charged total is ${channel.charged} and this call costs ${price}`,
      );
    }
    if (max > channel.balance + deposit) {
      return {
        reason: "invalid_batch_settlement_evm_cumulative_exceeds_balance",
        sentence: `the voucher's ${max} is above the channel's balance of ${channel.balance + deposit}: deposit more`,
      };
    }
    return undefined;
  }

  return {
    scheme: "batch-settlement",
    forget: (channelId) => channels.delete(channelId.toLowerCase()),
    read(payment, quoted, at) {
      const payload = payloadOf(payment);
      if (!payload) {
        return {
          ok: false,
          reason: "invalid_batch_settlement_evm_voucher_payload",
          why: "the payload is not a batch-settlement deposit, voucher or refund",
        };
      }
      const wrong = termsMismatch(payload, quoted);
      if (wrong) return { ok: false, ...wrong };
      const { channelId, maxClaimableAmount } = payload.voucher;
      return {
        ok: true,
        key:
          payload.type === "refund"
            ? `channel-refund:${channelId}:${maxClaimableAmount}`
            : channelPaymentKey(channelId, maxClaimableAmount),
        from: payload.channelConfig.payer,
        nonce: channelId,
        validBefore: new Date(at.getTime() + holdMs),
        ...(payload.type === "refund" ? {} : { channel: { id: channelId, cumulative: maxClaimableAmount.toString() } }),
      };
    },
    payerOf: (payment) => payloadOf(payment)?.channelConfig.payer,
    keyOf(payment) {
      const payload = payloadOf(payment);
      return payload ? channelPaymentKey(payload.voucher.channelId, payload.voucher.maxClaimableAmount) : "";
    },
    async signer(payment, requirements) {
      const payload = payloadOf(payment);
      if (!payload) return undefined;
      const { voucher, channelConfig: config } = payload;
      let recovered: Address;
      try {
        recovered = await voucherSigner(
          chainIdOf(requirements.network),
          voucher.channelId,
          voucher.maxClaimableAmount,
          voucher.signature,
        );
      } catch {
        return undefined;
      }
      // The payer's authorizer signs its vouchers; a channel without one is signed by the payer itself.
      const expected = config.payerAuthorizer === zeroAddress ? config.payer : config.payerAuthorizer;
      return recovered === expected ? config.payer : recovered;
    },

    async hold(payment, requirements, call) {
      const payload = payloadOf(payment)!;
      const price = BigInt(requirements.amount);
      const id = payload.voucher.channelId;
      // One call per channel at a time on this instance; across instances, the charge is written only if the
      // channel is still as this call found it (`store.charge`).
      if (holders.has(id)) {
        return {
          held: false,
          reason: "invalid_batch_settlement_evm_channel_busy",
          sentence: "another call holds this channel: send the next voucher once it has answered",
        };
      }
      const holder = `${call.requestId}:${call.key}`;
      holders.set(id, holder);
      try {
        // A voucher is checked against the channel as this instance last knew it; a refusal is checked again
        // against the store, which another instance, a deposit or the claimer may have moved on.
        const cached = payload.type === "voucher" ? channels.get(id) : undefined;
        let refusal = cached ? voucherRefusal(cached, payload, price) : undefined;
        let channel = cached;
        if (!cached || refusal) {
          if (cached) channels.delete(id);
          const opened = await channelOf(payment, requirements, payload);
          if ("refusal" in opened) refusal = opened.refusal;
          else {
            channel = opened.channel;
            refusal = voucherRefusal(channel, payload, price);
          }
        }
        if (refusal || !channel) {
          holders.delete(id);
          return { held: false, ...refusal! };
        }
        const found = channel;
        return {
          held: true,
          books: call.booking !== undefined,
          settle: (metered) =>
            commit(payment, requirements, payload, found, price, call.booking, metered, call.key).finally(() =>
              letGo(id, holder),
            ),
          release: async () => letGo(id, holder),
        };
      } catch (error) {
        holders.delete(id);
        throw error;
      }
    },

    async operation(payment, requirements, call) {
      const payload = payloadOf(payment);
      if (payload?.type !== "refund") return undefined;
      return refund(payment, requirements, payload, call.requestId);
    },
  };

  /**
   * The charge of a call that answered: its deposit on chain first when it came with one, then the voucher kept. The
   * voucher signs the price as a ceiling; the call is charged `metered` (its work's price, at most that) when given,
   * else the price (docs/channels.md, "Charged by the work done").
   */
  async function commit(
    payment: PaymentPayload,
    requirements: PaymentRequirements,
    payload: ChannelPayload,
    channel: ChannelRecord,
    price: bigint,
    booking: SettlementClaim | undefined,
    metered: MeteredCharge | undefined,
    key: string,
  ): Promise<SettleResponse | { refused: SchemeRefusal }> {
    const id = channel.channelId;
    const max = payload.voucher.maxClaimableAmount;
    const charge = metered && metered.amount < price ? metered.amount : price;
    const network = requirements.network as SettleResponse["network"];
    let balance: bigint | undefined;
    let transaction = "";
    let deposited = "";
    if (payload.type === "deposit") {
      const settled = await facilitator.settle(payment, requirements as never);
      if (!settled.success) return settled;
      const state = chainStateOf(settled.extra?.channelState) ?? {
        ...channel,
        balance: channel.balance + payload.deposit.amount,
      };
      transaction = settled.transaction;
      deposited = payload.deposit.amount.toString();
      await store.record({
        transaction,
        kind: "deposit",
        channelId: id,
        amount: payload.deposit.amount,
        asset: requirements.asset,
        network: requirements.network,
      });
      await store.mirror(id, state);
      balance = state.balance;
    }
    const charged = await store.charge({
      channelId: id,
      expected: channel.charged,
      charged: channel.charged + charge,
      signedMax: max,
      signature: payload.voucher.signature,
      ...(balance !== undefined ? { balance } : {}),
      // Booked with the charge, or (its entry claimed before the tool ran) the pending entry priced with it.
      ...(booking
        ? { booking: { claim: booking, transaction, ...(metered ? { work: metered.work } : {}) } }
        : { pending: { paymentKey: key, ...(metered ? { work: metered.work } : {}) } }),
    });
    if (!charged) {
      // Another instance charged the channel, a refund or a withdrawal began meanwhile: this call is not charged,
      // and its answer is withheld; the 402 says where the channel now stands.
      channels.delete(id);
      const now = await store.get(id);
      const sentence =
        "the channel was charged by another call, or a refund or a timed withdrawal of it began, while this call " +
        "ran; nothing was charged: pay again with the channel as it stands, or over another";
      const reason = "invalid_batch_settlement_evm_channel_busy";
      return { refused: now ? outOfStep(now, reason, sentence) : { reason, sentence } };
    }
    remember(charged);
    return {
      success: true,
      transaction,
      network,
      payer: payload.channelConfig.payer,
      amount: deposited,
      extra: {
        chargedAmount: charge.toString(),
        channelState: channelStateOf(charged),
        ...(metered ? { ceiling: price.toString(), work: metered.work } : {}),
      },
    } as SettleResponse;
  }

  /**
   * A cooperative refund: what the channel owes the service is claimed in the same transaction, then the rest (or
   * the amount asked) goes back to the payer. The channel is held meanwhile, so no call is charged on it.
   */
  async function refund(
    payment: PaymentPayload,
    requirements: PaymentRequirements,
    payload: Extract<ChannelPayload, { type: "refund" }>,
    requestId: string,
  ): Promise<SchemeOperation> {
    const opened = await channelOf(payment, requirements, payload);
    if ("refusal" in opened) return { done: false, ...opened.refusal };
    const { channel } = opened;
    const id = channel.channelId;
    if (payload.voucher.maxClaimableAmount !== channel.charged) {
      return {
        done: false,
        ...outOfStep(
          channel,
          "invalid_batch_settlement_evm_cumulative_amount_mismatch",
          `a refund's voucher signs the channel's charged total, ${channel.charged}`,
        ),
      };
    }
    const refundable = channel.balance - channel.charged;
    if (refundable <= 0n) {
      return {
        done: false,
        reason: "invalid_batch_settlement_evm_refund_no_balance",
        sentence: "everything deposited in this channel was charged: nothing is left to refund",
      };
    }
    const amount = payload.amount ?? refundable;
    if (amount > refundable) {
      return {
        done: false,
        reason: "invalid_batch_settlement_evm_refund_amount_invalid",
        sentence: `at most ${refundable} can be refunded (the balance less what was charged)`,
      };
    }
    const holder = `${requestId}:refund`;
    // Held here (no call of this instance is charged meanwhile) and in the store (nor of any other).
    const held =
      !holders.has(id) && (await store.hold(id, channel.charged, holder, new Date(now().getTime() + holdMs)));
    if (!held) {
      return {
        done: false,
        reason: "invalid_batch_settlement_evm_channel_busy",
        sentence: "a call holds this channel: ask for the refund once it has answered",
      };
    }
    holders.set(id, holder);
    try {
      const chainId = chainIdOf(requirements.network);
      // What was charged and not claimed yet is claimed first, with the refund's own voucher (it signs that total).
      const claims =
        channel.charged > channel.totalClaimed
          ? [
              {
                voucher: { channel: payload.channelConfig, maxClaimableAmount: channel.charged.toString() },
                signature: payload.voucher.signature,
                totalClaimed: channel.charged.toString(),
              },
            ]
          : [];
      const claimAuthorizerSignature = claims.length
        ? await signClaimBatch(authorizer, chainId, [
            { channelId: id as Hex, maxClaimableAmount: channel.charged, totalClaimed: channel.charged },
          ])
        : undefined;
      const refundAuthorizerSignature = await signRefund(authorizer, chainId, {
        channelId: id as Hex,
        nonce: channel.refundNonce,
        amount,
      });
      const settled = await facilitator.settle(
        {
          ...payment,
          payload: {
            ...(payment.payload as Record<string, unknown>),
            amount: amount.toString(),
            refundNonce: channel.refundNonce.toString(),
            claims,
            ...(claimAuthorizerSignature ? { claimAuthorizerSignature } : {}),
            refundAuthorizerSignature,
          },
        },
        requirements as never,
      );
      if (!settled.success) {
        return {
          done: false,
          reason: "settlement_failed",
          sentence: `the refund could not be carried out${settled.errorReason ? ` (${settled.errorReason})` : ""}; nothing moved`,
        };
      }
      const state = chainStateOf(settled.extra?.channelState);
      if (claims.length) {
        await store.claimed(
          { transaction: settled.transaction, asset: requirements.asset, network: requirements.network },
          [{ channelId: id, totalClaimed: channel.charged }],
        );
      }
      if (state) await store.mirror(id, state);
      const refunded = BigInt(settled.amount || amount.toString());
      await store.record({
        transaction: settled.transaction,
        kind: "refund",
        channelId: id,
        amount: refunded,
        asset: requirements.asset,
        network: requirements.network,
      });
      const after = (await store.get(id)) ?? channel;
      return {
        done: true,
        status: 200,
        output: { channelId: id, refunded: refunded.toString(), transaction: settled.transaction },
        settlement: { ...settled, extra: { ...settled.extra, channelState: channelStateOf(after) } } as SettleResponse,
      };
    } finally {
      channels.delete(id);
      letGo(id, holder);
      await store.release(id, holder);
    }
  }
}

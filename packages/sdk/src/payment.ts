import {
  type CountedWork,
  countedWorkSchema,
  type PaymentRequired,
  type PaymentRequirements,
  parsePaymentRefusal,
} from "@agent-tools/schema";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { appendPaymentIdentifierToExtensions, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import type { LocalAccount } from "viem";
import { CHANNEL_SCHEME, type ChannelPayer } from "./channels.js";
import { InvalidReceiptError } from "./errors.js";
import { checkReceipt, type PaymentReceipt } from "./receipt.js";
import { unitsToUsd } from "./units.js";

export { type PaymentReceipt, proofOfPayment } from "./receipt.js";
export { unitsToUsd, usdToUnits } from "./units.js";

/** What a paid call cost, from the service's `PAYMENT-RESPONSE`. */
export interface Payment {
  /** What the call was charged, in the asset's smallest unit (6 decimals). */
  amount: string;
  /** The same in USD, for example "0.01". */
  amountUsd: string;
  /**
   * The price the payment signed, in units: what an `exact` payment is charged (then equal to `amount`), and the most
   * a call over a metered scheme (a channel, or x402's `upto`) could be charged.
   */
  ceiling: string;
  /**
   * What the call's answer took, when it was charged by the work done (the service's docs/api.md, "Prices by the
   * work done"): `amount` is the service's published formula of it. Absent for an `exact` payment.
   */
  work?: CountedWork;
  asset: string;
  /** CAIP-2 payment network. */
  network: string;
  /** Settlement transaction hash. */
  transaction: string;
  payer: string;
  /** Who was paid. */
  payTo: string;
  /**
   * The service's signed offer and receipt of this call, checked (x402 offer-receipt, EIP-712); null when the
   * service signs none. Keep it as proof; {@link proofOfPayment} makes ERC-8004's `proofOfPayment` of the payment.
   */
  receipt: PaymentReceipt | null;
  /**
   * For a call paid over a channel (x402 `batch-settlement`): the channel, what the service has charged on it all
   * calls together after this one, its balance, and what this call deposited ("0" when it deposited nothing).
   * `transaction` is then empty, or the deposit's. Absent for an `exact` payment.
   */
  channel?: PaymentChannel;
}

/** The channel a call was paid over, as the service's answer left it (units of 6 decimals). */
export interface PaymentChannel {
  id: string;
  charged: string;
  balance: string;
  deposited: string;
}

/** x402's name of the scheme a payment signs up to a ceiling of, and is charged the work done under it. */
export const UPTO_SCHEME = "upto";

/**
 * An x402 v2 payment of one requirement of the quote (its first, `exact`, unless `requirement` names its `upto`
 * one), allowing exactly that asset up to `cap`: the `PaymentPayload` an MCP call carries in `_meta["x402/payment"]`,
 * and HTTP, encoded, in `PAYMENT-SIGNATURE`. When the service declares x402's payment-identifier extension, the
 * payment names a new identifier: sent again as it is (a retry after the answer was lost), it gets the answer it paid
 * for, and is not charged twice.
 */
export async function createPayment(
  account: LocalAccount,
  quote: PaymentRequired,
  cap: bigint,
  requirement: PaymentRequirements = quote.accepts[0]!,
): Promise<Awaited<ReturnType<x402Client["createPaymentPayload"]>>> {
  quote = withPaymentIdentifier(quote);
  const client = new x402Client();
  // x402's client pays the first requirement of the quote whose scheme it has: the one chosen, alone.
  if (requirement.scheme === UPTO_SCHEME) {
    client.register(requirement.network as `${string}:${string}`, new UptoEvmScheme(toClientEvmSigner(account)));
  } else registerExactEvmScheme(client, { signer: toClientEvmSigner(account) });
  client.setSpendControls({
    allowedAssets: [
      {
        network: requirement.network as `${string}:${string}`,
        asset: requirement.asset,
        maxAmountPerPayment: cap.toString(),
      },
    ],
  });
  return client.createPaymentPayload(quote as never);
}

/**
 * A payment over the client's channel for the quote's `batch-settlement` requirement: a deposit with the call when
 * the channel needs one, else a voucher (x402's channel client). With x402's payment-identifier extension as
 * {@link createPayment} does. The caller's limits are checked before (`payment-policy.ts`): x402's own spend cap
 * would shrink the deposit the caller chose.
 */
export async function createChannelPayment(
  payer: ChannelPayer,
  quote: PaymentRequired,
): Promise<Awaited<ReturnType<x402Client["createPaymentPayload"]>>> {
  return channelClient(payer, quote).createPaymentPayload(withPaymentIdentifier(quote) as never);
}

/** What a paid call's answer says of its payment, whatever the transport: its settlement, or the 402 refusing it. */
export interface PaymentOutcome {
  settlement?: SettlementFields | undefined;
  paymentRequired?: PaymentRequired | undefined;
}

/**
 * Reads a paid answer over a channel into the channel's stored state (x402's channel client reads it): the charged
 * total and balance of a settlement, or the channel's state from a corrective 402 (the client's cumulative amount was
 * out of step with the service's, as after its state was lost). `recovered` when the call may be signed again.
 */
export async function readChannelOutcome(
  payer: ChannelPayer,
  quote: PaymentRequired,
  payment: Awaited<ReturnType<typeof createChannelPayment>>,
  { settlement, paymentRequired }: PaymentOutcome,
): Promise<{ recovered: boolean }> {
  const result = await channelClient(payer, quote).handlePaymentResponse({
    paymentPayload: payment,
    requirements: payment.accepted,
    ...(settlement ? { settleResponse: { success: true, ...settlement } as never } : {}),
    ...(paymentRequired && !settlement ? { paymentRequired: paymentRequired as never } : {}),
  });
  return { recovered: result?.recovered === true };
}

function channelClient(payer: ChannelPayer, quote: PaymentRequired): x402Client {
  const requirement = quote.accepts.find((accept) => accept.scheme === CHANNEL_SCHEME);
  if (!requirement) throw new Error("the quote offers no payment channel");
  const client = new x402Client();
  client.register(requirement.network as `${string}:${string}`, payer.scheme);
  client.setSpendControls(false);
  return client;
}

/** The quote with a new payment identifier when the service declares x402's extension; else the quote as it is. */
function withPaymentIdentifier(quote: PaymentRequired): PaymentRequired {
  if (quote.extensions?.[PAYMENT_IDENTIFIER] === undefined) return quote;
  // A copy: the quote stays as the service sent it.
  const extensions = structuredClone(quote.extensions);
  appendPaymentIdentifierToExtensions(extensions);
  return { ...quote, extensions };
}

/**
 * How long to wait before each new ask while the service says a payment is in use: an earlier attempt of the same
 * call (its answer lost on the way) still holds it; once that attempt is over, the payment's identifier gets its
 * answer. About 16 s in all.
 */
export const PAYMENT_IN_USE_WAITS_MS = [250, 500, 1000, 2000, 4000, 4000, 4000] as const;

/**
 * Sends a paid request, and sends it again as it is while `refusalOf` its answer says the payment is in use (see
 * {@link PAYMENT_IN_USE_WAITS_MS}); the last answer.
 */
export async function whilePaymentInUse<T>(
  send: () => Promise<T>,
  refusalOf: (answer: T) => PaymentRequired | undefined,
): Promise<T> {
  let answer = await send();
  for (const wait of PAYMENT_IN_USE_WAITS_MS) {
    const refusal = refusalOf(answer);
    if (!refusal || parsePaymentRefusal(refusal.error).reason !== "payment_in_use") break;
    await new Promise((resolve) => setTimeout(resolve, wait));
    answer = await send();
  }
  return answer;
}

/**
 * The payment of a paid answer, from its settlement (the `PAYMENT-RESPONSE` header, decoded, or MCP's
 * `_meta["x402/payment-response"]`), with its receipt checked against the quote that was paid: a receipt that does
 * not hold throws {@link InvalidReceiptError}, carrying `answer` with the payment.
 */
export async function readSettlement(
  settlement: SettlementFields,
  paid: { quote: PaymentRequired; requirement: PaymentRequirements; payer: string; receiptSigner?: string },
  data: unknown,
): Promise<Payment> {
  const { channelState, overChannel } = channelOf(settlement, paid.requirement);
  const amount = chargedUnits(settlement, paid.requirement).toString();
  const payment: Payment = {
    amount,
    amountUsd: unitsToUsd(amount),
    ceiling: paid.requirement.amount,
    ...(workOf(settlement) ? { work: workOf(settlement)! } : {}),
    asset: paid.requirement.asset,
    network: settlement.network,
    transaction: settlement.transaction,
    payer: settlement.payer ?? paid.payer,
    payTo: paid.requirement.payTo,
    receipt: null,
    ...(overChannel
      ? {
          channel: {
            id: channelState!.channelId!.toLowerCase(),
            charged: channelState!.chargedCumulativeAmount ?? amount,
            balance: channelState!.balance ?? "0",
            deposited: settlement.amount || "0",
          },
        }
      : {}),
  };
  const checked = await checkReceipt(settlement, {
    quote: paid.quote,
    requirement: paid.requirement,
    settlement,
    payer: paid.payer,
    ...(paid.receiptSigner ? { signer: paid.receiptSigner } : {}),
  });
  if (typeof checked === "string") throw new InvalidReceiptError(checked, { data, payment });
  return { ...payment, receipt: checked ?? null };
}

/** The counted work a metered settlement reports (`extra.work`), when it is well formed. */
function workOf(settlement: SettlementFields): CountedWork | undefined {
  const parsed = countedWorkSchema.safeParse(settlement.extra?.work);
  return parsed.success ? parsed.data : undefined;
}

/** The channel state a settlement over a channel carries, when it is one. */
function channelOf(settlement: SettlementFields, requirement: PaymentRequirements) {
  const channelState = (settlement.extra?.channelState ?? undefined) as
    | { channelId?: string; chargedCumulativeAmount?: string; balance?: string }
    | undefined;
  return { channelState, overChannel: requirement.scheme === CHANNEL_SCHEME && channelState?.channelId !== undefined };
}

/**
 * What a settled call cost, in units: over a channel its `chargedAmount` (the settlement's `amount` is then what the
 * call deposited), else the settlement's amount; the requirement's price when the settlement names none.
 */
export function chargedUnits(settlement: SettlementFields, requirement: PaymentRequirements): bigint {
  const charged = channelOf(settlement, requirement).overChannel
    ? String(settlement.extra?.chargedAmount ?? "")
    : settlement.amount;
  return BigInt(charged || requirement.amount);
}

/** The fields of an x402 settlement the client reads. */
export interface SettlementFields {
  transaction: string;
  network: string;
  payer?: string;
  amount?: string;
  extensions?: Record<string, unknown>;
  /** A channel payment's state after the call (`channelState`) and what the call cost (`chargedAmount`). */
  extra?: Record<string, unknown>;
}

/** Encodes a payment of {@link createPayment} as the `PAYMENT-SIGNATURE` header. */
export function encodePaymentHeader(payment: Awaited<ReturnType<typeof createPayment>>): string {
  return encodePaymentSignatureHeader(payment);
}

/** Decodes a `PAYMENT-RESPONSE` header. */
export function decodeSettlementHeader(header: string): SettlementFields {
  return decodePaymentResponseHeader(header);
}

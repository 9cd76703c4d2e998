/**
 * A call paid as the payment policy decided, whatever the transport carries it in (HTTP headers, MCP `_meta`, A2A
 * metadata): `payDecided`. Over a payment channel (`payOverChannel`), the voucher
 * (or deposit) signed, the answer read into the channel's state, and a corrective 402 signed again once. The
 * transport says how a payment is sent and what its answer says of it.
 */
import { type PaymentRequired, type PaymentRequirements, parsePaymentRefusal } from "@agent-tools/schema";
import type { LocalAccount } from "viem";
import { CHANNEL_SCHEME, type ChannelPayer, forgetMissingChannel, keepChannelTerms } from "./channels.js";
import type { PaymentLimits } from "./limits.js";
import { createChannelPayment, type PaymentOutcome, readChannelOutcome } from "./payment.js";
import { type CapWording, depositRefusal, paymentRefusalError, signPayment } from "./payment-policy.js";

/** The service's refusal of a voucher for a channel it does not know. */
const CHANNEL_NOT_FOUND = "invalid_batch_settlement_evm_channel_not_found";

/** Parameters of {@link payOverChannel}: the call, its channel, and how its transport sends and reads a payment. */
export interface PayOverChannelParameters<A> {
  tool: string;
  quote: PaymentRequired;
  requirement: PaymentRequirements;
  channel: ChannelPayer;
  limits: PaymentLimits;
  capWording: CapWording;
  send(payment: Awaited<ReturnType<typeof createChannelPayment>>): Promise<A>;
  outcomeOf(answer: A): PaymentOutcome;
}

/**
 * Pays a call over `channel` and returns the transport's last answer. A 402 that set the client's state right (it was
 * behind the service's), or that names a channel the chain does not have (its kept state is then dropped), gets the
 * call signed again once, after the deposit that would now need is checked against `maxDeposit`.
 */
export async function payOverChannel<A>({
  tool,
  quote,
  requirement,
  channel,
  limits,
  capWording,
  send,
  outcomeOf,
}: PayOverChannelParameters<A>): Promise<A> {
  const signed = await createChannelPayment(channel, quote);
  const answer = await send(signed);
  const outcome = outcomeOf(answer);
  let { recovered } = await readChannelOutcome(channel, quote, signed, outcome);
  const refused = outcome.settlement ? undefined : outcome.paymentRequired;
  if (outcome.settlement) await keepChannelTerms(channel, requirement);
  if (!refused) return answer;
  if (!recovered && parsePaymentRefusal(refused.error).reason === CHANNEL_NOT_FOUND) {
    recovered = await forgetMissingChannel(channel, signed);
  }
  if (!recovered) return answer;
  const refusal = await depositRefusal(channel, requirement, limits);
  if (refusal) throw paymentRefusalError({ tool, quote, refusal, capWording });
  const again = await createChannelPayment(channel, quote);
  const second = await send(again);
  const secondOutcome = outcomeOf(second);
  await readChannelOutcome(channel, quote, again, secondOutcome);
  if (secondOutcome.settlement) await keepChannelTerms(channel, requirement);
  return second;
}

/** Parameters of {@link payDecided}: {@link payOverChannel}'s, with the payer and the client's channels, if any. */
export type PayDecidedParameters<A> = Omit<PayOverChannelParameters<A>, "channel"> & {
  account: LocalAccount;
  channels: ChannelPayer | undefined;
};

/**
 * Pays a call as the payment policy decided, whatever the transport: over the client's channel when the requirement
 * chosen is a channel's ({@link payOverChannel}), else with one payment of it (`exact` or `upto`) signed once and sent.
 * The transport's last answer, and whether it went over a channel.
 */
export async function payDecided<A>({
  account,
  channels,
  ...call
}: PayDecidedParameters<A>): Promise<{ answer: A; overChannel: boolean }> {
  const channel = call.requirement.scheme === CHANNEL_SCHEME ? channels : undefined;
  if (channel) return { answer: await payOverChannel({ ...call, channel }), overChannel: true };
  const { quote, requirement, limits } = call;
  return { answer: await call.send(await signPayment(account, { quote, requirement, limits })), overChannel: false };
}

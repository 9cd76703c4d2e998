/**
 * The client's payment policy, one for every transport: from a quote (x402 `PaymentRequired`) and the caller's
 * limits, which requirement to pay or why not, and the signed values a paid call carries. It knows no transport:
 * `actions/call-tool.ts` carries these values in HTTP headers, `mcp.ts` in MCP `_meta`.
 */
import {
  type PaymentRefusalReason,
  type PaymentRequired,
  type PaymentRequirements,
  parsePaymentRefusal,
} from "@agent-tools/schema";
import type { LocalAccount } from "viem";
import { CHANNEL_SCHEME, type ChannelPayer, plannedDeposit } from "./channels.js";
import { PaymentRequiredError } from "./errors.js";
import {
  checkLimits,
  depositOverLimit,
  LIMIT_REASONS,
  type LimitExceeded,
  limitSentence,
  type PaymentLimits,
  type SpendLimitName,
} from "./limits.js";
import {
  chargedUnits,
  createPayment,
  type Payment,
  readSettlement,
  type SettlementFields,
  UPTO_SCHEME,
} from "./payment.js";
import { pickSignInChain, signInHeader } from "./sign-in.js";
import { decideAndHold, type SpendHold, type Spending } from "./spending.js";

import { unitsToUsd, usdToUnits } from "./units.js";

/** The spending options every client takes, in USD (`createAgentToolsClient`, `connectMcpClient`, `connectA2aClient`). */
export interface PaymentLimitsOptions {
  /** Highest price paid for one call (default "1.00"). */
  maxPaymentPerCall?: string | number | undefined;
  /** Most this client may spend over all its calls (default: no limit). */
  budget?: string | number | undefined;
  /**
   * Most spent over any rolling 24 hours (default: no limit), counted in the spend log (`spendLog`): in memory by
   * default, so per process unless the log is kept elsewhere. Counts the price each paid call authorized; deposits into a
   * channel, which a refund gives back, count against `maxDeposit` instead.
   */
  maxPerDay?: string | number | undefined;
  /** Most one deposit into a payment channel may put in (default: no limit). */
  maxDeposit?: string | number | undefined;
}

/** A client's limits from its options: 1.00 USD a call unless it says otherwise, and no other limit unless set. */
export function paymentLimits({
  maxPaymentPerCall,
  budget,
  maxPerDay,
  maxDeposit,
}: PaymentLimitsOptions): PaymentLimits {
  const optional = (usd: string | number | undefined) => (usd === undefined ? undefined : usdToUnits(usd));
  return {
    maxPaymentUnits: usdToUnits(maxPaymentPerCall ?? "1.00"),
    budgetUnits: optional(budget),
    ...(maxPerDay !== undefined ? { maxPerDayUnits: optional(maxPerDay) } : {}),
    ...(maxDeposit !== undefined ? { maxDepositUnits: optional(maxDeposit) } : {}),
  };
}

// Signing in: a holder is quoted the holder price only when its request is signed in.

/** Who signs in: the client's account, unless the caller turned sign-in off. */
export interface SignInOptions {
  account: LocalAccount | undefined;
  /** The option `signIn` (default true). */
  signIn: boolean;
}

/** Parameters of {@link signInFor}: who signs in, the chain learnt so far, and the request's URL. */
export type SignInForParameters = SignInOptions & { chainId: string | undefined; resource: string };
/** What {@link signInFor} resolves with: a `SIGN-IN-WITH-X` value, or undefined for a request sent unsigned. */
export type SignInForReturnType = string | undefined;

/**
 * The sign-in for one request to `resource`: a fresh one when the caller signs in and the chain the service takes
 * sign-ins on is known (learnt with {@link learnSignInChain}); undefined otherwise.
 */
export async function signInFor({
  account,
  signIn,
  chainId,
  resource,
}: SignInForParameters): Promise<SignInForReturnType> {
  return account && signIn && chainId ? signInHeader(account, resource, chainId) : undefined;
}

/** Parameters of {@link learnSignInChain}: who signs in, the chain learnt so far, and the call's first quote. */
export type LearnSignInChainParameters = SignInOptions & { chainId: string | undefined; quote: PaymentRequired };
/** What {@link learnSignInChain} returns: the chain newly learnt, or undefined when there was nothing to learn. */
export type LearnSignInChainReturnType = string | undefined;

/**
 * The chain to sign in on, from the first quote a signing-in client gets: the call is then asked again signed in (a
 * quote is free), and later calls sign in on their first request. Undefined when the caller does not sign in or the
 * chain is known; `PaymentRequiredError` (`no_sign_in`) when the service offers no sign-in with Ethereum.
 */
export function learnSignInChain({
  account,
  signIn,
  chainId,
  quote,
}: LearnSignInChainParameters): LearnSignInChainReturnType {
  return account && signIn && !chainId ? pickSignInChain(quote) : undefined;
}

// Deciding: read the quote, then the caller's limits, in this order.

/** Why a quote is not paid; `reason` is what `PaymentRequiredError.reason` says. */
export type PaymentRefusal =
  /** The service refused the call as it was asked (its sign-in, say): a payment would not change that. */
  | { kind: "refused_by_service"; reason: PaymentRefusalReason; sentence: string }
  /** The quote names nothing to pay; the service's reason when it gave one, else `no_price`. */
  | { kind: "no_price"; reason: PaymentRefusalReason | "no_price" }
  /** The price would pass one of the caller's limits. */
  | { kind: "over_limit"; reason: (typeof LIMIT_REASONS)[SpendLimitName]; exceeded: LimitExceeded }
  /** The client has no account to pay with. */
  | { kind: "no_account"; reason: "no_account"; amountUnits: bigint };

/**
 * The requirement of a quote a client pays: its channel's (`batch-settlement`) when the client pays over channels and
 * the quote offers one, else its `upto` one when the client pays with `upto` and the quote offers it, else the
 * quote's first (`exact`). Undefined when the quote names none.
 */
export function chooseRequirement(
  quote: PaymentRequired,
  channels: boolean | undefined,
  upto?: boolean,
): PaymentRequirements | undefined {
  const offered = (scheme: string) => quote.accepts?.find((accept) => accept.scheme === scheme);
  return (
    (channels ? offered(CHANNEL_SCHEME) : undefined) ?? (upto ? offered(UPTO_SCHEME) : undefined) ?? quote.accepts?.[0]
  );
}

/** Parameters of {@link decidePayment}: the service's quote, the caller's limits and account, the client's spending. */
export interface DecidePaymentParameters {
  quote: PaymentRequired;
  limits: PaymentLimits;
  /** This client's calls so far, held ones included. */
  spentUnits: bigint;
  /** The rolling day's charges, held ones included (0 when the caller sets no limit per day). */
  spentTodayUnits?: bigint;
  account: LocalAccount | undefined;
  /** Whether the client pays over a channel when the quote offers one (the option `channels`). */
  channels?: boolean;
  /** Whether the client pays with x402's `upto` when the quote offers it and no channel is paid (the option `upto`). */
  upto?: boolean;
  /** What paying the chosen requirement would deposit into a channel ({@link chooseRequirement}; 0 for none). */
  depositUnits?: bigint;
}
/** What {@link decidePayment} returns: the requirement to pay and with which account, or why it is not paid. */
export type DecidePaymentReturnType =
  | { pay: true; requirement: PaymentRequirements; amountUnits: bigint; account: LocalAccount }
  | { pay: false; refusal: PaymentRefusal };

/**
 * Whether to pay a quote, checked in this order: a refusal of the service's that paying cannot fix, a quote with no
 * price, the caller's limits ({@link checkLimits}), an account to pay with. The requirement paid is
 * {@link chooseRequirement}'s. Nothing is signed here: every refusal comes before any signature.
 */
export function decidePayment({
  quote,
  limits,
  spentUnits,
  spentTodayUnits,
  account,
  channels,
  upto,
  depositUnits,
}: DecidePaymentParameters): DecidePaymentReturnType {
  const quoted = parsePaymentRefusal(quote.error);
  // A quote comes with `payment_required`, or `sign_in_required` when only holders are served; any other reason of
  // the service's is a refusal. A reason this client does not know (another service's) is read as a price.
  if (quoted.reason && quoted.reason !== "payment_required" && quoted.reason !== "sign_in_required") {
    return { pay: false, refusal: { kind: "refused_by_service", reason: quoted.reason, sentence: quoted.message } };
  }
  const requirement = chooseRequirement(quote, channels, upto);
  if (!requirement) return { pay: false, refusal: { kind: "no_price", reason: quoted.reason ?? "no_price" } };
  const amountUnits = BigInt(requirement.amount);
  const exceeded = checkLimits({
    amountUnits,
    limits,
    spentUnits,
    ...(spentTodayUnits !== undefined ? { spentTodayUnits } : {}),
    ...(depositUnits !== undefined ? { depositUnits } : {}),
  });
  if (exceeded) return { pay: false, refusal: { kind: "over_limit", reason: LIMIT_REASONS[exceeded.limit], exceeded } };
  if (!account) return { pay: false, refusal: { kind: "no_account", reason: "no_account", amountUnits } };
  return { pay: true, requirement, amountUnits, account };
}

/** Parameters of {@link decideCallPayment}: the quote, and the client's limits, spending, account and channels. */
export interface DecideCallPaymentParameters {
  quote: PaymentRequired;
  limits: PaymentLimits;
  spending: Spending;
  account: LocalAccount | undefined;
  /** The client's channel payer, when it pays over channels. */
  channels: ChannelPayer | undefined;
  /** Whether the client pays with x402's `upto` where offered (the option `upto`). */
  upto?: boolean | undefined;
}
/** What {@link decideCallPayment} resolves with: the decision, and the price held until the call's answer. */
export interface DecideCallPaymentReturnType {
  decision: DecidePaymentReturnType;
  /** Settle it with what the call was charged, or release it; a refusal holds nothing. */
  hold: SpendHold;
}

/**
 * {@link decidePayment} for one call of a client, as every transport asks it: the deposit a channel would need is
 * worked out from the channel's stored state, what is spent is read (this client's calls and the rolling day's), and
 * the price is held while the call runs, so that calls decided at once cannot together pass a limit.
 */
export async function decideCallPayment({
  quote,
  limits,
  spending,
  account,
  channels,
  upto,
}: DecideCallPaymentParameters): Promise<DecideCallPaymentReturnType> {
  const requirement = chooseRequirement(quote, channels !== undefined, upto);
  // The deposit is worked out (a read of the channel's stored state) only for a limit that needs it.
  const depositUnits =
    limits.maxDepositUnits !== undefined && channels && requirement?.scheme === CHANNEL_SCHEME
      ? await plannedDeposit(channels, requirement)
      : 0n;
  return decideAndHold(
    spending,
    ({ spentUnits, spentTodayUnits }) => {
      const decision = decidePayment({
        quote,
        limits,
        spentUnits,
        spentTodayUnits,
        account,
        channels: channels !== undefined,
        ...(upto ? { upto } : {}),
        depositUnits,
      });
      return { decision, holdUnits: decision.pay ? decision.amountUnits : undefined };
    },
    { countDay: limits.maxPerDayUnits !== undefined },
  );
}

/**
 * The refusal of a channel payment signed again after a corrective 402, when the deposit it would now make (its
 * stored state was dropped, say) passes `maxDeposit`; undefined when it passes none.
 */
export async function depositRefusal(
  channels: ChannelPayer,
  requirement: PaymentRequirements,
  limits: PaymentLimits,
): Promise<PaymentRefusal | undefined> {
  if (limits.maxDepositUnits === undefined) return undefined;
  const exceeded = depositOverLimit(await plannedDeposit(channels, requirement), limits);
  if (!exceeded) return undefined;
  return { kind: "over_limit", reason: LIMIT_REASONS.maxDeposit, exceeded };
}

/**
 * How a refusal over a limit names it. The HTTP client names its options (`above maxPaymentPerCall 0.50 USD`); the MCP
 * and A2A clients, whose refusals the stdio bridge hands to people as they are, say it in words (`above the 0.50 USD
 * per call allowed`). Either way the error carries the limit, typed (`PaymentRequiredError.limit`), for a caller that
 * words it its own way, as the command-line tool does with its flags.
 */
export type CapWording = "option" | "plain";

/** Parameters of {@link paymentRefusalError}: the tool called, its quote, the refusal, and how to name the limit. */
export interface PaymentRefusalErrorParameters {
  tool: string;
  quote: PaymentRequired;
  refusal: PaymentRefusal;
  capWording: CapWording;
}

/** The error a refusal of {@link decidePayment} throws: the same class and reasons for every transport. */
export function paymentRefusalError({
  tool,
  quote,
  refusal,
  capWording,
}: PaymentRefusalErrorParameters): PaymentRequiredError {
  return new PaymentRequiredError(
    refusalMessage(tool, quote, refusal, capWording),
    quote,
    refusal.reason,
    refusal.kind === "over_limit" ? refusal.exceeded : undefined,
  );
}

/** How each limit is named in a refusal: by its option, or in words. */
const LIMIT_NAMES: Record<SpendLimitName, Record<CapWording, (limit: string) => string>> = {
  maxPaymentPerCall: { option: (l) => `maxPaymentPerCall ${l} USD`, plain: (l) => `the ${l} USD per call allowed` },
  maxDeposit: { option: (l) => `maxDeposit ${l} USD`, plain: (l) => `the ${l} USD per deposit allowed` },
  maxPerDay: { option: (l) => `maxPerDay ${l} USD`, plain: (l) => `the ${l} USD per rolling day allowed` },
  budget: { option: (l) => `budget ${l} USD`, plain: (l) => `the ${l} USD budget` },
};

function refusalMessage(tool: string, quote: PaymentRequired, refusal: PaymentRefusal, capWording: CapWording): string {
  switch (refusal.kind) {
    case "refused_by_service":
      return `The service refused the ${refusal.reason === "invalid_siwx" ? "sign-in" : "call"}: ${refusal.sentence}`;
    case "no_price":
      return `The service asked for payment but quoted no price: ${quote.error ?? ""}`;
    case "no_account":
      return `${tool} costs ${unitsToUsd(refusal.amountUnits)} USD: pass an account to pay for it.`;
    case "over_limit":
      return limitSentence(tool, refusal.exceeded, LIMIT_NAMES[refusal.exceeded.limit][capWording]);
  }
}

// Paying: one signed payment per call, whatever the transport sends it in.

/** Parameters of {@link signPayment}: the quote decided on, the requirement chosen, and the caller's limits. */
export interface SignPaymentParameters {
  quote: PaymentRequired;
  /** The requirement {@link decidePayment} chose (default: the quote's first). */
  requirement?: PaymentRequirements;
  limits: PaymentLimits;
}
/** What {@link signPayment} resolves with: the x402 `PaymentPayload`, as the transport carries it. */
export type SignPaymentReturnType = Awaited<ReturnType<typeof createPayment>>;

/**
 * Signs the payment of the requirement {@link decidePayment} chose, allowing that asset up to the per-call cap. Sent
 * again as it is (a retry, or a wait while an earlier attempt holds it), it buys one call at most.
 */
export function signPayment(
  account: LocalAccount,
  { quote, requirement, limits }: SignPaymentParameters,
): Promise<SignPaymentReturnType> {
  return createPayment(account, quote, limits.maxPaymentUnits, requirement);
}

/** Parameters of {@link settledPayment}: the paid call's quote, requirement and payer, and whose receipts to accept. */
export type SettledPaymentParameters = Parameters<typeof readSettlement>[1];

/**
 * The payment of a paid answer: the call's hold is settled, then its settlement is read and its receipt checked
 * (`readSettlement`; `data` rides on an `InvalidReceiptError`). What counts against the limits: over a channel, the
 * charge the service reports, since each voucher signs the total charged so far plus one price, so a service that
 * reported less than it took can claim at most one price more than was counted, once (docs/decisions.md, "The
 * client's payment policy"); for any other payment, the price it authorized, never less: an `upto` permit lets the
 * service take up to its ceiling, whatever it reports.
 */
export async function settledPayment(
  hold: SpendHold,
  settlement: SettlementFields,
  paid: SettledPaymentParameters,
  data: unknown,
): Promise<Payment> {
  const authorized = BigInt(paid.requirement.amount);
  const charged = chargedUnits(settlement, paid.requirement);
  const counted = paid.requirement.scheme === CHANNEL_SCHEME ? charged : charged > authorized ? charged : authorized;
  await hold.settle(counted);
  return readSettlement(settlement, paid, data);
}

/** The error for a signed payment the service refused (the 402 that answered it), with the service's reason. */
export function refusedPaymentError(refused: PaymentRequired): PaymentRequiredError {
  const why = parsePaymentRefusal(refused.error);
  return new PaymentRequiredError(`The payment was refused: ${why.message || "no reason given"}`, refused, why.reason);
}

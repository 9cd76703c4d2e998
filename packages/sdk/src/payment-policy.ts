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
import { CHANNEL_SCHEME } from "./channels.js";
import { PaymentRequiredError } from "./errors.js";
import { createPayment } from "./payment.js";
import { pickSignInChain, signInHeader } from "./sign-in.js";
import { unitsToUsd, usdToUnits } from "./units.js";

/** The caller's limits on spending, in units of the USD stablecoin, set once per client. */
export interface PaymentLimits {
  /** The most one call may cost (the option `maxPaymentPerCall`). */
  readonly maxPaymentUnits: bigint;
  /** The most the client may spend over all its calls (the option `budget`); undefined for no limit. */
  readonly budgetUnits: bigint | undefined;
}

/** The spending options both clients take, in USD (`createAgentToolsClient`, `connectMcpClient`). */
export interface PaymentLimitsOptions {
  maxPaymentPerCall?: string | number | undefined;
  budget?: string | number | undefined;
}

/** A client's limits from its options: 1.00 USD a call unless it says otherwise, and no budget unless it sets one. */
export function paymentLimits({ maxPaymentPerCall, budget }: PaymentLimitsOptions): PaymentLimits {
  return {
    maxPaymentUnits: usdToUnits(maxPaymentPerCall ?? "1.00"),
    budgetUnits: budget === undefined ? undefined : usdToUnits(budget),
  };
}

/** What a client has paid so far: one tally per client, raised by {@link recordSpend}. */
export interface Spending {
  spentUnits: bigint;
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

/** A limit a price would pass: which one, how large it is, and by how much. */
export interface LimitExceeded {
  /** `maxPaymentPerCall` (one call's price) or `budget` (all the client's calls). */
  limit: "maxPaymentPerCall" | "budget";
  /** The price quoted, in units. */
  amountUnits: bigint;
  /** The limit, in units. */
  limitUnits: bigint;
  /** What the client had spent before this call (0 for the per-call limit). */
  spentUnits: bigint;
  /** How far past the limit paying would go, in units. */
  overByUnits: bigint;
}

/** Parameters of {@link checkLimits}: a price, the caller's limits, and what the client has spent. */
export interface CheckLimitsParameters {
  amountUnits: bigint;
  limits: PaymentLimits;
  spentUnits: bigint;
}
/** What {@link checkLimits} returns: the first limit the price would pass, or undefined when it passes none. */
export type CheckLimitsReturnType = LimitExceeded | undefined;

/** The first limit a price would pass: the per-call cap, then the budget. */
export function checkLimits({ amountUnits, limits, spentUnits }: CheckLimitsParameters): CheckLimitsReturnType {
  const { maxPaymentUnits, budgetUnits } = limits;
  if (amountUnits > maxPaymentUnits) {
    return {
      limit: "maxPaymentPerCall",
      amountUnits,
      limitUnits: maxPaymentUnits,
      spentUnits: 0n,
      overByUnits: amountUnits - maxPaymentUnits,
    };
  }
  if (budgetUnits !== undefined && spentUnits + amountUnits > budgetUnits) {
    return {
      limit: "budget",
      amountUnits,
      limitUnits: budgetUnits,
      spentUnits,
      overByUnits: spentUnits + amountUnits - budgetUnits,
    };
  }
  return undefined;
}

/** Why a quote is not paid; `reason` is what `PaymentRequiredError.reason` says. */
export type PaymentRefusal =
  /** The service refused the call as it was asked (its sign-in, say): a payment would not change that. */
  | { kind: "refused_by_service"; reason: PaymentRefusalReason; sentence: string }
  /** The quote names nothing to pay; the service's reason when it gave one, else `no_price`. */
  | { kind: "no_price"; reason: PaymentRefusalReason | "no_price" }
  /** The price would pass one of the caller's limits. */
  | { kind: "over_limit"; reason: "over_max_payment" | "over_budget"; exceeded: LimitExceeded }
  /** The client has no account to pay with. */
  | { kind: "no_account"; reason: "no_account"; amountUnits: bigint };

/** Parameters of {@link decidePayment}: the service's quote, the caller's limits and account, the client's spending. */
export interface DecidePaymentParameters {
  quote: PaymentRequired;
  limits: PaymentLimits;
  spentUnits: bigint;
  account: LocalAccount | undefined;
  /** Whether the client pays over a channel when the quote offers one (the option `channels`). */
  channels?: boolean;
}
/** What {@link decidePayment} returns: the requirement to pay and with which account, or why it is not paid. */
export type DecidePaymentReturnType =
  | { pay: true; requirement: PaymentRequirements; amountUnits: bigint; account: LocalAccount }
  | { pay: false; refusal: PaymentRefusal };

/**
 * Whether to pay a quote, checked in this order: a refusal of the service's that paying cannot fix, a quote with no
 * price, the per-call cap, the budget, an account to pay with. The requirement paid is the quote's first, the one
 * {@link signPayment} signs, or its channel's (`batch-settlement`) when the client pays over channels and the quote
 * offers one. Nothing is signed here.
 */
export function decidePayment({
  quote,
  limits,
  spentUnits,
  account,
  channels,
}: DecidePaymentParameters): DecidePaymentReturnType {
  const quoted = parsePaymentRefusal(quote.error);
  // A quote comes with `payment_required`, or `sign_in_required` when only holders are served; any other reason of
  // the service's is a refusal. A reason this client does not know (another service's) is read as a price.
  if (quoted.reason && quoted.reason !== "payment_required" && quoted.reason !== "sign_in_required") {
    return { pay: false, refusal: { kind: "refused_by_service", reason: quoted.reason, sentence: quoted.message } };
  }
  const requirement =
    (channels ? quote.accepts?.find((accept) => accept.scheme === CHANNEL_SCHEME) : undefined) ?? quote.accepts?.[0];
  if (!requirement) return { pay: false, refusal: { kind: "no_price", reason: quoted.reason ?? "no_price" } };
  const amountUnits = BigInt(requirement.amount);
  const exceeded = checkLimits({ amountUnits, limits, spentUnits });
  if (exceeded) {
    const reason = exceeded.limit === "budget" ? "over_budget" : "over_max_payment";
    return { pay: false, refusal: { kind: "over_limit", reason, exceeded } };
  }
  if (!account) return { pay: false, refusal: { kind: "no_account", reason: "no_account", amountUnits } };
  return { pay: true, requirement, amountUnits, account };
}

/**
 * How a refusal over the per-call cap names the cap. The HTTP client names its option (`above maxPaymentPerCall 0.50
 * USD`, which the CLI rewrites to its own flag); the MCP client, whose refusals the stdio bridge hands to people as
 * they are, says `above the 0.50 USD per call allowed`. Both phrasings are relied on.
 */
export type CapWording = "option" | "plain";

/** Parameters of {@link paymentRefusalError}: the tool called, its quote, the refusal, and how to name the cap. */
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
  return new PaymentRequiredError(refusalMessage(tool, quote, refusal, capWording), quote, refusal.reason);
}

function refusalMessage(tool: string, quote: PaymentRequired, refusal: PaymentRefusal, capWording: CapWording): string {
  const usd = unitsToUsd;
  switch (refusal.kind) {
    case "refused_by_service":
      return `The service refused the ${refusal.reason === "invalid_siwx" ? "sign-in" : "call"}: ${refusal.sentence}`;
    case "no_price":
      return `The service asked for payment but quoted no price: ${quote.error ?? ""}`;
    case "no_account":
      return `${tool} costs ${usd(refusal.amountUnits)} USD: pass an account to pay for it.`;
    case "over_limit": {
      const { amountUnits, limitUnits, spentUnits } = refusal.exceeded;
      if (refusal.exceeded.limit === "budget") {
        return `${tool} costs ${usd(amountUnits)} USD and ${usd(spentUnits)} of the ${usd(limitUnits)} USD budget is spent; nothing was paid.`;
      }
      const cap =
        capWording === "option"
          ? `maxPaymentPerCall ${usd(limitUnits)} USD`
          : `the ${usd(limitUnits)} USD per call allowed`;
      return `${tool} costs ${usd(amountUnits)} USD, above ${cap}; nothing was paid.`;
    }
  }
}

// Paying: one signed payment per call, whatever the transport sends it in.

/** Parameters of {@link signPayment}: the quote decided on, and the caller's limits. */
export interface SignPaymentParameters {
  quote: PaymentRequired;
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
  { quote, limits }: SignPaymentParameters,
): Promise<SignPaymentReturnType> {
  return createPayment(account, quote, limits.maxPaymentUnits);
}

/** The error for a signed payment the service refused (the 402 that answered it), with the service's reason. */
export function refusedPaymentError(refused: PaymentRequired): PaymentRequiredError {
  const why = parsePaymentRefusal(refused.error);
  return new PaymentRequiredError(`The payment was refused: ${why.message || "no reason given"}`, refused, why.reason);
}

/** Counts a settled payment against the budget: called once the service answered a paid call with its settlement. */
export function recordSpend(spending: Spending, amountUnits: bigint): void {
  spending.spentUnits += amountUnits;
}

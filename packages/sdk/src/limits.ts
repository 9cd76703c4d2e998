/**
 * The caller's spending limits as arithmetic, with no signing code: which limit a payment would pass, by how much,
 * and the sentence that says so (`payment-policy.ts` decides with it). Its types reach `@agent-tools/sdk/contracts`,
 * for code that reads `PaymentRequiredError.limit` without loading the client.
 */
import { unitsToUsd } from "./units.js";

/** The caller's limits on spending, in units of the USD stablecoin, set once per client. */
export interface PaymentLimits {
  /** The most one call may cost (the option `maxPaymentPerCall`). */
  readonly maxPaymentUnits: bigint;
  /** The most the client may spend over all its calls (the option `budget`); undefined for no limit. */
  readonly budgetUnits: bigint | undefined;
  /** The most spent over any rolling day, as the client's spend log counts it (`maxPerDay`); undefined for none. */
  readonly maxPerDayUnits?: bigint | undefined;
  /** The most one deposit into a payment channel may put in (`maxDeposit`); undefined for no limit. */
  readonly maxDepositUnits?: bigint | undefined;
}

/** Which limit a payment would pass: the option that sets it. */
export type SpendLimitName = "maxPaymentPerCall" | "maxDeposit" | "maxPerDay" | "budget";

/** A limit a payment would pass: which one, how large it is, and by how much. */
export interface LimitExceeded {
  limit: SpendLimitName;
  /** The price quoted, or for `maxDeposit` the deposit the call would make, in units. */
  amountUnits: bigint;
  /** The limit, in units. */
  limitUnits: bigint;
  /** What counted against the limit before this call (0 for the per-call and per-deposit limits). */
  spentUnits: bigint;
  /** How far past the limit paying would go, in units. */
  overByUnits: bigint;
}

/** Parameters of {@link checkLimits}: a price, the deposit it needs, the caller's limits, and what is spent. */
export interface CheckLimitsParameters {
  amountUnits: bigint;
  /** What the call would deposit into a payment channel (0 or undefined: none). */
  depositUnits?: bigint;
  limits: PaymentLimits;
  /** This client's calls so far, held ones included. */
  spentUnits: bigint;
  /** The rolling day's charges in the spend log, held ones included. */
  spentTodayUnits?: bigint;
}
/** What {@link checkLimits} returns: the first limit the payment would pass, or undefined when it passes none. */
export type CheckLimitsReturnType = LimitExceeded | undefined;

/** A deposit over `maxDeposit`, or undefined (no deposit, no such limit, or within it). */
export function depositOverLimit(depositUnits: bigint, limits: PaymentLimits): LimitExceeded | undefined {
  const limitUnits = limits.maxDepositUnits;
  if (depositUnits <= 0n || limitUnits === undefined || depositUnits <= limitUnits) return undefined;
  return {
    limit: "maxDeposit",
    amountUnits: depositUnits,
    limitUnits,
    spentUnits: 0n,
    overByUnits: depositUnits - limitUnits,
  };
}

/** The first limit a payment would pass, in this order: per call, per deposit, per rolling day, the budget. */
export function checkLimits({
  amountUnits,
  depositUnits = 0n,
  limits,
  spentUnits,
  spentTodayUnits = 0n,
}: CheckLimitsParameters): CheckLimitsReturnType {
  const over = (limit: SpendLimitName, amount: bigint, limitUnits: bigint | undefined, spent: bigint) =>
    limitUnits !== undefined && spent + amount > limitUnits
      ? { limit, amountUnits: amount, limitUnits, spentUnits: spent, overByUnits: spent + amount - limitUnits }
      : undefined;
  return (
    over("maxPaymentPerCall", amountUnits, limits.maxPaymentUnits, 0n) ??
    depositOverLimit(depositUnits, limits) ??
    over("maxPerDay", amountUnits, limits.maxPerDayUnits, spentTodayUnits) ??
    over("budget", amountUnits, limits.budgetUnits, spentUnits)
  );
}

/** The reason a refusal over each limit gives (`PaymentRequiredError.reason`). */
export const LIMIT_REASONS = {
  maxPaymentPerCall: "over_max_payment",
  maxDeposit: "over_max_deposit",
  maxPerDay: "over_daily_limit",
  budget: "over_budget",
} as const satisfies Record<SpendLimitName, string>;

/** The sentence of a refusal over a limit, naming the limit with `name`. */
export function limitSentence(tool: string, exceeded: LimitExceeded, name: (limit: string) => string): string {
  const usd = unitsToUsd;
  const { amountUnits, limitUnits, spentUnits, overByUnits } = exceeded;
  const over = `${usd(overByUnits)} USD over`;
  switch (exceeded.limit) {
    case "maxPaymentPerCall":
      return `${tool} costs ${usd(amountUnits)} USD, above ${name(usd(limitUnits))} (${over}); nothing was paid.`;
    case "maxDeposit":
      return `${tool} would deposit ${usd(amountUnits)} USD into a payment channel, above ${name(usd(limitUnits))} (${over}); nothing was signed.`;
    case "maxPerDay":
      return `${tool} costs ${usd(amountUnits)} USD and ${usd(spentUnits)} USD was spent in the last 24 hours, against ${name(usd(limitUnits))} (${over}); nothing was paid.`;
    case "budget":
      return `${tool} costs ${usd(amountUnits)} USD and ${usd(spentUnits)} USD of ${name(usd(limitUnits))} is spent (${over}); nothing was paid.`;
  }
}

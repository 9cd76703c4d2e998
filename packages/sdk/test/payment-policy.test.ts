/**
 * The payment policy on its own, with no transport: the order of its checks, which limit a price passes and by how
 * much, and the errors its refusals become (the same for the HTTP and the MCP client).
 */
import type { PaymentRequired } from "@agent-tools/schema";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { PaymentRequiredError } from "../src/errors.js";
import { checkLimits } from "../src/limits.js";
import { decidePayment, paymentLimits, paymentRefusalError, refusedPaymentError } from "../src/payment-policy.js";

/** Public test key of the standard mnemonic (devnet only). */
const account = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");

const quote = (amount: string | undefined, error = "payment_required: no payment came with the request") =>
  ({
    x402Version: 2,
    error,
    resource: { url: "http://agent-tools.test/intel" },
    accepts:
      amount === undefined ? [] : [{ scheme: "exact", network: "eip155:31338", amount, asset: "0x1", payTo: "0x2" }],
  }) as unknown as PaymentRequired;

describe("paymentLimits", () => {
  it("caps a call at 1.00 USD and sets no budget unless told", () => {
    expect(paymentLimits({})).toEqual({ maxPaymentUnits: 1_000_000n, budgetUnits: undefined });
    expect(paymentLimits({ maxPaymentPerCall: "0.5", budget: 2 })).toEqual({
      maxPaymentUnits: 500_000n,
      budgetUnits: 2_000_000n,
    });
  });
});

describe("checkLimits", () => {
  const limits = paymentLimits({ maxPaymentPerCall: "1.00", budget: "1.50" });
  it("names the first limit passed and by how much: the per-call cap, then the budget", () => {
    expect(checkLimits({ amountUnits: 2_000_000n, limits, spentUnits: 0n })).toEqual({
      limit: "maxPaymentPerCall",
      amountUnits: 2_000_000n,
      limitUnits: 1_000_000n,
      spentUnits: 0n,
      overByUnits: 1_000_000n,
    });
    expect(checkLimits({ amountUnits: 1_000_000n, limits, spentUnits: 1_000_000n })).toMatchObject({
      limit: "budget",
      limitUnits: 1_500_000n,
      overByUnits: 500_000n,
    });
    expect(checkLimits({ amountUnits: 500_000n, limits, spentUnits: 1_000_000n })).toBeUndefined();
  });

  it("checks a call's deposit and the rolling day too: per call, per deposit, per day, then the budget", () => {
    const all = paymentLimits({ maxPaymentPerCall: "1.00", maxDeposit: "2.00", maxPerDay: "3.00", budget: "4.00" });
    const limitOf = (p: Partial<Parameters<typeof checkLimits>[0]>) =>
      checkLimits({ amountUnits: 10_000n, limits: all, spentUnits: 0n, ...p })?.limit;
    // Every limit passed at once: the per-call one is named.
    const everything = { depositUnits: 5_000_000n, spentTodayUnits: 9_000_000n, spentUnits: 9_000_000n };
    expect(limitOf({ ...everything, amountUnits: 2_000_000n })).toBe("maxPaymentPerCall");
    expect(limitOf({ depositUnits: 2_000_001n, spentTodayUnits: 9_000_000n, spentUnits: 9_000_000n })).toBe(
      "maxDeposit",
    );
    expect(limitOf({ depositUnits: 2_000_000n, spentTodayUnits: 2_995_000n, spentUnits: 9_000_000n })).toBe(
      "maxPerDay",
    );
    expect(limitOf({ spentTodayUnits: 2_990_000n, spentUnits: 3_995_000n })).toBe("budget");
    // At each limit exactly, nothing is passed.
    expect(limitOf({ depositUnits: 2_000_000n, spentTodayUnits: 2_990_000n, spentUnits: 3_990_000n })).toBeUndefined();
    expect(checkLimits({ amountUnits: 10_000n, depositUnits: 3_000_000n, limits: all, spentUnits: 0n })).toMatchObject({
      limit: "maxDeposit",
      amountUnits: 3_000_000n,
      limitUnits: 2_000_000n,
      overByUnits: 1_000_000n,
    });
  });
});

describe("decidePayment", () => {
  const limits = paymentLimits({ maxPaymentPerCall: "1.00", budget: "1.50" });
  const decide = (q: PaymentRequired, spentUnits = 0n) => decidePayment({ quote: q, limits, spentUnits, account });

  it("pays the quote's first requirement within the limits", () => {
    expect(decide(quote("10000"))).toMatchObject({ pay: true, amountUnits: 10_000n, account });
  });

  it("checks in order: the service's refusal, the price, the cap, the budget, the account", () => {
    const reason = (q: PaymentRequired, spentUnits?: bigint) => {
      const decision = decide(q, spentUnits);
      return decision.pay ? "pay" : decision.refusal.reason;
    };
    expect(reason(quote("10000", "invalid_siwx: the sign-in is too old"))).toBe("invalid_siwx");
    expect(reason(quote(undefined, ""))).toBe("no_price");
    expect(reason(quote(undefined, "sign_in_required: sign in"))).toBe("sign_in_required");
    expect(reason(quote("2000000"))).toBe("over_max_payment");
    expect(reason(quote("1000000"), 1_000_000n)).toBe("over_budget");
    expect(reason(quote("1000000"))).toBe("pay");
    // Limits come before the account: a client with none still learns that the price is above its cap.
    const anonymous = (q: PaymentRequired) => {
      const decision = decidePayment({ quote: q, limits, spentUnits: 0n, account: undefined });
      return decision.pay ? "pay" : decision.refusal.reason;
    };
    expect(anonymous(quote("2000000"))).toBe("over_max_payment");
    expect(anonymous(quote("10000"))).toBe("no_account");
    // A quote whose reason this client does not know (another service's) is read as a price.
    expect(reason(quote("10000", "X-PAYMENT header is required"))).toBe("pay");
  });
});

describe("refusal errors", () => {
  const limits = paymentLimits({ maxPaymentPerCall: "0.50" });
  const refusalOf = (q: PaymentRequired) => {
    const decision = decidePayment({ quote: q, limits, spentUnits: 0n, account });
    if (decision.pay) throw new Error("expected a refusal");
    return decision.refusal;
  };

  it("are PaymentRequiredErrors with the quote and reason; only the cap's name differs by wording", () => {
    const q = quote("1000000");
    const option = paymentRefusalError({ tool: "intel", quote: q, refusal: refusalOf(q), capWording: "option" });
    const plain = paymentRefusalError({ tool: "intel", quote: q, refusal: refusalOf(q), capWording: "plain" });
    for (const error of [option, plain]) {
      expect(error).toBeInstanceOf(PaymentRequiredError);
      expect(error.reason).toBe("over_max_payment");
      expect(error.quote).toBe(q);
    }
    expect(option.message).toBe(
      "intel costs 1.00 USD, above maxPaymentPerCall 0.50 USD (0.50 USD over); nothing was paid.",
    );
    expect(plain.message).toBe(
      "intel costs 1.00 USD, above the 0.50 USD per call allowed (0.50 USD over); nothing was paid.",
    );
    expect(option.limit).toEqual({
      limit: "maxPaymentPerCall",
      amountUnits: 1_000_000n,
      limitUnits: 500_000n,
      spentUnits: 0n,
      overByUnits: 500_000n,
    });
  });

  it("carry the service's reason for a payment it refused", () => {
    const refused = refusedPaymentError(quote(undefined, "payment_already_used: this authorization bought a call"));
    expect(refused.reason).toBe("payment_already_used");
    expect(refused.message).toBe("The payment was refused: this authorization bought a call");
  });
});

import type { PaymentTerms } from "@agent-tools/schema";
import type { Logger } from "pino";
import type { Address } from "viem";
import type { CallLimiter } from "../limits/call-limiter.js";
import type { FailureBudget } from "../limits/failure-budget.js";
import type { Facilitator } from "../settlement/facilitator.js";
import type { SettlementsAhead } from "../settlement/settlement-batcher.js";
import type { ChannelStore } from "../store/channels.js";
import type { SettlementLedger } from "../store/settlement-ledger.js";
import type { SignInNonceStore } from "../store/sign-in-nonces.js";
import type { PaymentSchemes } from "./payment-scheme.js";
import type { ReceiptIssuer } from "./receipts.js";
import type { ReplayGuard } from "./replay-guard.js";

/** Everything the payment steps share: terms, facilitator, ledger, replay guards, sign-in settings. */
export interface PaymentService {
  publicUrl: string;
  terms: PaymentTerms;
  facilitator: Facilitator;
  /** EIP-3009 authorizations in flight or settled, in this instance (a fast first check). */
  payments: ReplayGuard;
  /**
   * The payer's balance of the payment asset, read when it has other payments in flight: the balance must cover
   * them all, so that concurrent authorizations cannot buy more work than the payer can pay for.
   */
  payerBalance(payer: Address): Promise<bigint>;
  /** Paid calls per payer, in flight and per second, in this instance: past them, 429 before anything runs. */
  payerLimits: CallLimiter;
  /** The payment schemes the service takes, by name (`accepts[].scheme`): what is particular to each. */
  schemes: PaymentSchemes;
  /** Each payer's failed settlements: past the budget, its payments are refused before any tool runs. */
  settlementFailures: FailureBudget;
  /** The durable record of payments: claimed before a call runs, settled before its answer leaves. */
  ledger: SettlementLedger;
  /** SIWX nonces of calls in flight or served, shared by every instance and kept across restarts. */
  signIns: SignInNonceStore;
  /** CAIP-2 chains accepted in sign-in messages. */
  signInChains: string[];
  anonymousAccess: boolean;
  /**
   * Paid requests that came and whose settlement is not asked for yet (nor refused or released): a settlement
   * batch waits for these, and leaves once none is left (../settlement/settlement-batcher.ts).
   */
  settlementsAhead: SettlementsAhead;
  /** The payment channels' store, when the service takes channels (the report shows their money). */
  channels?: ChannelStore;
  /** Signs each 402's offer and each settled call's receipt; absent when no signer key is configured. */
  receipts?: ReceiptIssuer;
  now: () => Date;
  /** Where settlement trouble is reported. */
  logger?: Logger;
}

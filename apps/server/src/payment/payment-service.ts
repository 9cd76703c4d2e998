import type { PaymentTerms } from "@agent-tools/schema";
import type { Logger } from "pino";
import type { SettlementLedger } from "../store/settlement-ledger.js";
import type { SignInNonceStore } from "../store/sign-in-nonces.js";
import type { Facilitator } from "./facilitator.js";
import type { ReplayGuard } from "./replay-guard.js";

/** Everything the payment steps share: terms, facilitator, ledger, replay guards, sign-in settings. */
export interface PaymentService {
  publicUrl: string;
  terms: PaymentTerms;
  facilitator: Facilitator;
  /** EIP-3009 authorizations in flight or settled, in this instance (a fast first check). */
  payments: ReplayGuard;
  /** The durable record of payments: claimed before a call runs, settled before its answer leaves. */
  ledger: SettlementLedger;
  /** SIWX nonces of calls in flight or served, shared by every instance and kept across restarts. */
  signIns: SignInNonceStore;
  /** CAIP-2 chains accepted in sign-in messages. */
  signInChains: string[];
  anonymousAccess: boolean;
  now: () => Date;
  /** Where settlement trouble is reported. */
  logger?: Logger;
}

import type { LocalAccount } from "viem";
import type { ChannelPayer } from "./channels.js";
import type { PaymentLimits } from "./limits.js";
import type { Spending } from "./spending.js";
import type { Transport } from "./transport.js";

/**
 * What every action of the client works with: how it reaches the service, who signs in and pays, and what the
 * client has learnt from the service's answers. `createAgentToolsClient` makes one and binds the actions to it.
 */
export interface ClientContext {
  readonly transport: Transport;
  /** Signs in (holder price) and pays; without one, only public routes and quotes work. */
  readonly account: LocalAccount | undefined;
  /** Whether paid calls sign in with the account. */
  readonly signIn: boolean;
  /** The caller's limits on spending: per call, per deposit, per rolling day, over all the client's calls. */
  readonly limits: PaymentLimits;
  /** What the client's paid calls have cost so far, and the log of the rolling day's charges. */
  readonly spending: Spending;
  /** Pays over x402 `batch-settlement` channels where the service offers them (the option `channels`). */
  readonly channels?: ChannelPayer;
  /** Pays with x402's `upto` where the service offers it and no channel is paid (the option `upto`). */
  readonly upto?: boolean;
  /** The only address whose receipts the client accepts, when the caller names one. */
  readonly receiptSigner?: string;
  /** Chains learnt from the service's challenges, remembered for the client's later calls. */
  readonly learnt: {
    /** The chain the paid routes take sign-ins on (from the first 402's `sign-in-with-x` extension). */
    signInChain?: string;
    /** The chain the operator routes take sign-ins on (from the first 401's `WWW-Authenticate`). */
    operatorChain?: string;
  };
}

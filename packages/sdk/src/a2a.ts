/**
 * `@agent-tools/sdk/a2a`: the service's tools as skills of an A2A agent (`/a2a`), paid per call with x402 over A2A
 * (coinbase/x402 `specs/transports-v2/a2a.md`, the x402 A2A extension's metadata keys), under the same payment policy
 * as the HTTP and MCP clients: every limit is checked before anything is signed. It speaks A2A through `@a2a-js/sdk`.
 */
import { SendMessageRequest, type Task, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from "@a2a-js/sdk/client";
import {
  A2A_PATH,
  A2A_PAYMENT_META,
  A2A_PAYMENT_STATUS,
  A2A_SIGN_IN_META,
  type PaymentRequired,
  X402_A2A_EXTENSION_URIS,
} from "@agent-tools/schema";
import type { LocalAccount } from "viem";
import { payDecided } from "./channel-payment.js";
import { type ChannelOptions, createChannelPayer } from "./channels.js";
import { NetworkError } from "./errors.js";
import { type Payment, type SettlementFields, unitsToUsd } from "./payment.js";
import {
  decideCallPayment,
  learnSignInChain,
  type PaymentLimitsOptions,
  paymentLimits,
  paymentRefusalError,
  refusedPaymentError,
  settledPayment,
  signInFor,
} from "./payment-policy.js";
import { type SpendLog, spendingFor } from "./spending.js";
import { networkReason } from "./transport.js";

export { PaymentRequiredError } from "./errors.js";
export type { Payment } from "./payment.js";

/** How to create an A2A client: the service, who signs in and pays, and the limits on spending. */
export interface A2aClientOptions extends PaymentLimitsOptions {
  /** The service's origin, for example `http://127.0.0.1:8402`; its agent card is at `/.well-known/agent-card.json`. */
  baseUrl: string;
  /** A viem local account: it signs in (holder price) and pays. Without one, only quotes work. */
  account?: LocalAccount;
  /** Where the rolling day's charges are kept for `maxPerDay` (default: in memory). */
  spendLog?: SpendLog;
  /**
   * Pay over x402 `batch-settlement` channels where the service offers them, as the HTTP and MCP clients do (their
   * option `channels`): one deposit, then a voucher per skill call. Share a `storage` with them to use one channel.
   */
  channels?: ChannelOptions | boolean;
  /** Pay with x402's `upto` where the service offers it and no channel is paid, as the HTTP client does (its option `upto`). */
  upto?: boolean;
  /** Sign in with the account so holders pay the discounted price (default true). */
  signIn?: boolean;
  /** The address whose signed receipts to accept (the payment catalog's `receiptSigner`); see the HTTP client's. */
  receiptSigner?: string;
  /** A fetch implementation; defaults to the global one. */
  fetch?: typeof globalThis.fetch;
}

/**
 * A skill call's outcome: the task as the agent ended it, the answer (the HTTP route's answer, from the task's
 * artifact; null unless the task completed), and what it cost (null for a call that failed: nothing was charged).
 */
export interface A2aCallResult {
  task: Task;
  answer: unknown;
  payment: Payment | null;
}

/** A client of the service's A2A agent that pays for skills (x402's A2A extension) and signs in. */
export interface AgentToolsA2aClient {
  /**
   * Asks for a skill (`intel`, `drop_radar`, ...: the agent card's ids) with its input: quoted, checked against the
   * limits, paid and sent on the task. A task the agent rejected or failed for a reason no payment changes (bad
   * input, an upstream failure: nothing charged) is returned as it ended; a payment this client will not make, or
   * the agent refuses, throws `PaymentRequiredError`.
   */
  callSkill(skill: string, input: Record<string, unknown>): Promise<A2aCallResult>;
  /** What this client has paid so far, in USD. */
  spentUsd(): string;
}

/** The x402 metadata of a task's status message. */
const metadataOf = (task: Task): Record<string, unknown> => task.status?.message?.metadata ?? {};

/** The `PaymentRequired` of a task waiting for payment, or of one whose payment was refused. */
function paymentRequiredOf(task: Task): PaymentRequired | undefined {
  const metadata = metadataOf(task);
  const status = metadata[A2A_PAYMENT_META.status];
  if (status !== A2A_PAYMENT_STATUS.required && status !== A2A_PAYMENT_STATUS.failed) return undefined;
  return metadata[A2A_PAYMENT_META.required] as PaymentRequired | undefined;
}

/** The settlement of a task's payment, when the task completed and its receipt says it was taken. */
function settlementOf(task: Task): SettlementFields | undefined {
  if (task.status?.state !== TaskState.TASK_STATE_COMPLETED) return undefined;
  const [receipt] = (metadataOf(task)[A2A_PAYMENT_META.receipts] ?? []) as (SettlementFields & {
    success?: boolean;
  })[];
  return receipt && receipt.success !== false ? receipt : undefined;
}

/** The answer a completed task holds in its artifact's data part. */
function answerOf(task: Task): unknown {
  if (task.status?.state !== TaskState.TASK_STATE_COMPLETED) return null;
  const parts = task.artifacts?.[0]?.parts ?? [];
  return parts.find((part) => part.content?.$case === "data")?.content?.value ?? null;
}

/** Connects to the service's A2A agent, found by its card. */
export async function connectA2aClient(options: A2aClientOptions): Promise<AgentToolsA2aClient> {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const endpoint = `${baseUrl}${A2A_PATH}`;
  const limits = paymentLimits(options);
  const spending = spendingFor(options);
  const channels =
    options.channels && options.account
      ? createChannelPayer(options.account, options.channels === true ? {} : options.channels)
      : undefined;
  const { account } = options;
  const signIn = options.signIn ?? true;
  let signInChain: string | undefined;

  const fetchImpl = options.fetch;
  const factory = fetchImpl
    ? new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new JsonRpcTransportFactory({ fetchImpl })],
          cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
        }),
      )
    : new ClientFactory();
  let agent: Client;
  try {
    agent = await factory.createFromUrl(baseUrl);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    throw new NetworkError(`Could not reach ${baseUrl}: ${networkReason(error)}.`, { cause: error });
  }
  // Every message activates x402's A2A extension, in its latest version.
  const x402 = { serviceParameters: ServiceParameters.create(withA2AExtensions(X402_A2A_EXTENSION_URIS["0.2"])) };
  /** Sends a user message, written in A2A's JSON form; the agent answers every message with a task. */
  const send = async (message: Record<string, unknown>): Promise<Task> => {
    const request = SendMessageRequest.fromJSON({
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", ...message },
    });
    return (await agent.sendMessage(request, x402)) as Task;
  };
  const signedIn = async (): Promise<Record<string, unknown>> => {
    const value = await signInFor({ account, signIn, chainId: signInChain, resource: endpoint });
    return value ? { [A2A_SIGN_IN_META]: value } : {};
  };

  return {
    async callSkill(skill, input) {
      const ask = async () => send({ parts: [{ data: { skill, input } }], metadata: await signedIn() });
      // Sign in (a holder is quoted the holder price), ask, and learn the sign-in chain from the first quote.
      let task = await ask();
      let quote = paymentRequiredOf(task);
      const learnt = quote && learnSignInChain({ account, signIn, chainId: signInChain, quote });
      if (learnt) {
        signInChain = learnt;
        task = await ask();
        quote = paymentRequiredOf(task);
      }
      if (!quote || task.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
        return { task, answer: answerOf(task), payment: null };
      }

      // The payment policy decides, before anything is signed; this transport carries its values in metadata.
      const { decision, hold } = await decideCallPayment({
        quote,
        limits,
        spending,
        account,
        channels,
        upto: options.upto,
      });
      if (!decision.pay)
        throw paymentRefusalError({ tool: skill, quote, refusal: decision.refusal, capWording: "plain" });
      const { requirement } = decision;
      try {
        // The first payment goes on the task that waits for it; one signed again (a channel's corrective 402 failed
        // that task) goes with the skill's input on a task of its own.
        let waiting: string | undefined = task.id;
        const sendPaid = async (payment: unknown) => {
          const on = waiting ? { taskId: waiting } : { parts: [{ data: { skill, input } }] };
          waiting = undefined;
          return send({
            ...on,
            metadata: {
              ...(await signedIn()),
              [A2A_PAYMENT_META.status]: A2A_PAYMENT_STATUS.submitted,
              [A2A_PAYMENT_META.payload]: payment,
            },
          });
        };
        const { answer: paid } = await payDecided({
          tool: skill,
          quote,
          requirement,
          account: decision.account,
          channels: channels,
          limits,
          capWording: "plain",
          send: sendPaid,
          outcomeOf: (answer) => ({ settlement: settlementOf(answer), paymentRequired: paymentRequiredOf(answer) }),
        });
        const refused = paymentRequiredOf(paid);
        if (refused) throw refusedPaymentError(refused);
        const settlement = settlementOf(paid);
        if (!settlement) return { task: paid, answer: answerOf(paid), payment: null };
        const answer = answerOf(paid);
        const payment = await settledPayment(
          hold,
          settlement,
          {
            quote,
            requirement,
            payer: decision.account.address,
            ...(options.receiptSigner ? { receiptSigner: options.receiptSigner } : {}),
          },
          answer,
        );
        return { task: paid, answer, payment };
      } finally {
        hold.release();
      }
    },
    spentUsd: () => unitsToUsd(spending.spentUnits),
  };
}

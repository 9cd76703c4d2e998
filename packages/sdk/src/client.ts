import { type PaidRouteName, type ToolName, toolRoutes } from "@agent-tools/schema";
import type { LocalAccount } from "viem";
import { type CallToolParameters, type CallToolReturnType, callTool } from "./actions/call-tool.js";
import {
  type ListChannelsReturnType,
  listChannels,
  type RefundChannelParameters,
  type RefundChannelReturnType,
  refundChannel,
} from "./actions/channels.js";
import { type CreateConsoleLinkReturnType, createConsoleLink } from "./actions/console-link.js";
import {
  type ExportLedgerParameters,
  type ExportLedgerReturnType,
  exportLedger,
  type GetLedgerPageParameters,
  type GetLedgerPageReturnType,
  type GetLedgerParameters,
  type GetLedgerReturnType,
  getLedger,
  getLedgerPage,
  type RecordRefundParameters,
  type RecordRefundReturnType,
  recordRefund,
} from "./actions/ledger.js";
import {
  type DispatchParameters,
  type DispatchReturnType,
  dispatch,
  type ListMissionsParameters,
  type ListMissionsReturnType,
  listMissions,
} from "./actions/missions.js";
import {
  type GetAgentReturnType,
  type GetBindingReturnType,
  type GetCatalogReturnType,
  type GetHealthReturnType,
  type GetOpenApiReturnType,
  type GetRegistrationReturnType,
  getAgent,
  getBinding,
  getCatalog,
  getHealth,
  getOpenApi,
  getRegistration,
} from "./actions/public.js";
import {
  type WithdrawChannelParameters,
  type WithdrawChannelReturnType,
  withdrawChannel,
} from "./actions/withdraw-channel.js";
import { type ChannelOptions, createChannelPayer } from "./channels.js";
import type { ClientContext } from "./context.js";
import { paymentLimits } from "./payment-policy.js";
import { type SpendLog, spendingFor } from "./spending.js";
import { createTransport } from "./transport.js";
import { unitsToUsd } from "./units.js";

/** How to create a client: the service, and who signs in and pays. */
export interface AgentToolsClientOptions {
  /** Origin of the service, for example `http://127.0.0.1:8402`. */
  baseUrl: string;
  /** A viem local account: it signs in (holder price) and pays. Without one, only public routes and quotes work. */
  account?: LocalAccount;
  /** The most the client pays for one call, in USD (default "1.00", the highest price). Checked before signing. */
  maxPaymentPerCall?: string | number;
  /**
   * The most the client pays over all its calls, in USD (default: no limit): a quote that would take it past this is
   * refused before signing (`PaymentRequiredError`, reason `over_budget`). See {@link AgentToolsClient.spentUsd}.
   */
  budget?: string | number;
  /**
   * The most the client pays over any rolling 24 hours, in USD (default: no limit), counted in `spendLog`: a quote
   * that would take the day past it is refused before signing (`over_daily_limit`). Deposits into channels do not
   * count (a refund gives them back): `maxDeposit` limits them.
   */
  maxPerDay?: string | number;
  /**
   * The most one deposit into a payment channel may put in, in USD (default: no limit): a call whose channel would
   * need a larger deposit is refused before signing (`over_max_deposit`).
   */
  maxDeposit?: string | number;
  /**
   * Where the client keeps its dated charges for `maxPerDay` (default: in memory, so the day is this process's).
   * Share one log between clients, or keep it in a file, for the limit to hold across them.
   */
  spendLog?: SpendLog;
  /**
   * Pay over x402 `batch-settlement` channels where the service offers them: the first call deposits
   * (`deposit`, default 1.00 USD), later calls sign a voucher each, with no transaction and no wait for a block.
   * `true` takes the defaults; keep the channels' state across restarts with a `storage` of your own. Without it,
   * every call pays with `exact`, a transfer of its own. Needs an account.
   */
  channels?: ChannelOptions | boolean;
  /**
   * Pay with x402's `upto` where the service offers it and no channel is paid: each call signs a Permit2 permit of up
   * to its price and is charged the work its answer took (a one-time Permit2 approval of the asset by the account
   * first). The limits count each call at its price, which the permit lets the service take. Without it, `exact`.
   */
  upto?: boolean;
  /** Sign in with the account so holders pay the discounted price (default true); false calls anonymously. */
  signIn?: boolean;
  /** A fetch implementation; defaults to the global one. */
  fetch?: typeof globalThis.fetch;
  /**
   * The address whose signed receipts to accept (the `receiptSigner` of the service's payment catalog). Without it, a
   * receipt must be signed by the key that signed the offer of the price paid.
   */
  receiptSigner?: string;
}

/**
 * One method per paid tool, named after it (`intel`, `dropRadar`, ...): validates the input locally, pays the
 * quoted price (the holder price when signed in), and resolves with the answer and the payment.
 */
type ToolMethods = {
  [N in ToolName]: (input: CallToolParameters<N>["input"]) => Promise<CallToolReturnType<N>>;
};

/**
 * The client of the Agent Tools API: the seven tools (see {@link ToolMethods}), the mission queue, the operator's
 * ledger and console links, and the public records. Every request is sent again on a network failure (a paid one with the same signed
 * payment, so a call is never paid twice); every error is an `AgentToolsError` with a `code`.
 */
export interface AgentToolsClient extends ToolMethods {
  /**
   * `POST /dispatch`: queues a mission, a deferred run of one of the tools for the agent (`runAt`, ISO-8601 UTC,
   * now when left out; at most 30 days ahead). Paid like the tools (Elite clearance for the holder price); the
   * service answers 202 with the mission, queued. `mission.params` is checked against the tool's own request
   * fields before anything is sent. An unrevealed agent gets `ForbiddenError` with code `agent_not_revealed`.
   * Like every call, sent again after a network failure with the same signed payment: one mission at most.
   * @example
   * const { data } = await client.dispatch({ tokenId: 5, mission: { tool: "drop-radar", params: { limit: 5 } } });
   * console.log(data.mission.id, data.mission.status); // "…", "queued"
   */
  dispatch(input: DispatchParameters): Promise<DispatchReturnType>;
  /**
   * `GET /dispatch`: the agent's missions, newest first, with their status, result or error, and counts by status
   * (`status` filters, `limit` 1 to 100). Paid like the tools: each call is charged.
   * @example
   * const { data } = await client.missions({ tokenId: 5, status: "done" });
   */
  missions(input: ListMissionsParameters): Promise<ListMissionsReturnType>;
  /**
   * `GET /operator/ledger`: the operator's report of settled payments (totals per route and per day, the latest
   * entries) for `from`..`to` (UTC days, YYYY-MM-DD; the last 30 days by default). Not paid. Always signs in with
   * the account, whatever `signIn` says, with a fresh sign-in per request on the chain the service names; throws
   * `UnauthorizedError` without an account or when the service refuses the sign-in, and `ForbiddenError` (code
   * `not_operator`) when the account is not the operator. Retried on network errors only.
   * @example
   * const report = await operatorClient.ledger({ from: "2026-11-01" });
   * console.log(report.total.payments, report.total.usd);
   */
  ledger(query?: GetLedgerParameters): Promise<GetLedgerReturnType>;
  /**
   * `GET /operator/ledger/entries`: every settled payment of `from`..`to`, a page at a time, oldest first; pass a
   * page's `next` as `after` for the next one (null on the last). Signs in as {@link AgentToolsClient.ledger} does.
   * @example
   * let after: string | undefined;
   * do {
   *   const page = await operatorClient.ledgerEntries({ from: "2026-11-01", ...(after ? { after } : {}) });
   *   for (const entry of page.entries) console.log(entry.settledAt, entry.route, entry.amount);
   *   after = page.next ?? undefined;
   * } while (after);
   */
  ledgerEntries(query?: GetLedgerPageParameters): Promise<GetLedgerPageReturnType>;
  /**
   * `GET /operator/ledger/export`: every settled payment of `from`..`to` as CSV (a header line, then one line per
   * payment, oldest first) or JSON Lines (`format: "jsonl"`), as the service streams it. Signs in as
   * {@link AgentToolsClient.ledger} does.
   * @example
   * const csv = await operatorClient.exportLedger({ from: "2026-11-01", to: "2026-11-30", format: "csv" });
   * const text = await new Response(csv).text(); // or pipe it to a file as it arrives
   */
  exportLedger(query?: ExportLedgerParameters): Promise<ExportLedgerReturnType>;
  /**
   * `POST /operator/refunds`: books a refund the operator made: name the payment as its ledger entry does (`payer`,
   * `nonce`) and the transaction that sent the payment asset from the payee back to the payer. The service reads
   * that transfer from the chain and lists it in the book (`kind: "refund"`), netted in the totals. Recording the
   * same transaction again answers the same refund. Signs in as {@link AgentToolsClient.ledger} does; a refusal is a
   * `ServiceError` whose `code` says why (`refund_transfer_not_found`, `refund_exceeds_payment`, ...).
   * @example
   * const [entry] = (await operatorClient.ledgerEntries({ from: "2026-11-25" })).entries;
   * const { refund, payment } = await operatorClient.recordRefund({
   *   payer: entry!.payer,
   *   nonce: entry!.nonce,
   *   transaction: "0x…", // the hash of your transfer from PAY_TO back to the payer
   *   note: "upstream outage",
   * });
   * console.log(refund.amount, payment.remaining);
   */
  recordRefund(parameters: RecordRefundParameters): Promise<RecordRefundReturnType>;
  /**
   * A one-time link that opens the operator console (`/operator`) signed in as the operator, in any browser, with no
   * wallet there: `<public origin>/operator#sign-in=<SIGN-IN-WITH-X>`. The origin is the one the service names
   * (`GET /operator/session`: its `PUBLIC_URL`), which may differ from `baseUrl`; the sign-in is made for
   * `/operator/session` there, as {@link AgentToolsClient.ledger} makes its own, and rides in the fragment, which a
   * browser never sends to a server. The service takes it once, within its age limit (5 minutes): `expiresAt`. The
   * account is checked first with a signed read of one ledger entry: `ForbiddenError` (code `not_operator`) for any
   * other account, `UnauthorizedError` without one. Until it is used or expires the link is a credential: open it,
   * or hand it only to the browser that should open the console.
   * @example
   * const { url, expiresAt } = await operatorClient.consoleLink();
   * console.log(`Open ${url} before ${expiresAt}; it works once.`);
   */
  consoleLink(): Promise<CreateConsoleLinkReturnType>;
  /**
   * `GET /healthz`: whether the service is up.
   * @example
   * const { ok } = await client.health(); // true
   */
  health(): Promise<GetHealthReturnType>;
  /**
   * `GET /agents/info/:tokenId`: identity record of a revealed agent.
   * @example
   * const agent = await client.agentInfo(1);
   * console.log(agent.name, agent.rarity.tier, agent.clearance);
   */
  agentInfo(tokenId: number): Promise<GetAgentReturnType>;
  /**
   * `GET /.well-known/agents/:tokenId.json`: the agent's ERC-8004 registration file.
   * @example
   * const file = await client.registration(1);
   */
  registration(tokenId: number): Promise<GetRegistrationReturnType>;
  /**
   * `GET /agents/:tokenId/binding`: live ERC-8217 binding status.
   * @example
   * const { bound, owner } = await client.binding(1);
   */
  binding(tokenId: number): Promise<GetBindingReturnType>;
  /**
   * `GET /.well-known/x402`: the payment catalog.
   * @example
   * for (const item of (await client.catalog()).items) console.log(item.resource, item.accepts[0]?.amount);
   */
  catalog(): Promise<GetCatalogReturnType>;
  /**
   * `GET /openapi.json`: the OpenAPI 3.1 document.
   * @example
   * const doc = await client.openapi(); // doc.openapi === "3.1.0"
   */
  openapi(): Promise<GetOpenApiReturnType>;
  /**
   * What this client's paid calls have cost so far, in USD: what counts against `budget`.
   * @example
   * await client.intel({ tokenId: 1 });
   * console.log(client.spentUsd()); // "0.01" for a holder
   */
  spentUsd(): string;
  /**
   * The client's payment channels (option `channels`), as the service's answers left them: balance, charged,
   * claimed and refundable, in units of 6 decimals.
   * @example
   * for (const c of await client.channels()) console.log(c.channelId, c.refundable);
   */
  channels(): Promise<ListChannelsReturnType>;
  /**
   * Takes back what is unspent on the client's channel with this service (x402's cooperative refund, asked through
   * `GET /intel?tokenId=…`); the whole refundable balance unless `amount` says less. Throws `ChannelError` when
   * there is nothing to refund or the service refuses.
   * @example
   * const { refunded, transaction } = await client.refundChannel({ tokenId: 1 });
   */
  refundChannel(parameters: RefundChannelParameters): Promise<RefundChannelReturnType>;
  /**
   * Starts, or once the channel's delay has passed finishes, the payer's timed withdrawal from a channel, on the
   * payment chain (`channels.rpcUrl`) and without the service: for when it does not answer. Sends one transaction
   * from the account, which pays its gas. Throws `ChannelError` when there is nothing to withdraw.
   * @example
   * const step = await client.withdrawChannel();
   * if (step.status === "started") console.log("finish it after", step.finishableAt);
   */
  withdrawChannel(parameters?: WithdrawChannelParameters): Promise<WithdrawChannelReturnType>;
  /** The address that signs in and pays, if any. */
  readonly address: string | undefined;
}

/**
 * Creates a typed client of the Agent Tools API that signs in and pays per call (x402 v2) with `account`.
 * @example
 * import { accountFromPrivateKey, createAgentToolsClient } from "@agent-tools/sdk";
 * const client = createAgentToolsClient({ baseUrl: "http://127.0.0.1:8402", account: accountFromPrivateKey(key) });
 * const { data, payment } = await client.intel({ tokenId: 1 });
 * console.log(data.brief, payment?.amountUsd);
 */
export function createAgentToolsClient(options: AgentToolsClientOptions): AgentToolsClient {
  const context: ClientContext = {
    transport: createTransport({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) }),
    account: options.account,
    signIn: options.signIn ?? true,
    limits: paymentLimits(options),
    spending: spendingFor(options),
    ...(options.receiptSigner ? { receiptSigner: options.receiptSigner } : {}),
    ...(options.channels && options.account
      ? { channels: createChannelPayer(options.account, options.channels === true ? {} : options.channels) }
      : {}),
    ...(options.upto ? { upto: true } : {}),
    learnt: {},
  };
  const tools = Object.fromEntries(
    (Object.keys(toolRoutes) as ToolName[]).map((name) => [
      name,
      (input: never) => callTool(context, { name: name as PaidRouteName, input }),
    ]),
  ) as unknown as ToolMethods;
  return {
    ...tools,
    dispatch: (input) => dispatch(context, input),
    missions: (input) => listMissions(context, input),
    ledger: (query) => getLedger(context, query),
    ledgerEntries: (query) => getLedgerPage(context, query),
    exportLedger: (query) => exportLedger(context, query),
    recordRefund: (parameters) => recordRefund(context, parameters),
    consoleLink: () => createConsoleLink(context),
    health: () => getHealth(context),
    agentInfo: (tokenId) => getAgent(context, { tokenId }),
    registration: (tokenId) => getRegistration(context, { tokenId }),
    binding: (tokenId) => getBinding(context, { tokenId }),
    catalog: () => getCatalog(context),
    openapi: () => getOpenApi(context),
    spentUsd: () => unitsToUsd(context.spending.spentUnits),
    channels: () => listChannels(context),
    refundChannel: (parameters) => refundChannel(context, parameters),
    withdrawChannel: (parameters) => withdrawChannel(context, parameters),
    address: options.account?.address,
  };
}

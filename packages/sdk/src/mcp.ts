/**
 * `@agent-tools/sdk/mcp`: the service's MCP endpoint (`/mcp`) from code, paid per call with x402 over MCP
 * (coinbase/x402 `specs/transports-v2/mcp.md`), under the same payment policy as the HTTP client (its cap per call
 * and budget); and `runStdioBridge`, the local MCP server `agent-tools mcp` runs for desktop agents.
 */
import {
  MCP_PATH,
  MCP_PAYMENT_META,
  MCP_PAYMENT_RESPONSE_META,
  MCP_SIGN_IN_META,
  type PaymentRequired,
} from "@agent-tools/schema";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  CallToolResultSchema,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { LocalAccount } from "viem";
import { payDecided } from "./channel-payment.js";
import { type ChannelOptions, createChannelPayer } from "./channels.js";
import { NetworkError, PaymentRequiredError } from "./errors.js";
import { type Payment, type SettlementFields, UPTO_SCHEME, unitsToUsd, whilePaymentInUse } from "./payment.js";
import {
  decideCallPayment,
  learnSignInChain,
  type PaymentLimitsOptions,
  paymentLimits,
  paymentRefusalError,
  refusedPaymentError,
  settledPayment,
  signInFor,
  type signPayment,
} from "./payment-policy.js";
import { type SpendLog, spendingFor } from "./spending.js";
import { networkReason, withRetries } from "./transport.js";

export { PaymentRequiredError } from "./errors.js";
export type { Payment } from "./payment.js";

/** How to create an MCP client: the service, who signs in and pays, and the caps on spending. */
export interface McpClientOptions extends PaymentLimitsOptions {
  /** The service's origin, for example `http://127.0.0.1:8402`; the endpoint is `<baseUrl>/mcp`. */
  baseUrl: string;
  /** A viem local account: it signs in (holder price) and pays. Without one, only free tools and quotes work. */
  account?: LocalAccount;
  /** Where the rolling day's charges are kept (default: in memory); share it with other clients to share the limit. */
  spendLog?: SpendLog;
  /**
   * Pay over x402 `batch-settlement` channels where the service offers them, as the HTTP client does (its option
   * `channels`): one deposit, then a voucher per call. Keep the state in a `storage` of your own to use a channel
   * across processes, or with the HTTP client.
   */
  channels?: ChannelOptions | boolean;
  /** Pay with x402's `upto` where the service offers it and no channel is paid, as the HTTP client does (its option `upto`). */
  upto?: boolean;
  /** Sign in with the account so holders pay the discounted price (default true). */
  signIn?: boolean;
  /** The address whose signed receipts to accept (the payment catalog's `receiptSigner`); see the HTTP client's. */
  receiptSigner?: string;
}

/** A tool call's result as the service gave it, and what it cost (null for a free tool or a failed call). */
export interface McpCallResult {
  result: CallToolResult;
  payment: Payment | null;
}

/** A client of the service's MCP endpoint that pays for tool calls (x402 over MCP `_meta`) and signs in. */
export interface AgentToolsMcpClient {
  /** The tools, as the service lists them (input and output schemas from its contracts). */
  listTools(): Promise<Tool[]>;
  /**
   * Calls a tool; a paid one is quoted, checked against the caps, paid and sent again. An `isError` result that is
   * not about payment (bad input, upstream failure: nothing charged) is returned as it is; a payment this client
   * will not make, or the service refuses, throws `PaymentRequiredError`.
   */
  callTool(name: string, args?: Record<string, unknown>): Promise<McpCallResult>;
  /** What the session has paid so far, in USD. */
  spentUsd(): string;
  close(): Promise<void>;
}

/**
 * The `PaymentRequired` of an `isError` result, where x402's MCP transport puts it (its tool-result binding):
 * `structuredContent`, or else the JSON of `content[0].text`; undefined when it has none.
 */
export function paymentRequiredOf(result: CallToolResult): PaymentRequired | undefined {
  const isQuote = (value: unknown): value is PaymentRequired =>
    typeof value === "object" && value !== null && "x402Version" in value && "accepts" in value;
  if (!result.isError) return undefined;
  if (isQuote(result.structuredContent)) return result.structuredContent;
  const first = result.content?.[0];
  if (first?.type !== "text") return undefined;
  try {
    const parsed: unknown = JSON.parse(first.text);
    return isQuote(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Connects to the service's MCP endpoint. */
export async function connectMcpClient(options: McpClientOptions): Promise<AgentToolsMcpClient> {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const endpoint = `${baseUrl}${MCP_PATH}`;
  const limits = paymentLimits(options);
  const spending = spendingFor(options);
  const channels =
    options.channels && options.account
      ? createChannelPayer(options.account, options.channels === true ? {} : options.channels)
      : undefined;
  const { account } = options;
  const signIn = options.signIn ?? true;
  let signInChain: string | undefined;

  const client = new Client({ name: "@agent-tools/sdk", version: "1.0.0" });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
  } catch (error) {
    // fetch fails with a TypeError when no answer came at all: a NetworkError, said in words. An answer (an HTTP
    // error, a JSON-RPC one) is passed on as it is.
    if (!(error instanceof TypeError)) throw error;
    throw new NetworkError(`Could not reach ${endpoint}: ${networkReason(error)}.`, { cause: error });
  }

  // `request`, not `callTool`: the MCP SDK's callTool checks an isError result's structuredContent against the
  // tool's output schema from its last listTools; the service's schemas admit the PaymentRequired there, but a call
  // made before any listTools, or to a server whose schemas do not, would throw (docs/decisions.md, "MCP refusals").
  const send = (name: string, args: Record<string, unknown>, meta: Record<string, unknown>) =>
    client.request(
      { method: "tools/call", params: { name, arguments: args, _meta: meta } },
      CallToolResultSchema,
    ) as Promise<CallToolResult>;
  const signedIn = async (): Promise<Record<string, unknown>> => {
    const value = await signInFor({ account, signIn, chainId: signInChain, resource: endpoint });
    return value ? { [MCP_SIGN_IN_META]: value } : {};
  };

  return {
    async listTools() {
      return (await client.listTools()).tools;
    },

    async callTool(name, args = {}) {
      // Sign in (a holder is quoted the holder price), ask, and learn the sign-in chain from the first quote.
      let result = await send(name, args, await signedIn());
      let quote = paymentRequiredOf(result);
      const learnt = quote && learnSignInChain({ account, signIn, chainId: signInChain, quote });
      if (learnt) {
        signInChain = learnt;
        result = await send(name, args, await signedIn());
        quote = paymentRequiredOf(result);
      }
      if (!quote) return { result, payment: null };

      // The payment policy decides, before anything is signed; this transport carries its values in `_meta`.
      const { decision, hold } = await decideCallPayment({
        quote,
        limits,
        spending,
        account,
        channels,
        upto: options.upto,
      });
      if (!decision.pay)
        throw paymentRefusalError({ tool: name, quote, refusal: decision.refusal, capWording: "plain" });
      const { requirement } = decision;
      try {
        // One signed payment for every attempt: sent again after a failure on the network, or while an earlier
        // attempt holds it, it buys one call at most, and its identifier gets the answer it paid for.
        const signedInMeta = await signedIn();
        const sendPaid = (payment: Awaited<ReturnType<typeof signPayment>>) =>
          whilePaymentInUse(
            // No JSON-RPC answer (an McpError is one) is a failure on the network.
            () =>
              withRetries(
                () => send(name, args, { ...signedInMeta, [MCP_PAYMENT_META]: payment }),
                (error) => !(error instanceof McpError),
              ),
            paymentRequiredOf,
          );
        const { answer: paid, overChannel } = await payDecided({
          tool: name,
          quote,
          requirement,
          account: decision.account,
          channels: channels,
          limits,
          capWording: "plain",
          send: sendPaid,
          outcomeOf: (answer) => ({
            settlement: answer._meta?.[MCP_PAYMENT_RESPONSE_META] as SettlementFields | undefined,
            paymentRequired: paymentRequiredOf(answer),
          }),
        });
        const refused = paymentRequiredOf(paid);
        if (refused) throw refusedPaymentError(refused);
        const settlement = paid._meta?.[MCP_PAYMENT_RESPONSE_META] as SettlementFields | undefined;
        if (paid.isError || !settlement) return { result: paid, payment: null };
        // Over a channel the settlement's amount is what the call deposited, over `upto` what it was charged; an
        // `exact` one is the price.
        const settled =
          overChannel || requirement.scheme === UPTO_SCHEME
            ? settlement
            : { ...settlement, amount: requirement.amount };
        const payment = await settledPayment(
          hold,
          settled,
          {
            quote,
            requirement,
            payer: decision.account.address,
            ...(options.receiptSigner ? { receiptSigner: options.receiptSigner } : {}),
          },
          paid,
        );
        return { result: paid, payment };
      } finally {
        hold.release();
      }
    },

    spentUsd: () => unitsToUsd(spending.spentUnits),
    close: () => client.close(),
  };
}

/**
 * A local MCP server on stdin/stdout that offers the service's tools and forwards every call to it, paying with
 * `account` under the caps (`agent-tools mcp`). A payment it will not make is answered as an `isError` result that
 * says why, before anything is signed. Resolves once the bridge is serving; it runs until stdin closes.
 */
export async function runStdioBridge(options: McpClientOptions): Promise<void> {
  const upstream = await connectMcpClient(options);
  const tools = await upstream.listTools();
  const server = new Server({ name: "agent-tools-bridge", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    try {
      const { result } = await upstream.callTool(request.params.name, request.params.arguments ?? {});
      // An error's structured body is not the tool's output: clients that check it against the output schema would
      // fail on it, so the error goes as text.
      return result.isError ? { isError: true, content: result.content } : result;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const reason = error instanceof PaymentRequiredError ? error.reason : undefined;
      return {
        isError: true,
        content: [{ type: "text", text: reason ? `${reason}: ${message}` : message }],
      } satisfies CallToolResult;
    }
  });
  server.onclose = () => void upstream.close();
  await server.connect(new StdioServerTransport());
}

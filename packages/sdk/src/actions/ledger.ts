import {
  inputToQuery,
  LEDGER_ENTRIES_PATH,
  LEDGER_EXPORT_PATH,
  LEDGER_PATH,
  type LedgerExportQuery,
  type LedgerPage,
  type LedgerPageQuery,
  type LedgerQuery,
  type LedgerReport,
  ledgerExportQuerySchema,
  ledgerPageQuerySchema,
  ledgerPageSchema,
  ledgerQuerySchema,
  ledgerReportSchema,
  REFUNDS_PATH,
  type RecordedRefund,
  type RefundRequest,
  recordedRefundSchema,
  refundRequestSchema,
  siwxChallengeChains,
} from "@agent-tools/schema";
import type { z } from "zod";
import type { ClientContext } from "../context.js";
import { UnauthorizedError } from "../errors.js";
import { signInHeader } from "../sign-in.js";
import {
  type Answer,
  errorFromAnswer,
  parseAnswer,
  type StreamedAnswer,
  validateLocally,
  withRetries,
} from "../transport.js";

/** What an operator's sign-in says. */
const OPERATOR_STATEMENT = "Sign in as the operator to read the settlement ledger.";
const REFUND_STATEMENT = "Sign in as the operator to record a refund in the settlement ledger.";

/** Parameters of `client.ledger()`: a range of UTC days (`from`, `to`). */
export type GetLedgerParameters = LedgerQuery;
/** What `client.ledger()` resolves with: the operator's ledger report. */
export type GetLedgerReturnType = LedgerReport;

/** Parameters of `client.ledgerEntries()`: a range of UTC days, where the last page ended, entries per page. */
export type GetLedgerPageParameters = LedgerPageQuery;
/** What `client.ledgerEntries()` resolves with: a page of the book, oldest first, and the next page's `after`. */
export type GetLedgerPageReturnType = LedgerPage;
/** Parameters of `client.exportLedger()`: a range of UTC days and a format (`csv` or `jsonl`). */
export type ExportLedgerParameters = LedgerExportQuery;
/** What `client.exportLedger()` resolves with: the export's bytes, as the service sends them. */
export type ExportLedgerReturnType = ReadableStream<Uint8Array>;
/** Parameters of `client.recordRefund()`: the payment (payer, nonce), the refund's transaction, an optional note. */
export type RecordRefundParameters = RefundRequest;
/** What `client.recordRefund()` resolves with: the refund as the book lists it, and what is left of the payment. */
export type RecordRefundReturnType = RecordedRefund;

/** An operator request: its method and path, its query or JSON body, and what its sign-in says. */
export interface OperatorRequest {
  method: "GET" | "POST";
  path: string;
  schema: z.ZodType;
  /** The query (GET) or the body (POST), checked against `schema` before anything is sent. */
  input: Record<string, unknown>;
  statement?: string;
  /** Hand a 200's body over unread (an export). */
  streamed?: boolean;
  /**
   * The origin the sign-in is made for, when the service names its public origin and it is not the client's
   * `baseUrl` (a service reached on its own machine, signed in for its public name); the request still goes to
   * `baseUrl`.
   */
  signedForOrigin?: string;
}

/**
 * A request to an operator path signed in with a fresh SIWX header per request, on the first chain the service's
 * `WWW-Authenticate` names (learnt from an unsigned request's 401, then remembered). Not paid, and each operator
 * request can be repeated without effect (a refund recorded again is answered as recorded), so the whole exchange
 * is retried on network errors.
 */
export async function operatorRequest(
  context: ClientContext,
  request: OperatorRequest,
): Promise<Answer | StreamedAnswer> {
  const { transport, account, learnt } = context;
  const { method, path, schema, input, streamed = false } = request;
  if (!account) {
    throw new UnauthorizedError(
      "The ledger is the operator's: create the client with the operator's account to sign in.",
      401,
      "sign_in_required",
    );
  }
  validateLocally(schema, input, method === "GET" ? "ledger" : "refund");
  const query = method === "GET" ? inputToQuery(input) : "";
  const url = `${transport.baseUrl}${path}${query}`;
  const signedFor = `${request.signedForOrigin ?? transport.baseUrl}${path}${query}`;
  const ask = async (chain: string | undefined) => {
    const init: RequestInit = {
      method,
      headers: {
        accept: streamed ? "*/*" : "application/json",
        ...(method === "POST" ? { "content-type": "application/json" } : {}),
        ...(chain
          ? { "SIGN-IN-WITH-X": await signInHeader(account, signedFor, chain, request.statement ?? OPERATOR_STATEMENT) }
          : {}),
      },
      ...(method === "POST" ? { body: JSON.stringify(input) } : {}),
    };
    return streamed ? transport.open(url, init) : transport.send(url, init);
  };
  const exchange = async () => {
    let res = await ask(learnt.operatorChain);
    if (res.status === 401 && !learnt.operatorChain) {
      const chain = siwxChallengeChains(res.headers.get("www-authenticate"))[0];
      if (!chain) {
        throw new UnauthorizedError(
          "The service asks for a sign-in but names no EVM chain to sign in on (WWW-Authenticate).",
          401,
          "sign_in_required",
        );
      }
      learnt.operatorChain = chain;
      res = await ask(learnt.operatorChain);
    }
    const ok = res.status === 200 || (method === "POST" && res.status === 201);
    if (!ok || !("stream" in res) === streamed) throw errorFromAnswer(res as Answer);
    return res;
  };
  return withRetries(exchange);
}

/** The operator's ledger report (`GET /operator/ledger`). */
export async function getLedger(context: ClientContext, query: GetLedgerParameters = {}): Promise<GetLedgerReturnType> {
  const answer = (await operatorRequest(context, {
    method: "GET",
    path: LEDGER_PATH,
    schema: ledgerQuerySchema,
    input: query,
  })) as Answer;
  return parseAnswer(ledgerReportSchema, answer, LEDGER_PATH);
}

/** A page of the operator's book (`GET /operator/ledger/entries`). */
export async function getLedgerPage(
  context: ClientContext,
  query: GetLedgerPageParameters = {},
): Promise<GetLedgerPageReturnType> {
  const answer = (await operatorRequest(context, {
    method: "GET",
    path: LEDGER_ENTRIES_PATH,
    schema: ledgerPageQuerySchema,
    input: query,
  })) as Answer;
  return parseAnswer(ledgerPageSchema, answer, LEDGER_ENTRIES_PATH);
}

/** The operator's book of a window as CSV or JSON Lines, as it arrives (`GET /operator/ledger/export`). */
export async function exportLedger(
  context: ClientContext,
  query: ExportLedgerParameters = {},
): Promise<ExportLedgerReturnType> {
  const answer = (await operatorRequest(context, {
    method: "GET",
    path: LEDGER_EXPORT_PATH,
    schema: ledgerExportQuerySchema,
    input: query,
    streamed: true,
  })) as StreamedAnswer;
  return answer.stream;
}

/** Books a refund the operator made for a settled payment (`POST /operator/refunds`). */
export async function recordRefund(
  context: ClientContext,
  parameters: RecordRefundParameters,
): Promise<RecordRefundReturnType> {
  const answer = (await operatorRequest(context, {
    method: "POST",
    path: REFUNDS_PATH,
    schema: refundRequestSchema,
    input: parameters,
    statement: REFUND_STATEMENT,
  })) as Answer;
  return parseAnswer(recordedRefundSchema, answer, REFUNDS_PATH);
}

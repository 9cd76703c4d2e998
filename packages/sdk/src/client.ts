import {
  type AgentInfo,
  agentInfoSchema,
  type BindingStatus,
  bindingStatusSchema,
  type ErrorBody,
  errorDetailsOf,
  type Health,
  healthSchema,
  inputToQuery,
  LEDGER_PATH,
  type LedgerQuery,
  type LedgerReport,
  ledgerQuerySchema,
  ledgerReportSchema,
  type MissionSpec,
  type PaidRouteName,
  type PaymentCatalog,
  type PaymentRequired,
  paidRoutes,
  parsePaymentRefusal,
  paymentCatalogSchema,
  type RegistrationFile,
  registrationFileSchema,
  routeMethod,
  siwxChallengeChains,
  type ToolInput,
  type ToolName,
  type ToolOutput,
  type ToolRoute,
  type TypedMission,
  toolRoutes,
} from "@agent-tools/schema";
import type { LocalAccount } from "viem";
import { z } from "zod";
import {
  ForbiddenError,
  NetworkError,
  NotFoundError,
  PaymentRequiredError,
  ServiceError,
  UnauthorizedError,
  UnexpectedResponseError,
  UpstreamError,
  ValidationError,
} from "./errors.js";
import { type Payment, readPayment, signPayment, unitsToUsd, usdToUnits } from "./payment.js";
import { signInHeader } from "./sign-in.js";

export interface AgentToolsClientOptions {
  /** Origin of the service, for example `http://127.0.0.1:8402`. */
  baseUrl: string;
  /** A viem local account: it signs in (holder price) and pays. Without one, only public routes and quotes work. */
  account?: LocalAccount;
  /** The most the client pays for one call, in USD (default "1.00", the highest price). Checked before signing. */
  maxPaymentPerCall?: string | number;
  /** Sign in with the account so holders pay the discounted price (default true); false calls anonymously. */
  signIn?: boolean;
  /** A fetch implementation; defaults to the global one. */
  fetch?: typeof globalThis.fetch;
}

/** A paid tool's answer and what it cost. */
export interface ToolResult<T> {
  data: T;
  /** The settled payment; null only if the service answered without charging. */
  payment: Payment | null;
}

type ToolMethods = {
  [N in ToolName]: (input: ToolInput<N>) => Promise<ToolResult<ToolOutput<N>>>;
};

/**
 * Body of `POST /dispatch`: the agent, the mission (a tool by its slug and that tool's fields, typed together) and
 * when to run it.
 */
export type DispatchInput = Omit<ToolInput<"dispatch">, "mission"> & { mission: MissionSpec };
/** Answer of `POST /dispatch` (202): the queued mission, typed by its tool, and a brief. */
export type DispatchOutput = Omit<ToolOutput<"dispatch">, "mission"> & { mission: TypedMission };
/** Query of `GET /dispatch`: the agent, optionally a status, and how many missions (1 to 100, default 20). */
export type ListMissionsInput = ToolInput<"missions">;
/** Answer of `GET /dispatch`: the agent's missions, newest first (each typed by its tool), and counts by status. */
export type ListMissionsOutput = Omit<ToolOutput<"missions">, "missions"> & { missions: TypedMission[] };

export interface AgentToolsClient extends ToolMethods {
  /**
   * `POST /dispatch`: queues a mission, a deferred run of one of the tools for the agent (`runAt`, ISO-8601 UTC,
   * now when left out; at most 30 days ahead). Paid like the tools (Elite clearance for the holder price); the
   * service answers 202 with the mission, queued. `mission.params` is checked against the tool's own request
   * fields before anything is sent. An unrevealed agent gets `ForbiddenError` with code `agent_not_revealed`.
   * Like every call, sent again after a network failure with the same signed payment: one mission at most.
   */
  dispatch(input: DispatchInput): Promise<ToolResult<DispatchOutput>>;
  /**
   * `GET /dispatch`: the agent's missions, newest first, with their status, result or error, and counts by status
   * (`status` filters, `limit` 1 to 100). Paid like the tools: each call is charged.
   */
  missions(input: ListMissionsInput): Promise<ToolResult<ListMissionsOutput>>;
  /**
   * `GET /operator/ledger`: the operator's report of settled payments (totals per route and per day, the latest
   * entries) for `from`..`to` (UTC days, YYYY-MM-DD; the last 30 days by default). Not paid. Always signs in with
   * the account, whatever `signIn` says, with a fresh sign-in per request on the chain the service names; throws
   * `UnauthorizedError` without an account or when the service refuses the sign-in, and `ForbiddenError` (code
   * `not_operator`) when the account is not the operator. Retried on network errors only.
   */
  ledger(query?: LedgerQuery): Promise<LedgerReport>;
  /** `GET /healthz`: whether the service is up. */
  health(): Promise<Health>;
  /** `GET /agents/info/:tokenId`: identity record of a revealed agent. */
  agentInfo(tokenId: number): Promise<AgentInfo>;
  /** `GET /.well-known/agents/:tokenId.json`: the agent's ERC-8004 registration file. */
  registration(tokenId: number): Promise<RegistrationFile>;
  /** `GET /agents/:tokenId/binding`: live ERC-8217 binding status. */
  binding(tokenId: number): Promise<BindingStatus>;
  /** `GET /.well-known/x402`: the payment catalog. */
  catalog(): Promise<PaymentCatalog>;
  /** `GET /openapi.json`: the OpenAPI 3.1 document. */
  openapi(): Promise<Record<string, unknown>>;
  /** The address that signs in and pays, if any. */
  readonly address: string | undefined;
}

/**
 * Attempts at a request whose connection fails before a whole answer arrives (refused, reset, cut short): a
 * kept-alive socket that the service or a proxy closes just as a request goes out fails that request, and the
 * next attempt opens a new connection.
 */
const ATTEMPTS = 3;

/** An answer read in full: a body that fails to arrive is a network error, like a request that fails to leave. */
interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

/**
 * Runs `exchange` until it gets past the network, {@link ATTEMPTS} times at most, waiting a little longer before
 * each new attempt. Only a `NetworkError` is retried: an answer, whatever its status, is final.
 */
async function withRetries<T>(exchange: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await exchange();
    } catch (error) {
      if (!(error instanceof NetworkError) || attempt === ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/** What an operator's sign-in says. */
const OPERATOR_STATEMENT = "Sign in as the operator to read the settlement ledger.";

/** Throws `ValidationError`, naming the fields, when `input` is not a valid request of `schema`. */
function validateLocally(schema: z.ZodType, input: unknown, what: string): void {
  const local = schema.safeParse(input);
  if (local.success) return;
  const details = errorDetailsOf(local.error);
  throw new ValidationError(
    `Invalid ${what} request: ${details.map((d) => `${d.field || "body"}: ${d.message}`).join("; ")}.`,
    400,
    "invalid_request",
    details,
  );
}

function errorFromBody(status: number, body: unknown, retryAfter: string | null): Error {
  const error = (body as Partial<ErrorBody> | undefined)?.error;
  if (!error || typeof error !== "object") {
    return new UnexpectedResponseError(`The service answered ${status} without an error body.`, status, body);
  }
  const args = [error.message, status, error.code, error.details ?? []] as const;
  if (status === 400 || status === 413) return new ValidationError(...args);
  if (status === 401) return new UnauthorizedError(...args);
  if (status === 403) return new ForbiddenError(...args);
  if (status === 404) return new NotFoundError(...args);
  if (status >= 500) return new UpstreamError(...args, retryAfter ? Number(retryAfter) : undefined);
  return new ServiceError(...args);
}

/** Creates a typed client of the Agent Tools API that signs in and pays per call (x402 v2) with `account`. */
export function createAgentToolsClient(options: AgentToolsClientOptions): AgentToolsClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const cap = usdToUnits(options.maxPaymentPerCall ?? "1.00");
  const { account } = options;
  const signIn = options.signIn ?? true;
  /** Chain the service accepts sign-ins on, learnt from its first challenge. */
  let signInChain: string | undefined;
  /** Chain the operator routes accept sign-ins on, learnt from their first 401. */
  let operatorChain: string | undefined;

  /** One request and its whole answer; a failure of either on the network is a `NetworkError`. */
  async function send(url: string, init: RequestInit): Promise<Answer> {
    let res: Response;
    let text: string;
    try {
      res = await fetchImpl(url, init);
      text = await res.text();
    } catch (error) {
      throw new NetworkError(`Could not reach ${baseUrl}: ${(error as Error).message}`, { cause: error });
    }
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      throw new UnexpectedResponseError(
        `The service answered ${res.status} with a body that is not JSON.`,
        res.status,
        text,
      );
    }
    return { status: res.status, headers: res.headers, body };
  }

  function parseWith<S extends z.ZodType>(schema: S, status: number, body: unknown, what: string): z.output<S> {
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      throw new UnexpectedResponseError(
        `${what} does not match the contract: ${parsed.error.issues[0]?.message}`,
        status,
        body,
      );
    }
    return parsed.data;
  }

  /** A public GET, safe to repeat: sent again on network errors. */
  async function getPublic<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
    const res = await withRetries(() => send(`${baseUrl}${path}`, { headers: { accept: "application/json" } }));
    if (res.status !== 200) throw errorFromBody(res.status, res.body, res.headers.get("retry-after"));
    return parseWith(schema, res.status, res.body, path);
  }

  /**
   * One paid call: validate locally, ask (signed in when there is an account), check the quote against the cap,
   * pay, and read the answer. A GET route sends its input as query parameters, other routes as a JSON body; the
   * route's `successStatus` (200 unless it says 202) is the answer that counts. A request that fails on the
   * network is sent again as it was: the paid one with the same signed payment, which buys one call at most, so
   * nothing is ever paid twice.
   */
  async function callPaid<N extends PaidRouteName>(name: N, input: ToolInput<N>): Promise<ToolResult<ToolOutput<N>>> {
    const route: ToolRoute = paidRoutes[name];
    validateLocally(route.request, input, name);
    const isGet = routeMethod(route) === "GET";
    const url = `${baseUrl}${route.path}${isGet ? inputToQuery(input as Record<string, unknown>) : ""}`;
    const successStatus: number = ("successStatus" in route ? route.successStatus : undefined) ?? 200;
    const body = isGet ? undefined : JSON.stringify(input);
    const ask = (headers: Record<string, string>) =>
      withRetries(() =>
        send(
          url,
          isGet
            ? { method: "GET", headers: { accept: "application/json", ...headers } }
            : {
                method: "POST",
                headers: { "content-type": "application/json", accept: "application/json", ...headers },
                body,
              },
        ),
      );
    const parseAnswer = (status: number, answer: unknown) =>
      parseWith(route.response, status, answer, name) as ToolOutput<N>;

    const signingIn = account !== undefined && signIn;
    let headers: Record<string, string> = {};
    if (signingIn && signInChain) headers = { "SIGN-IN-WITH-X": await signInHeader(account, url, signInChain) };
    let res = await ask(headers);
    if (signingIn && !signInChain && res.status === 402) {
      // The first call learns which chain the service takes sign-ins on from its challenge, then asks again
      // signed in; later calls sign in on their first request.
      signInChain = pickSignInChain(res.body as PaymentRequired);
      headers = { "SIGN-IN-WITH-X": await signInHeader(account, url, signInChain) };
      res = await ask(headers);
    }
    const first = res.body;
    if (res.status === successStatus) return { data: parseAnswer(res.status, first), payment: null };
    if (res.status !== 402) throw errorFromBody(res.status, first, res.headers.get("retry-after"));

    const quote = first as PaymentRequired;
    const quoted = parsePaymentRefusal(quote.error);
    const requirement = quote.accepts?.[0];
    if (!requirement) {
      throw new PaymentRequiredError(
        `The service asked for payment but quoted no price: ${quote.error ?? ""}`,
        quote,
        quoted.reason ?? "no_price",
      );
    }
    if (signingIn && quoted.reason === "invalid_siwx") {
      throw new PaymentRequiredError(`The service refused the sign-in: ${quoted.message}`, quote, quoted.reason);
    }
    if (BigInt(requirement.amount) > cap) {
      throw new PaymentRequiredError(
        `${name} costs ${unitsToUsd(requirement.amount)} USD, above maxPaymentPerCall ${unitsToUsd(cap)} USD; nothing was paid.`,
        quote,
        "over_max_payment",
      );
    }
    if (!account) {
      throw new PaymentRequiredError(
        `${name} costs ${unitsToUsd(requirement.amount)} USD: pass an account to pay for it.`,
        quote,
        "no_account",
      );
    }

    const paid = await ask({ ...headers, "PAYMENT-SIGNATURE": await signPayment(account, quote, cap) });
    const answer = paid.body;
    if (paid.status === 402) {
      const refused = answer as PaymentRequired;
      const why = parsePaymentRefusal(refused.error);
      throw new PaymentRequiredError(
        `The payment was refused: ${why.message || "no reason given"}`,
        refused,
        why.reason,
      );
    }
    if (paid.status !== successStatus) throw errorFromBody(paid.status, answer, paid.headers.get("retry-after"));
    return {
      data: parseAnswer(paid.status, answer),
      payment: readPayment(paid.headers.get("payment-response"), requirement),
    };
  }

  /**
   * The operator's ledger: a GET signed in with a fresh SIWX header per request, on the first chain the service's
   * `WWW-Authenticate` names (learnt from an unsigned request's 401, then remembered). Not paid, so the whole
   * exchange is retried on network errors.
   */
  async function ledger(query: LedgerQuery = {}): Promise<LedgerReport> {
    if (!account) {
      throw new UnauthorizedError(
        "The ledger is the operator's: create the client with the operator's account to sign in.",
        401,
        "sign_in_required",
      );
    }
    validateLocally(ledgerQuerySchema, query, "ledger");
    const url = `${baseUrl}${LEDGER_PATH}${inputToQuery(query as Record<string, unknown>)}`;
    const ask = async (chain: string | undefined) =>
      send(url, {
        headers: {
          accept: "application/json",
          ...(chain ? { "SIGN-IN-WITH-X": await signInHeader(account, url, chain, OPERATOR_STATEMENT) } : {}),
        },
      });
    const exchange = async (): Promise<LedgerReport> => {
      let res = await ask(operatorChain);
      if (res.status === 401 && !operatorChain) {
        const chain = siwxChallengeChains(res.headers.get("www-authenticate"))[0];
        if (!chain) {
          throw new UnauthorizedError(
            "The service asks for a sign-in but names no EVM chain to sign in on (WWW-Authenticate).",
            401,
            "sign_in_required",
          );
        }
        operatorChain = chain;
        res = await ask(operatorChain);
      }
      if (res.status !== 200) throw errorFromBody(res.status, res.body, res.headers.get("retry-after"));
      return parseWith(ledgerReportSchema, res.status, res.body, LEDGER_PATH);
    };
    return withRetries(exchange);
  }

  const tools = Object.fromEntries(
    (Object.keys(toolRoutes) as ToolName[]).map((name) => [name, (input: never) => callPaid(name, input)]),
  ) as unknown as ToolMethods;

  return {
    ...tools,
    // The typed mission shapes are the contracts' own, narrowed by tool; the answer was validated by the contract.
    dispatch: (input) => callPaid("dispatch", input as ToolInput<"dispatch">) as Promise<ToolResult<DispatchOutput>>,
    missions: (input) => callPaid("missions", input) as Promise<ToolResult<ListMissionsOutput>>,
    ledger,
    address: account?.address,
    health: () => getPublic("/healthz", healthSchema),
    agentInfo: (tokenId) => getPublic(`/agents/info/${encodeURIComponent(tokenId)}`, agentInfoSchema),
    registration: (tokenId) =>
      getPublic(`/.well-known/agents/${encodeURIComponent(tokenId)}.json`, registrationFileSchema),
    binding: (tokenId) => getPublic(`/agents/${encodeURIComponent(tokenId)}/binding`, bindingStatusSchema),
    catalog: () => getPublic("/.well-known/x402", paymentCatalogSchema),
    openapi: () => getPublic("/openapi.json", z.record(z.string(), z.unknown())),
  };
}

/** The first EVM chain a challenge's `sign-in-with-x` extension lists. */
export function pickSignInChain(challenge: PaymentRequired): string {
  const siwx = challenge.extensions?.["sign-in-with-x"] as { supportedChains?: { chainId: string }[] } | undefined;
  const chain = siwx?.supportedChains?.find((c) => c.chainId.startsWith("eip155:"))?.chainId;
  if (!chain) {
    throw new PaymentRequiredError("The service does not offer sign-in with Ethereum.", challenge, "no_sign_in");
  }
  return chain;
}

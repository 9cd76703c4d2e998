import {
  type AgentInfo,
  agentInfoSchema,
  type BindingStatus,
  bindingStatusSchema,
  type ErrorBody,
  type Health,
  healthSchema,
  type PaymentCatalog,
  type PaymentRequired,
  paymentCatalogSchema,
  type RegistrationFile,
  registrationFileSchema,
  type ToolInput,
  type ToolName,
  type ToolOutput,
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

export interface AgentToolsClient extends ToolMethods {
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

const PUBLIC_GET_ATTEMPTS = 3;

function errorFromBody(status: number, body: unknown, retryAfter: string | null): Error {
  const error = (body as Partial<ErrorBody> | undefined)?.error;
  if (!error || typeof error !== "object") {
    return new UnexpectedResponseError(`The service answered ${status} without an error body.`, status, body);
  }
  const args = [error.message, status, error.code, error.details ?? []] as const;
  if (status === 400 || status === 413) return new ValidationError(...args);
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

  async function send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetchImpl(url, init);
    } catch (error) {
      throw new NetworkError(`Could not reach ${baseUrl}: ${(error as Error).message}`, { cause: error });
    }
  }

  async function readJson(res: Response): Promise<unknown> {
    const text = await res.text();
    try {
      return text ? JSON.parse(text) : undefined;
    } catch {
      throw new UnexpectedResponseError(
        `The service answered ${res.status} with a body that is not JSON.`,
        res.status,
        text,
      );
    }
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

  /** Public GETs are safe to repeat: retried on network errors. */
  async function getPublic<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
    let lastError: unknown;
    for (let attempt = 1; attempt <= PUBLIC_GET_ATTEMPTS; attempt++) {
      try {
        const res = await send(`${baseUrl}${path}`, { headers: { accept: "application/json" } });
        const body = await readJson(res);
        if (res.status !== 200) throw errorFromBody(res.status, body, res.headers.get("retry-after"));
        return parseWith(schema, res.status, body, path);
      } catch (error) {
        lastError = error;
        if (!(error instanceof NetworkError) || attempt === PUBLIC_GET_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
    throw lastError;
  }

  /**
   * One tool call: validate locally, ask (signed in when there is an account), check the quote against the cap,
   * pay, and read the answer. Never retried after a payment is signed, so it cannot pay twice.
   */
  async function callTool<N extends ToolName>(name: N, input: ToolInput<N>): Promise<ToolResult<ToolOutput<N>>> {
    const route = toolRoutes[name];
    const local = route.request.safeParse(input);
    if (!local.success) {
      const details = local.error.issues.map((issue) => ({
        field: issue.path.map(String).join("."),
        message: issue.message,
      }));
      throw new ValidationError(
        `Invalid ${name} request: ${details.map((d) => `${d.field || "body"}: ${d.message}`).join("; ")}.`,
        400,
        "invalid_request",
        details,
      );
    }
    const url = `${baseUrl}${route.path}`;
    const body = JSON.stringify(input);
    const post = (headers: Record<string, string>) =>
      send(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", ...headers },
        body,
      });

    const signingIn = account !== undefined && signIn;
    let headers: Record<string, string> = {};
    if (signingIn && signInChain) headers = { "SIGN-IN-WITH-X": await signInHeader(account, url, signInChain) };
    let res = await post(headers);
    if (signingIn && !signInChain && res.status === 402) {
      // The first call learns which chain the service takes sign-ins on from its challenge, then asks again
      // signed in; later calls sign in on their first request.
      const challenge = (await readJson(res)) as PaymentRequired;
      signInChain = pickSignInChain(challenge);
      headers = { "SIGN-IN-WITH-X": await signInHeader(account, url, signInChain) };
      res = await post(headers);
    }
    const first = await readJson(res);
    if (res.status === 200) {
      return { data: parseWith(route.response, 200, first, name) as ToolOutput<N>, payment: null };
    }
    if (res.status !== 402) throw errorFromBody(res.status, first, res.headers.get("retry-after"));

    const quote = first as PaymentRequired;
    const requirement = quote.accepts?.[0];
    if (!requirement)
      throw new PaymentRequiredError(
        `The service asked for payment but quoted no price: ${quote.error ?? ""}`,
        quote,
        quote.error,
      );
    if (signingIn && quote.error?.startsWith("invalid_siwx")) {
      throw new PaymentRequiredError(`The service refused the sign-in: ${quote.error}`, quote, quote.error);
    }
    if (BigInt(requirement.amount) > cap) {
      throw new PaymentRequiredError(
        `${name} costs ${unitsToUsd(requirement.amount)} USD, above maxPaymentPerCall ${unitsToUsd(cap)} USD; nothing was paid.`,
        quote,
        quote.error,
      );
    }
    if (!account) {
      throw new PaymentRequiredError(
        `${name} costs ${unitsToUsd(requirement.amount)} USD: pass an account to pay for it.`,
        quote,
        quote.error,
      );
    }

    const paid = await post({ ...headers, "PAYMENT-SIGNATURE": await signPayment(account, quote, cap) });
    const answer = await readJson(paid);
    if (paid.status === 402) {
      const refused = answer as PaymentRequired;
      throw new PaymentRequiredError(
        `The payment was refused: ${refused.error ?? "no reason given"}`,
        refused,
        refused.error,
      );
    }
    if (paid.status !== 200) throw errorFromBody(paid.status, answer, paid.headers.get("retry-after"));
    return {
      data: parseWith(route.response, 200, answer, name) as ToolOutput<N>,
      payment: readPayment(paid.headers.get("payment-response"), requirement),
    };
  }

  const tools = Object.fromEntries(
    (Object.keys(toolRoutes) as ToolName[]).map((name) => [name, (input: never) => callTool(name, input)]),
  ) as unknown as ToolMethods;

  return {
    ...tools,
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
function pickSignInChain(challenge: PaymentRequired): string {
  const siwx = challenge.extensions?.["sign-in-with-x"] as { supportedChains?: { chainId: string }[] } | undefined;
  const chain = siwx?.supportedChains?.find((c) => c.chainId.startsWith("eip155:"))?.chainId;
  if (!chain) throw new PaymentRequiredError("The service does not offer sign-in with Ethereum.", challenge);
  return chain;
}

import { type ErrorBody, type ErrorCode, errorDetailsOf, requestErrorMap, safeParseRequest } from "@agent-tools/schema";
import type { z } from "zod";
import {
  ForbiddenError,
  NetworkError,
  NotFoundError,
  ServiceError,
  UnauthorizedError,
  UnexpectedResponseError,
  UpstreamError,
  ValidationError,
} from "./errors.js";

/** An answer read in full: a body that fails to arrive is a network error, like a request that fails to leave. */
export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** How the client reaches the service: its origin, and one request with its whole answer. */
export interface Transport {
  /** Origin of the service, without a trailing slash. */
  readonly baseUrl: string;
  /** The fetch it sends with, for x402's own clients to send with too. */
  readonly fetch: typeof globalThis.fetch;
  /** One request and its whole answer; a failure of either on the network is a `NetworkError`. */
  send(url: string, init: RequestInit): Promise<Answer>;
  /**
   * One request whose answer is read as it arrives (a large export): a 200's body is handed over unread; any other
   * answer is read in full, as `send` reads it.
   */
  open(url: string, init: RequestInit): Promise<Answer | StreamedAnswer>;
}

/** A 200 whose body the caller reads as it arrives. */
export interface StreamedAnswer {
  status: 200;
  headers: Headers;
  stream: ReadableStream<Uint8Array>;
}

/** The system error codes a failed connection carries down its causes, in words. */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: "nothing accepts connections there (connection refused)",
  ENOTFOUND: "its host name does not resolve (ENOTFOUND)",
  EAI_AGAIN: "its host name could not be resolved now (EAI_AGAIN)",
  ECONNRESET: "the connection was reset",
  EPIPE: "the connection was closed while sending",
  ETIMEDOUT: "the connection timed out",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
  UND_ERR_HEADERS_TIMEOUT: "no answer came in time",
  UND_ERR_BODY_TIMEOUT: "the answer stopped arriving",
  UND_ERR_SOCKET: "the connection was closed before the whole answer arrived",
  CERT_HAS_EXPIRED: "its TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "its TLS certificate is self-signed",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "its TLS certificate cannot be verified",
  ERR_TLS_CERT_ALTNAME_INVALID: "its TLS certificate is for another host name",
  ERR_INVALID_URL: "it is not a URL (write it as http://host:port)",
};

/**
 * Why a request got no answer, in words: fetch's own text ("fetch failed") says nothing, the system error code down
 * its causes does. An abort or a timeout of the caller's signal is said as such.
 */
export function networkReason(error: unknown): string {
  let current = error as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; current && depth < 6; depth++) {
    if (current.name === "AbortError") return "the request was aborted";
    if (current.name === "TimeoutError") return "the request timed out";
    if (typeof current.code === "string" && NETWORK_REASONS[current.code]) return NETWORK_REASONS[current.code]!;
    if (current.message === "bad port") return "fetch refuses that port (a port the Fetch standard blocks)";
    if (current.message === "terminated") return "the connection was closed before the whole answer arrived";
    current = current.cause as typeof current;
  }
  const code = (error as { cause?: { code?: unknown } })?.cause?.code;
  return `the request failed before an answer came${typeof code === "string" ? ` (${code})` : ""}`;
}

/** A transport over `fetch` (the global one by default). */
export function createTransport(options: { baseUrl: string; fetch?: typeof globalThis.fetch }): Transport {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const reach = async (url: string, init: RequestInit, read: (res: Response) => Promise<string>) => {
    try {
      const res = await fetchImpl(url, init);
      return { res, text: await read(res) };
    } catch (error) {
      throw new NetworkError(`Could not reach ${baseUrl}: ${networkReason(error)}.`, { cause: error });
    }
  };
  const answerOf = (res: Response, text: string): Answer => {
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
  };
  return {
    baseUrl,
    fetch: fetchImpl,
    async send(url, init) {
      const { res, text } = await reach(url, init, (r) => r.text());
      return answerOf(res, text);
    },
    async open(url, init) {
      const { res, text } = await reach(url, init, async (r) => (r.status === 200 && r.body ? "" : r.text()));
      if (res.status === 200 && res.body) return { status: 200, headers: res.headers, stream: res.body };
      return answerOf(res, text);
    },
  };
}

/**
 * Attempts at a request whose connection fails before a whole answer arrives (refused, reset, cut short): a
 * kept-alive socket that the service or a proxy closes just as a request goes out fails that request, and the
 * next attempt opens a new connection.
 */
export const ATTEMPTS = 3;

/**
 * Runs `exchange` until it gets past the network, {@link ATTEMPTS} times at most, waiting a little longer before
 * each new attempt. Only a failure on the network is retried (`NetworkError`, or what `onNetwork` says is one, as
 * for MCP's client): an answer, whatever its status, is final. Every request of the client goes through here
 * (docs/architecture.md, "Connections").
 */
export async function withRetries<T>(
  exchange: () => Promise<T>,
  onNetwork: (error: unknown) => boolean = (error) => error instanceof NetworkError,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await exchange();
    } catch (error) {
      if (!onNetwork(error) || attempt === ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/** The answer's body as the contract `schema` types it; `UnexpectedResponseError` when it breaks the contract. */
export function parseAnswer<S extends z.ZodType>(schema: S, answer: Answer, what: string): z.output<S> {
  const parsed = schema.safeParse(answer.body, { error: requestErrorMap });
  if (!parsed.success) {
    const [first] = errorDetailsOf(parsed.error);
    throw new UnexpectedResponseError(
      `${what} does not match the contract: ${first?.field ? `its ${first.field} ` : "it "}${first?.message ?? "is not valid"}.`,
      answer.status,
      answer.body,
    );
  }
  return parsed.data;
}

/** Throws `ValidationError`, naming the fields, when `input` is not a valid request of `schema`. */
export function validateLocally(schema: z.ZodType, input: unknown, what: string): void {
  const local = safeParseRequest(schema, input);
  if (local.success) return;
  const details = errorDetailsOf(local.error);
  throw new ValidationError(
    `Invalid ${what} request: ${details.map((d) => `${d.field || "body"}: ${d.message}`).join("; ")}.`,
    400,
    "invalid_request",
    details,
  );
}

/** The error class of an error answer (other than 402), by its status, carrying the body's code and details. */
export function errorFromAnswer(answer: Answer): ServiceError | UnexpectedResponseError {
  const { status } = answer;
  const error = (answer.body as Partial<ErrorBody> | undefined)?.error;
  if (!error || typeof error !== "object") {
    return new UnexpectedResponseError(`The service answered ${status} without an error body.`, status, answer.body);
  }
  // A code this client does not know (a newer service) is still passed on as the service wrote it.
  const args = [error.message, status, error.code as ErrorCode, error.details ?? []] as const;
  if (status === 400 || status === 413) return new ValidationError(...args);
  if (status === 401) return new UnauthorizedError(...args);
  if (status === 403) return new ForbiddenError(...args);
  if (status === 404) return new NotFoundError(...args);
  const retryAfter = answer.headers.get("retry-after");
  if (status >= 500) return new UpstreamError(...args, retryAfter ? Number(retryAfter) : undefined);
  return new ServiceError(...args);
}

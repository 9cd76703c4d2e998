/**
 * What is checked when the server starts, before it serves anything: each port is free, each RPC endpoint answers
 * and serves the chain it is configured for, and the facilitators over HTTP settle what the service quotes. A
 * refusal is one line naming the variable to fix (never a secret's value: URLs are cut to their origin).
 */
import type { SupportedResponse } from "@x402/core/types";
import type { Logger } from "pino";
import type { PublicClient } from "viem";

/**
 * A message with every URL cut to its origin: an RPC, database or facilitator URL may carry an API key in its path
 * or query, or a password before its host, and a library's error text quotes the URL whole.
 */
export function withoutUrlSecrets(message: string): string {
  return message.replace(/\b(?:https?|wss?|postgres(?:ql)?):\/\/[^\s"'<>`]+/gi, originOf);
}

/** A URL's origin, what a refusal may say of an RPC or facilitator URL. */
export function originOf(url: string): string {
  try {
    const parsed = new URL(url);
    // `origin` is "null" for schemes other than the web's (postgres://): the scheme and host say the same.
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return "[a URL]";
  }
}

/** A start-up refusal: the variable to fix, and why. */
export class StartupError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = "StartupError";
  }
}

/**
 * The first line of an error's message, without URL secrets, and what lies under it (a system error code such as
 * ECONNREFUSED, or the innermost cause's words): what a one-line refusal may quote of a library.
 */
export function shortReason(error: unknown): string {
  const first = firstLine(error);
  const under = systemCode(error) ?? innermostCause(error);
  return under && !first.includes(under) ? `${first} (${under})` : first;
}

/** The first line of an error's message, whole (never cut: a refusal cut mid-word says nothing), without URL secrets. */
const firstLine = (error: unknown) =>
  withoutUrlSecrets((error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "").replace(/\.$/, "");

/** The system error code (ECONNREFUSED, ENOTFOUND...) down an error's causes: viem wraps fetch's, which wraps the socket's. */
function systemCode(error: unknown): string | undefined {
  let current = error as { code?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; current && depth < 5; depth++) {
    if (typeof current.code === "string" && /^E[A-Z]+$/.test(current.code)) return current.code;
    current = current.cause as typeof current;
  }
  return undefined;
}

/** The innermost cause's first line, when there is a cause. */
function innermostCause(error: unknown): string | undefined {
  let current = (error as { cause?: unknown })?.cause;
  if (!current) return undefined;
  for (let depth = 0; depth < 5 && (current as { cause?: unknown }).cause; depth++) {
    current = (current as { cause?: unknown }).cause;
  }
  return firstLine(current);
}

/** Maps a listener's EADDRINUSE to a refusal naming the port variable; other errors pass. */
export function portRefusal(variable: string, host: string, port: number): (error: unknown) => never {
  return (error) => {
    if ((error as NodeJS.ErrnoException)?.code === "EADDRINUSE") {
      throw new StartupError(
        variable,
        `port ${port} on ${host} is in use; set ${variable} to a free port, or 0 for any`,
      );
    }
    throw error;
  };
}

/** The chain an RPC endpoint serves must be the one configured: refused in one line otherwise. Returns its id. */
export async function expectChain(
  client: Pick<PublicClient, "getChainId">,
  expected: { network: string; variable: string; networkVariable: string; what: string; url: string },
): Promise<number> {
  let chainId: number;
  try {
    chainId = await client.getChainId();
  } catch (error) {
    throw new StartupError(
      expected.variable,
      `the RPC of ${expected.what} at ${originOf(expected.url)} did not answer: ${shortReason(error)}`,
    );
  }
  if (`eip155:${chainId}` !== expected.network) {
    throw new StartupError(
      expected.variable,
      `${originOf(expected.url)} serves chain eip155:${chainId}, but ${expected.what} is ${expected.network} (${expected.networkVariable})`,
    );
  }
  return chainId;
}

/** A facilitator over HTTP, as the start-up check asks it. */
export interface SupportedSource {
  name: string;
  /** The variables that hold its credentials, named when it refuses them. */
  credentials: string;
  supported(): Promise<SupportedResponse>;
}

/**
 * Each facilitator that answers must take our credentials and list x402 version 2's `exact` scheme on the payment
 * network; one that does not answer now is only warned about (failover exists for that), but at least one must.
 */
export async function checkFacilitators(
  facilitators: SupportedSource[],
  network: string,
  logger?: Logger,
): Promise<void> {
  let answered = 0;
  for (const facilitator of facilitators) {
    let supported: SupportedResponse;
    try {
      supported = await facilitator.supported();
    } catch (error) {
      const refused = /\((401|403)\)/.exec(error instanceof Error ? error.message : "");
      if (refused) {
        throw new StartupError(
          facilitator.credentials,
          `${facilitator.name} refused the service's credentials (HTTP ${refused[1]}); check the key given for it`,
        );
      }
      logger?.warn(
        { facilitator: facilitator.name, reason: shortReason(error) },
        "facilitator did not answer at start",
      );
      continue;
    }
    answered++;
    const settles = supported.kinds.some(
      (kind) => kind.x402Version === 2 && kind.scheme === "exact" && kind.network === network,
    );
    if (!settles) {
      const listed = supported.kinds.map((k) => `${k.scheme} on ${k.network} (v${k.x402Version})`).join(", ");
      throw new StartupError(
        "FACILITATOR_URLS",
        `${facilitator.name} does not settle x402 v2 exact payments on ${network} (PAYMENT_NETWORK); it lists ${listed || "nothing"}`,
      );
    }
  }
  if (answered === 0) {
    throw new StartupError(
      "FACILITATOR_URLS",
      `no facilitator answered (${facilitators.map((f) => f.name).join(", ")}); payments could not be verified`,
    );
  }
}

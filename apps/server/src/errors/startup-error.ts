/**
 * A start-up refusal and what it may quote of an error: one line naming the variable to fix, never a secret
 * (URLs are cut to their origin).
 */
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

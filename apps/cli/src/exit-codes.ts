import {
  ForbiddenError,
  NetworkError,
  NotFoundError,
  PaymentRequiredError,
  UnauthorizedError,
  UpstreamError,
  ValidationError,
} from "@agent-tools/sdk/contracts";

/** A mistake in the command line that the flags' own parsers cannot see (exit 2). */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Exit codes of `agent-tools` (documented in --help and the README). */
export const ExitCode = {
  ok: 0,
  /** Bad usage, or the service answered 400 / 404. */
  usage: 2,
  /** Payment refused, or the quote is above --max-price. */
  payment: 3,
  /**
   * The token is not the caller's, its clearance is too low or the agent is not revealed (403), or a sign-in is
   * missing or refused, or the key is not the operator's (401 / 403 of the ledger).
   */
  forbidden: 4,
  /** The service or its upstream sources failed, or the network. */
  upstream: 5,
} as const;

/** The exit code and a message that says what to do, for an error the SDK threw. */
export function describeFailure(error: unknown): { code: number; message: string } {
  if (error instanceof UsageError) {
    return { code: ExitCode.usage, message: `${error.message}\nSee --help for the flags and examples.` };
  }
  if (error instanceof ValidationError) {
    return { code: ExitCode.usage, message: `${error.message}\nFix the flags named above; see --help.` };
  }
  if (error instanceof NotFoundError) return { code: ExitCode.usage, message: error.message };
  if (error instanceof PaymentRequiredError) return { code: ExitCode.payment, message: paymentFailure(error) };
  if (error instanceof UnauthorizedError) {
    return {
      code: ExitCode.forbidden,
      message: `${error.message}\nSign in with the operator's key: set AGENT_TOOLS_PRIVATE_KEY or pass --key-file.`,
    };
  }
  if (error instanceof ForbiddenError && error.code === "not_operator") {
    return {
      code: ExitCode.forbidden,
      message: `${error.message}\nUse the operator's key (the address payments go to; on the embedded default, demo account #0).`,
    };
  }
  if (error instanceof ForbiddenError && error.code === "agent_not_revealed") {
    return {
      code: ExitCode.forbidden,
      message: `${error.message}\nMissions are for revealed agents: pick a revealed token (agent-tools agent <id> shows it).`,
    };
  }
  if (error instanceof ForbiddenError) {
    const needed = error.requiredClearance ? ` (needs ${error.requiredClearance} clearance)` : "";
    return {
      code: ExitCode.forbidden,
      message: `${error.message}${needed}\nUse a token your key holds with enough clearance, or --anonymous to pay the standard price.`,
    };
  }
  if (error instanceof UpstreamError) {
    const wait = error.retryAfterSeconds ? ` Retry in ${error.retryAfterSeconds} s.` : " Try again shortly.";
    return { code: ExitCode.upstream, message: `${error.message} Nothing was charged.${wait}` };
  }
  if (error instanceof NetworkError) {
    return { code: ExitCode.upstream, message: `${error.message}\nIs the service running? Start it with: pnpm start` };
  }
  return { code: ExitCode.upstream, message: error instanceof Error ? error.message : String(error) };
}

/** What went wrong with a payment, and what to do about it, by the typed reason the SDK gives. */
function paymentFailure(error: PaymentRequiredError): string {
  const say = (what: string, hint: string) => `${what}\n${hint}`;
  switch (error.reason) {
    case "over_max_payment":
      // The SDK names its own option; this command's is --max-price.
      return say(
        error.message.replace("maxPaymentPerCall", "--max-price"),
        "Raise --max-price to pay it, or sign in as a holder for the holder price.",
      );
    case "no_account":
      return say(error.message, "Set AGENT_TOOLS_PRIVATE_KEY or pass --key-file to pay.");
    case "invalid_siwx":
      return say(error.message, "The sign-in was refused: check the clock of this machine, or use --anonymous.");
    case "sign_in_required":
      return say(error.message, "The service serves holders only: drop --anonymous and sign in with a holder's key.");
    case "payment_in_use":
    case "payment_already_used":
      return say(error.message, "Run the command again: it signs a new payment.");
    case "settlement_failed":
      return say(error.message, "Nothing was charged; try again shortly.");
    case "insufficient_funds":
      return say(error.message, "Add funds to the paying key, or wait for its calls in flight to finish.");
    case "invalid_payment":
      return say(error.message, "Check the key's balance of the payment token and try again.");
    default:
      return say(error.message, "Check the key's balance of the payment token and try again.");
  }
}

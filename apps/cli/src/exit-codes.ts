import {
  ChannelError,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  PaymentRequiredError,
  ServiceError,
  UnauthorizedError,
  UpstreamError,
  ValidationError,
} from "@agent-tools/sdk/contracts";
import { kebab, listFields, singular } from "./tool-options.js";

/** The flag a request field came from: `tokenId` -> `--token-id`, `slugs.0` -> `--slug`, a mission's params -> `--param`. */
export function flagFor(field: string): string {
  const param = /^mission\.params\.([^.]+)/.exec(field);
  if (param) return `--param ${param[1]}`;
  if (field === "mission.tool" || field === "mission") return "the tool";
  const [top] = field.split(".");
  if (!top) return "the request";
  // A list is given by repeating its flag in the singular (--slug a --slug b); other fields keep their name
  // (--address, --status).
  return `--${kebab(listFields.has(top) ? singular(top) : top)}`;
}

/** The value given for a request field (dotted path), as the command line gave it: text, a number, true or false. */
function givenAt(input: unknown, field: string): string | undefined {
  let value = input;
  for (const key of field.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
    return JSON.stringify(value);
  }
  return undefined;
}

/**
 * "Invalid intel request:" and each offending flag with what is wrong with it and what was given
 * (`--param limit: must be a number, got "abc"`).
 */
function validationMessage(error: ValidationError, input?: unknown): string {
  // The SDK names its method (offerRadar); the command is offer-radar.
  const head = error.message
    .split(":")[0]!
    .replace(/^Invalid (\w+) request$/, (_, name) => `Invalid ${kebab(name)} request`);
  if (error.details.length === 0) return error.message;
  const lines = error.details.map((d) => {
    const given = input === undefined ? undefined : givenAt(input, d.field);
    return `  ${flagFor(d.field)}: ${d.message.replace(/^\S+ (must|is)/, "$1")}${given ? `, got ${given}` : ""}`;
  });
  return `${head}:\n${lines.join("\n")}`;
}

/** "(Did you mean --x?)" on a line of its own, as commander suggests, as a sentence that follows. */
const suggestion = (rest: string) => rest.replace(/^\s*\((Did you mean [^)]*)\)\s*$/s, " $1").trimEnd();

/** Commander's words "Allowed choices are a, b, c." as the end of a sentence: "use one of a, b, c". */
const choices = (text: string) => text.replace(/^Allowed choices are (.*?)\.?$/s, "use one of $1");

/**
 * A usage mistake as commander words it ("error: option '--from <day>' argument 'x' is invalid. use ..."), said as
 * the CLI's other refusals are: `agent-tools: ` and a whole sentence naming the flag or command and what it takes.
 */
export function usageMessage(commanderText: string): string {
  const text = commanderText.trim().replace(/^error: /, "");
  const rules: [RegExp, (...groups: string[]) => string][] = [
    [
      /^option '(--[\w-]+)[^']*' argument '(.*)' is invalid\. (.*)$/s,
      (flag, value, why) => `${flag} ${JSON.stringify(value)} is not valid: ${choices(why!)}`,
    ],
    [
      /^command-argument value '(.*)' is invalid for argument '([\w-]+)'\. (.*)$/s,
      (value, argument, why) => `${JSON.stringify(value)} is not a ${argument} this command takes: ${choices(why!)}`,
    ],
    [/^unknown option '(.*?)'(.*)$/s, (flag, rest) => `there is no option ${flag}.${suggestion(rest!)}`],
    [/^unknown command '(.*?)'(.*)$/s, (name, rest) => `there is no command ${name}.${suggestion(rest!)}`],
    [/^required option '(--[\w-]+)[^']*' not specified$/, (flag) => `${flag} is required`],
    [/^option '(--[\w-]+)[^']*' argument missing$/, (flag) => `${flag} needs a value`],
    [/^missing required argument '([\w-]+)'$/, (name) => `the ${name} is missing: give it after the command`],
    [
      /^too many arguments(?: for '([\w-]+)')?\. Expected (\d+) arguments? but got (\d+)\.$/,
      (command, expected, got) =>
        `too many arguments${command ? ` for ${command}` : ""}: it takes ${expected}, and ${got} were given`,
    ],
  ];
  let sentence = text;
  for (const [pattern, say] of rules) {
    const match = pattern.exec(text);
    if (match) {
      sentence = say(...match.slice(1));
      break;
    }
  }
  return `agent-tools: ${/[.?!]$/.test(sentence) ? sentence : `${sentence}.`}`;
}

/** A mistake in the command line that the flags' own parsers cannot see (exit 2). */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Exit codes of `agent-tools` (documented in --help and the README). */
export const ExitCode = {
  ok: 0,
  /**
   * Bad usage, or the service answered 400 / 404, or refused a refund for what it names (409 / 422: a transaction that
   * is not a transfer back, one booked for another payment, more than is left).
   */
  usage: 2,
  /** Payment refused, or the quote is above --max-price. */
  payment: 3,
  /**
   * The token is not the caller's, its clearance is too low or the agent is not revealed (403), or a sign-in is
   * missing or refused, or the key is not the operator's (401 / 403 of the ledger and the console link).
   */
  forbidden: 4,
  /** The service or its upstream sources failed, or the network. */
  upstream: 5,
} as const;

/** The service's address a command used, and where it came from: --base-url, AGENT_TOOLS_BASE_URL or the default. */
export interface ServiceAddress {
  url: string;
  from: "flag" | "env" | "default";
}

/**
 * The service could not be reached: the address tried and where it came from, how to point the command elsewhere, and
 * how to start the embedded default.
 */
function unreachable(error: NetworkError, service: ServiceAddress | undefined): string {
  const source =
    service &&
    {
      flag: "This address comes from --base-url.",
      env: "This address comes from AGENT_TOOLS_BASE_URL.",
      default: "This address is the default: neither --base-url nor AGENT_TOOLS_BASE_URL is set.",
    }[service.from];
  return [
    // The SDK's sentence: the address and why, in words (the system's error code, not fetch's "fetch failed").
    error.message,
    ...(source ? [source] : []),
    "To use a service elsewhere, pass --base-url <url> or set AGENT_TOOLS_BASE_URL " +
      "(export AGENT_TOOLS_BASE_URL=http://127.0.0.1:8500).",
    "To start the embedded default from a checkout of the repository: pnpm start " +
      "(it prints its address; PORT=8500 pnpm start for port 8500).",
  ].join("\n");
}

/** The exit code and a message that says what to do, for an error the SDK threw. */
export function describeFailure(
  error: unknown,
  context: {
    signedIn?: boolean;
    /** The service's address and where it came from, named when it cannot be reached. */
    service?: ServiceAddress;
    /** The request as the command line made it: an invalid field's value is quoted from it. */
    input?: unknown;
  } = {},
): { code: number; message: string } {
  if (error instanceof UsageError) {
    return { code: ExitCode.usage, message: `${error.message}\nSee --help for the flags and examples.` };
  }
  if (error instanceof ValidationError) {
    return {
      code: ExitCode.usage,
      message: `${validationMessage(error, context.input)}\nSee --help for the flags and examples.`,
    };
  }
  if (error instanceof NotFoundError && error.code === "agent_not_revealed") {
    return {
      code: ExitCode.forbidden,
      message: `${error.message}\nTokens 6001 to 6666 are revealed later; pick a revealed token.`,
    };
  }
  if (error instanceof NotFoundError) return { code: ExitCode.usage, message: error.message };
  // A channel's refund refused (nothing left, a call holding it): about money, as a refused payment is.
  if (error instanceof ChannelError) return { code: ExitCode.payment, message: error.message };
  if (error instanceof PaymentRequiredError) {
    return { code: ExitCode.payment, message: paymentFailure(error, context.signedIn ?? false) };
  }
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
      message: `${error.message}\nIntel and missions are for revealed agents: pick a revealed token (agent-tools agent <id> shows it).`,
    };
  }
  if (error instanceof ForbiddenError) {
    // The service's sentence usually names the clearance already: said once.
    const clearance = error.requiredClearance;
    const needed =
      clearance && !error.message.includes(`${clearance} clearance`) ? ` (needs ${clearance} clearance)` : "";
    return {
      code: ExitCode.forbidden,
      message: `${error.message}${needed}\nUse a token your key holds with enough clearance, or --anonymous to pay the standard price.`,
    };
  }
  if (error instanceof ServiceError && (error.status === 409 || error.status === 422)) {
    return {
      code: ExitCode.usage,
      message: `${error.message}\nCheck the refund's transaction: a transfer of the payment asset from PAY_TO back to that payer, booked for no other payment.`,
    };
  }
  if (error instanceof UpstreamError) {
    const wait = error.retryAfterSeconds ? ` Retry in ${error.retryAfterSeconds} s.` : " Try again shortly.";
    return { code: ExitCode.upstream, message: `${error.message} Nothing was charged.${wait}` };
  }
  if (error instanceof NetworkError) {
    return { code: ExitCode.upstream, message: unreachable(error, context.service) };
  }
  return { code: ExitCode.upstream, message: error instanceof Error ? error.message : String(error) };
}

/** The SDK names its options in a refusal over a limit; this command's flags name them here. */
const FLAG_OF_OPTION: Record<string, string> = {
  maxPaymentPerCall: "--max-price",
  maxPerDay: "--max-per-day",
  maxDeposit: "--max-deposit",
  budget: "--budget",
};
const withFlags = (message: string) =>
  message.replace(
    /\b(maxPaymentPerCall|maxPerDay|maxDeposit|budget) (?=\d)/,
    (_, option: string) => `${FLAG_OF_OPTION[option]} `,
  );

/** What went wrong with a payment, and what to do about it, by the typed reason the SDK gives. */
function paymentFailure(error: PaymentRequiredError, signedIn: boolean): string {
  const say = (what: string, hint: string) => `${what}\n${hint}`;
  switch (error.reason) {
    case "over_max_payment":
      return say(
        withFlags(error.message),
        signedIn
          ? "Raise --max-price to pay it."
          : "Raise --max-price to pay it, or sign in as a holder (a key holding the token, without --anonymous) for the holder price.",
      );
    case "over_daily_limit":
      return say(
        withFlags(error.message),
        "Wait until earlier calls leave the 24-hour window, or raise --max-per-day (AGENT_TOOLS_MAX_PER_DAY).",
      );
    case "over_max_deposit":
      return say(
        withFlags(error.message),
        "Lower --channel-deposit, raise --max-deposit (AGENT_TOOLS_MAX_DEPOSIT), or pay each call with a transfer of its own (--no-channel).",
      );
    case "invalid_batch_settlement_evm_cumulative_amount_mismatch":
    case "invalid_batch_settlement_evm_cumulative_below_claimed":
      return say(
        `${error.message}: this machine's record of the payment channel is behind the service's (the key paid over it from another machine or channel directory, or the record was lost).`,
        "Set AGENT_TOOLS_RPC_URL (or --rpc-url) to a JSON-RPC URL of the payment chain: the command then checks the service's word against the chain and pays on. Or pay this call with --no-channel.",
      );
    case "invalid_batch_settlement_evm_channel_busy":
      return say(
        error.message,
        "Run the command again once the other call has answered. After 'agent-tools channels withdraw' started, the channel takes no more calls: pay with --no-channel until the withdrawal is finished (a new deposit opens it again after).",
      );
    case "over_budget":
      return say(withFlags(error.message), "Raise --budget, or start a new session.");
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
      return say(
        error.message,
        /deposit/.test(error.message)
          ? "Add funds to the paying key, lower --channel-deposit, or pay with --no-channel (the price alone, no deposit)."
          : "Add funds to the paying key, or wait for its calls in flight to finish.",
      );
    case "invalid_payment":
      return say(error.message, "Check the key's balance of the payment token and try again.");
    default:
      return say(error.message, "Check the key's balance of the payment token and try again.");
  }
}

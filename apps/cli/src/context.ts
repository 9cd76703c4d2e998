// What every command shares: the global flags as parsed, the SDK's client, printing, and failing with an exit code.
import { readFileSync } from "node:fs";
import type { AgentToolsClient, ChannelStorage } from "@agent-tools/sdk";
import { InvalidPrivateKeyError, type Payment, unitsToUsd } from "@agent-tools/sdk/contracts";
import type { Command } from "commander";
import { channelDirectory, fileChannelStorage } from "./channel-store.js";
import { describeFailure, ExitCode, type ServiceAddress, UsageError } from "./exit-codes.js";
import { parseHttpUrl, parsePrice } from "./option-parsers.js";
import { type Style, styleFor } from "./render.js";
import { fileSpendLog, spendLogPath } from "./spend-log.js";
import { startSpinner } from "./spinner.js";

type Sdk = typeof import("@agent-tools/sdk");
type Account = ReturnType<Sdk["accountFromPrivateKey"]>;

/** The spending options the SDK's clients take, from the global flags. */
export interface SpendingOptions {
  maxPaymentPerCall: string;
  maxPerDay?: string;
  maxDeposit?: string;
  spendLog?: import("@agent-tools/sdk").SpendLog;
}

/** What the commands use of the world around them; bin.ts passes the process's own and the real SDK. */
export interface CliDeps {
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
  exit(code: number): never;
  /**
   * The SDK with its client, loaded when a command runs: its signing and payment code (viem, x402) is most of the
   * CLI's start-up time, and `--help` or a usage error never needs it.
   */
  loadSdk(): Promise<Sdk>;
  /** The MCP bridge, loaded by `mcp` alone: the other commands start without the MCP library. */
  loadMcp(): Promise<typeof import("@agent-tools/sdk/mcp")>;
}

/** The flags every command takes (program.ts). */
export interface GlobalOptions {
  baseUrl: string;
  keyFile?: string;
  maxPrice: string;
  /** --max-per-day, else AGENT_TOOLS_MAX_PER_DAY. */
  maxPerDay?: string;
  /** --max-deposit, else AGENT_TOOLS_MAX_DEPOSIT. */
  maxDeposit?: string;
  anonymous?: boolean;
  /**
   * False with --no-channel: pay each call with `exact`. Otherwise (the default, or --channel) pay over a payment
   * channel where the service offers one.
   */
  channel?: boolean;
  /** --upto: pay a call no channel pays with x402's `upto` where the service offers it. */
  upto?: boolean;
  channelDeposit: string;
  /** --rpc-url, else AGENT_TOOLS_RPC_URL: the payment chain, read when a channel's record is behind the service's. */
  rpcUrl?: string;
  json?: boolean;
  watch?: number;
}

export interface CommandContext {
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  /** Colour for stdout: only on a TTY without NO_COLOR. */
  style: Style;
  /** The flags every command takes, as parsed. */
  globals(): GlobalOptions;
  /** The signing key: --key-file, else AGENT_TOOLS_PRIVATE_KEY. Never printed; one that is not a key exits 2. */
  readKey(): `0x${string}` | undefined;
  /** The account of a key `readKey` read: a key the SDK refuses (out of secp256k1's range) exits 2, saying why. */
  accountOf(key: `0x${string}`): Promise<Account>;
  /**
   * The SDK's client for the global flags: the service, the key, the limits, --anonymous, --no-channel; `channels`
   * reads the kept channels whatever --no-channel says (the `channels` commands).
   */
  client(options?: { channels?: boolean }): Promise<AgentToolsClient>;
  /**
   * The spending limits of the global flags (--max-price, --max-per-day, --max-deposit) with the payer's spend log
   * they are counted in, as every client of the SDK takes them; a limit set by a variable that is not a USD amount
   * exits 2.
   */
  limits(payer: Account | undefined): SpendingOptions;
  /** Unless --no-channel (or `always`), the SDK's `channels` option: --channel-deposit, kept in the channel directory. */
  channels(always?: boolean): { channels?: { deposit: string; storage: ChannelStorage; rpcUrl?: string } };
  loadMcp: CliDeps["loadMcp"];
  /** Says why the command failed, and exits with its code; `input` is the request the command line made, if any. */
  fail(error: unknown, input?: unknown): never;
  /** Says why a call failed without exiting: a --watch run tries again. */
  warn(error: unknown): void;
  exit(code: number): never;
  /** The value as JSON with --json, else as `render` writes it for people; on stdout. */
  print<T>(value: T, render: (value: T) => string): void;
  /** The price paid, on stderr. */
  reportPayment(payment: Payment | null): void;
  /** Paid commands that must not repeat (each run queues and pays), and the operator's: no --watch. */
  refuseWatch(command: string): void;
  /** A spinner on stderr while `label` is under way; call what it returns to stop it. */
  spinner(label: string): () => void;
}

export function createCommandContext(program: Command, deps: CliDeps): CommandContext {
  const { out, err, env, exit } = deps;
  const style = styleFor(out);
  const errStyle = styleFor(err);
  const globals = () => program.opts<GlobalOptions>();

  /** What a failure's message needs to know of the command line: whether it signed in, and the service it used. */
  const failureContext = (): { signedIn: boolean; service: ServiceAddress } => {
    const options = globals();
    const signedIn = !options.anonymous && (options.keyFile !== undefined || !!env.AGENT_TOOLS_PRIVATE_KEY);
    // --base-url's default is AGENT_TOOLS_BASE_URL when that is set (see the option).
    const from =
      program.getOptionValueSource("baseUrl") === "cli" ? "flag" : env.AGENT_TOOLS_BASE_URL ? "env" : "default";
    return { signedIn, service: { url: options.baseUrl, from } };
  };

  const fail = (error: unknown, input?: unknown): never => {
    const { code, message } = describeFailure(error, { ...failureContext(), input });
    err.write(`agent-tools: ${message}\n`);
    return exit(code);
  };

  /** Where the key came from, as a message names it. */
  const keySource = () => {
    const { keyFile } = globals();
    return keyFile ? `in ${keyFile}` : "in AGENT_TOOLS_PRIVATE_KEY";
  };

  const readKey = (): `0x${string}` | undefined => {
    const { keyFile } = globals();
    let key: string | undefined;
    try {
      key = keyFile ? readFileSync(keyFile, "utf8").trim() : env.AGENT_TOOLS_PRIVATE_KEY?.trim();
    } catch (error) {
      const why =
        (error as NodeJS.ErrnoException).code === "ENOENT" ? "there is no such file" : (error as Error).message;
      err.write(`agent-tools: --key-file ${keyFile} cannot be read: ${why}.\n`);
      exit(ExitCode.usage);
    }
    if (!key) return undefined;
    if (!key.startsWith("0x")) key = `0x${key}`;
    if (!/^0x[0-9a-fA-F]{64}$/.test(key)) {
      err.write(
        `agent-tools: the key ${keySource()} is not a 32-byte hex private key (0x followed by 64 hex digits).\n`,
      );
      exit(ExitCode.usage);
    }
    return key as `0x${string}`;
  };

  const accountOf = async (key: `0x${string}`): Promise<Account> => {
    const { accountFromPrivateKey } = await deps.loadSdk();
    try {
      return accountFromPrivateKey(key);
    } catch (error) {
      if (!(error instanceof InvalidPrivateKeyError)) throw error;
      err.write(`agent-tools: the key ${keySource()} cannot be used. ${error.message}\n`);
      return exit(ExitCode.usage);
    }
  };

  const limits = (payer: Account | undefined): SpendingOptions => {
    const options = globals();
    // A flag's value is checked as it is parsed; one from a variable is checked here.
    const checked = (value: string | undefined, flag: string, variable: string) => {
      if (value === undefined) return {};
      try {
        return { [flag]: parsePrice(value) };
      } catch {
        return fail(new UsageError(`${variable} is not a USD amount (${value}): use a decimal such as 0.50.`));
      }
    };
    return {
      maxPaymentPerCall: options.maxPrice,
      ...checked(options.maxPerDay, "maxPerDay", "AGENT_TOOLS_MAX_PER_DAY"),
      ...checked(options.maxDeposit, "maxDeposit", "AGENT_TOOLS_MAX_DEPOSIT"),
      // Every charge is logged, so that a limit per day set later counts the day's calls made before it.
      ...(payer ? { spendLog: fileSpendLog(spendLogPath(env, payer.address)) } : {}),
    };
  };

  // Over a channel the service offers, kept between runs: one deposit, then a voucher per call.
  const channels = (always?: boolean) => {
    const options = globals();
    if (options.channel === false && !always) return {};
    const rpcUrl = options.rpcUrl;
    if (rpcUrl !== undefined) {
      try {
        parseHttpUrl(rpcUrl);
      } catch {
        // Not quoted: an RPC URL often carries an API key.
        fail(new UsageError("AGENT_TOOLS_RPC_URL is not an http:// or https:// URL."));
      }
    }
    return {
      channels: {
        deposit: options.channelDeposit,
        storage: fileChannelStorage(channelDirectory(env)),
        ...(rpcUrl ? { rpcUrl } : {}),
      },
    };
  };

  return {
    out,
    err,
    style,
    globals,
    readKey,
    accountOf,
    limits,
    channels,
    async client(overrides) {
      const options = globals();
      const key = readKey();
      const { createAgentToolsClient } = await deps.loadSdk();
      const account = key ? await accountOf(key) : undefined;
      return createAgentToolsClient({
        baseUrl: options.baseUrl,
        ...limits(account),
        ...(account ? { account } : {}),
        signIn: !options.anonymous,
        ...channels(overrides?.channels),
        ...(options.upto ? { upto: true } : {}),
      });
    },
    loadMcp: deps.loadMcp,
    fail,
    warn(error) {
      err.write(`agent-tools: ${describeFailure(error, failureContext()).message}\n`);
    },
    exit,
    print(value, render) {
      out.write(globals().json ? `${JSON.stringify(value)}\n` : render(value));
    },
    reportPayment(payment) {
      if (!payment) return;
      if (payment.channel) {
        const { id, deposited } = payment.channel;
        const deposit =
          deposited !== "0"
            ? ` · deposited ${unitsToUsd(deposited)} USD, tx ${payment.transaction} (what is not charged comes back with: agent-tools channels refund)`
            : "";
        err.write(
          errStyle.dim(
            `charged ${payment.amountUsd} USD${ceilingOf(payment)} over channel ${id} from ${payment.payer} · ` +
              `${unitsToUsd(BigInt(payment.channel.balance) - BigInt(payment.channel.charged))} USD left in it${deposit}` +
              `${payment.receipt ? ` · receipt signed by ${payment.receipt.signer}` : ""}\n`,
          ),
        );
        return;
      }
      err.write(
        errStyle.dim(
          `paid ${payment.amountUsd} USD${ceilingOf(payment)} from ${payment.payer} · tx ${payment.transaction} (${payment.network})` +
            `${payment.receipt ? ` · receipt signed by ${payment.receipt.signer}` : ""}\n`,
        ),
      );
    },
    refuseWatch(command) {
      if (globals().watch) fail(new UsageError(`--watch repeats scans; it does not work with ${command}.`));
    },
    spinner: (label) => startSpinner(label, err),
  };
}

/** " of a 1.00 USD ceiling" when the call was charged less than the price its payment signed (by its work), else "". */
function ceilingOf(payment: Payment): string {
  return BigInt(payment.ceiling) > BigInt(payment.amount) ? ` of a ${unitsToUsd(payment.ceiling)} USD ceiling` : "";
}

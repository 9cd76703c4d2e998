import { createWriteStream, readFileSync } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  type DispatchInput,
  InvalidPrivateKeyError,
  LEDGER_EXPORT_FORMATS,
  type MissionStatus,
  type MissionTool,
  missionStatuses,
  missionTools,
  type Payment,
  type ToolName,
  toolRoutes,
  unitsToUsd,
  ValidationError,
} from "@agent-tools/sdk/contracts";
import { Argument, Command, InvalidArgumentError, Option } from "commander";
import { version } from "../package.json";
import { renderConsoleLink } from "./console-link.js";
import { describeFailure, ExitCode, type ServiceAddress, UsageError, usageMessage } from "./exit-codes.js";
import { renderLedger, renderRefund } from "./ledger.js";
import { missionParams, nextMorningUtc, parseRunAt, renderDispatch, renderMissions } from "./missions.js";
import { renderResult, styleFor, table } from "./render.js";
import { startSpinner } from "./spinner.js";
import { addToolOptions, kebab, singular, toolInputFromOptions } from "./tool-options.js";
import { diffResults } from "./watch.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8402";

/**
 * The values of the refund command's help examples: demo account #1 as the payer, and a nonce and a transaction of
 * the right form (apps/cli/test/doc-examples.test.ts books a real refund with them replaced).
 */
const REFUND_EXAMPLE = {
  payer: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  nonce: `0x${"5e".repeat(32)}`,
  transaction: `0x${"7f".repeat(32)}`,
};

interface GlobalOptions {
  baseUrl: string;
  keyFile?: string;
  maxPrice: string;
  anonymous?: boolean;
  json?: boolean;
  watch?: number;
}

const out = process.stdout;
const err = process.stderr;
const style = styleFor(out);
const errStyle = styleFor(err);

/** What a failure's message needs to know of the command line: whether it signed in, and the service it used. */
function failureContext(): { signedIn: boolean; service: ServiceAddress } {
  const options = program.opts<GlobalOptions>();
  const signedIn = !options.anonymous && (options.keyFile !== undefined || !!process.env.AGENT_TOOLS_PRIVATE_KEY);
  // --base-url's default is AGENT_TOOLS_BASE_URL when that is set (see the option).
  const from =
    program.getOptionValueSource("baseUrl") === "cli" ? "flag" : process.env.AGENT_TOOLS_BASE_URL ? "env" : "default";
  return { signedIn, service: { url: options.baseUrl, from } };
}

/** Says why the command failed, and exits with its code; `input` is the request the command line made, if any. */
function fail(error: unknown, input?: unknown): never {
  const { code, message } = describeFailure(error, { ...failureContext(), input });
  err.write(`agent-tools: ${message}\n`);
  process.exit(code);
}

/** The signing key: --key-file, else AGENT_TOOLS_PRIVATE_KEY. Never printed. */
function readKey(options: GlobalOptions): `0x${string}` | undefined {
  let key: string | undefined;
  try {
    key = options.keyFile ? readFileSync(options.keyFile, "utf8").trim() : process.env.AGENT_TOOLS_PRIVATE_KEY?.trim();
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code === "ENOENT" ? "there is no such file" : (error as Error).message;
    err.write(`agent-tools: --key-file ${options.keyFile} cannot be read: ${why}.\n`);
    process.exit(ExitCode.usage);
  }
  if (!key) return undefined;
  if (!key.startsWith("0x")) key = `0x${key}`;
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) {
    err.write(
      `agent-tools: the key ${keySource(options)} is not a 32-byte hex private key (0x followed by 64 hex digits).\n`,
    );
    process.exit(ExitCode.usage);
  }
  return key as `0x${string}`;
}

/** Where the key came from, as a message names it. */
const keySource = (options: GlobalOptions) =>
  options.keyFile ? `in ${options.keyFile}` : "in AGENT_TOOLS_PRIVATE_KEY";

/** The account of a key `readKey` read: a key the SDK refuses (out of secp256k1's range) exits 2, saying why. */
async function accountOf(options: GlobalOptions, key: `0x${string}`) {
  const { accountFromPrivateKey } = await import("@agent-tools/sdk");
  try {
    return accountFromPrivateKey(key);
  } catch (error) {
    if (!(error instanceof InvalidPrivateKeyError)) throw error;
    err.write(`agent-tools: the key ${keySource(options)} cannot be used. ${error.message}\n`);
    process.exit(ExitCode.usage);
  }
}

/**
 * The SDK's client, loaded when a command runs: its signing and payment code (viem, x402) is most of the CLI's
 * start-up time, and `--help` or a usage error never needs it.
 */
async function clientFor(options: GlobalOptions) {
  const key = readKey(options);
  const { createAgentToolsClient } = await import("@agent-tools/sdk");
  return createAgentToolsClient({
    baseUrl: options.baseUrl,
    maxPaymentPerCall: options.maxPrice,
    ...(key ? { account: await accountOf(options, key) } : {}),
    signIn: !options.anonymous,
  });
}

function reportPayment(payment: Payment | null): void {
  if (!payment) return;
  err.write(
    errStyle.dim(
      `paid ${payment.amountUsd} USD from ${payment.payer} · tx ${payment.transaction} (${payment.network})` +
        `${payment.receipt ? ` · receipt signed by ${payment.receipt.signer}` : ""}\n`,
    ),
  );
}

const parsePrice = (value: string) => {
  if (!/^\d+(\.\d{1,6})?$/.test(value)) throw new InvalidArgumentError("use a decimal USD amount such as 0.50");
  return value;
};
const parseSeconds = (value: string) => {
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 5)
    throw new InvalidArgumentError("use a whole number of seconds, at least 5");
  return seconds;
};
const parseTokenId = (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("use a token id from 1 to 6666");
  return Number(value);
};
const parseCount = (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("use a whole number");
  return Number(value);
};
const parseDay = (value: string) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) throw new InvalidArgumentError("use a UTC day written YYYY-MM-DD");
  return value;
};
const parseWhen = (value: string) => {
  try {
    return parseRunAt(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message.replace(/^--run-at \S+ is not a time: /, ""));
  }
};
const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

const program = new Command()
  .name("agent-tools")
  .description(
    "Agent Tools from a terminal: radar scans, agent intel and missions, paid per call with x402; the operator's ledger and console.",
  )
  .version(version)
  // Each command's help lists the flags every command takes too (--base-url, --key-file, --max-price, ...).
  .configureHelp({ showGlobalOptions: true })
  .showHelpAfterError("(agent-tools --help lists the commands; agent-tools <command> --help shows its flags)")
  // Usage mistakes exit 2 (commander's own default is 1); --help and --version exit 0.
  .exitOverride((error) => process.exit(error.exitCode === 0 ? ExitCode.ok : ExitCode.usage))
  // Commander's usage errors, said as the CLI's other refusals are (a sentence naming the flag).
  .configureOutput({ outputError: (text, write) => write(`${usageMessage(text)}\n`) })
  .addOption(
    new Option("--base-url <url>", "service origin (else AGENT_TOOLS_BASE_URL)").default(
      process.env.AGENT_TOOLS_BASE_URL ?? DEFAULT_BASE_URL,
    ),
  )
  .option("--key-file <path>", "file holding the private key that signs in and pays (else AGENT_TOOLS_PRIVATE_KEY)")
  .addOption(
    new Option("--max-price <usd>", "most to pay for one call, in USD; a higher quote is refused before signing")
      .default("1.00")
      .argParser(parsePrice),
  )
  .option("--anonymous", "do not sign in: pay the standard price, no token ownership needed")
  .option("--json", "print exactly the response as JSON on stdout, nothing else")
  .addOption(
    new Option(
      "--watch <seconds>",
      "re-run a scan every N seconds and print what is new or changed (each run is a paid call)",
    ).argParser(parseSeconds),
  )
  .addHelpText(
    "after",
    `
Examples:
  $ export AGENT_TOOLS_PRIVATE_KEY=0x...        # the key that holds your agent token
  $ agent-tools intel --token-id 1
  $ agent-tools drop-radar --token-id 1 --type upcoming --chain base --limit 10
  $ agent-tools offer-radar --token-id 5 --slug base-bloomers --slug static-kittens --json
  $ agent-tools drop-radar --token-id 1 --watch 60
  $ agent-tools intel --token-id 7 --anonymous --max-price 1.00
  $ agent-tools dispatch allowlist-scan --token-id 5 --run-at +2h --param type=upcoming --param limit=10
  $ agent-tools missions --token-id 5 --status done
  $ agent-tools ledger --from 2026-11-01 --key-file operator.key   # the operator's key
  $ agent-tools console --key-file operator.key   # a one-time sign-in link for the operator console
  $ agent-tools refund --payer ${REFUND_EXAMPLE.payer} --nonce ${REFUND_EXAMPLE.nonce} --transaction ${REFUND_EXAMPLE.transaction} --key-file operator.key
  $ agent-tools agent 7
  $ agent-tools mcp --budget 5.00                # a local MCP server for Claude Desktop or Cursor

Exit codes: 0 ok, 2 bad usage or invalid request, 3 payment refused or over --max-price,
            4 forbidden (token, clearance, unrevealed agent, sign-in, not the operator),
            5 upstream or network trouble.`,
  );

const globals = () => program.opts<GlobalOptions>();

async function runTool(name: ToolName, options: Record<string, unknown>): Promise<void> {
  const opts = globals();
  const client = await clientFor(opts);
  const input = toolInputFromOptions(name, options);
  let previous: Record<string, unknown> | undefined;
  for (;;) {
    const stop = startSpinner(`${toolRoutes[name].summary}…`);
    let result: Awaited<ReturnType<(typeof client)[ToolName]>>;
    try {
      result = await (client[name] as (i: unknown) => ReturnType<(typeof client)[ToolName]>)(input);
    } catch (error) {
      stop();
      if (!opts.watch || error instanceof ValidationError) fail(error, input);
      err.write(`agent-tools: ${describeFailure(error, failureContext()).message}\n`);
      await new Promise((resolve) => setTimeout(resolve, opts.watch! * 1000));
      continue;
    }
    stop();
    const data = result.data as unknown as Record<string, unknown>;
    if (opts.json) {
      out.write(`${JSON.stringify(data)}\n`);
    } else if (!opts.watch || !previous) {
      out.write(renderResult(data, style, name));
    } else {
      const { added, changed } = diffResults(previous, data);
      const stamp = new Date().toISOString();
      if (added.length === 0 && changed.length === 0) out.write(style.dim(`${stamp} nothing new\n`));
      if (added.length > 0) out.write(`${style.green(`${stamp} new (${added.length})`)}\n${table(added, style)}\n`);
      if (changed.length > 0)
        out.write(`${style.yellow(`${stamp} changed (${changed.length})`)}\n${table(changed, style)}\n`);
    }
    reportPayment(result.payment);
    if (!opts.watch) return;
    previous = data;
    await new Promise((resolve) => setTimeout(resolve, opts.watch! * 1000));
  }
}

const commandNames: Record<ToolName, string> = {
  intel: "intel",
  dropRadar: "drop-radar",
  b20Radar: "b20-radar",
  altchainRadar: "altchain-radar",
  portfolio: "portfolio",
  allowlistScan: "allowlist-scan",
  offerRadar: "offer-radar",
};

for (const name of Object.keys(toolRoutes) as ToolName[]) {
  const route = toolRoutes[name];
  const command = program
    .command(commandNames[name])
    .summary(route.summary)
    .description(route.description)
    .addHelpText(
      "after",
      `\nExample:\n  $ agent-tools ${commandNames[name]} ${Object.entries(route.sampleInput)
        .map(([k, v]) =>
          Array.isArray(v) ? v.map((x) => `--${kebab(singular(k))} ${x}`).join(" ") : `--${kebab(k)} ${v}`,
        )
        .join(" ")}`,
    );
  addToolOptions(command, name).action((options: Record<string, unknown>) => runTool(name, options));
}

/** Paid commands that must not repeat (each run queues and pays), and the ledger: no --watch. */
function refuseWatch(command: string): void {
  if (globals().watch) fail(new UsageError(`--watch repeats scans; it does not work with ${command}.`));
}

interface DispatchOptions {
  tokenId: number;
  runAt?: string;
  param?: string[];
  params?: string;
}

async function runDispatch(tool: MissionTool, options: DispatchOptions): Promise<void> {
  const opts = globals();
  let input: DispatchInput | undefined;
  try {
    refuseWatch("dispatch");
    const client = await clientFor(opts);
    // The params come from flags as text: the SDK checks them against the tool's own schema before sending.
    input = {
      tokenId: options.tokenId,
      mission: { tool, params: missionParams(tool, options.param, options.params) },
      ...(options.runAt ? { runAt: options.runAt } : {}),
    } as DispatchInput;
    const stop = startSpinner("Queueing the mission…");
    const result = await client.dispatch(input).finally(stop);
    out.write(opts.json ? `${JSON.stringify(result.data)}\n` : renderDispatch(result.data, style));
    reportPayment(result.payment);
  } catch (error) {
    fail(error, input);
  }
}

interface MissionsOptions {
  tokenId: number;
  status?: MissionStatus;
  limit?: number;
}

async function runMissions(options: MissionsOptions): Promise<void> {
  const opts = globals();
  try {
    refuseWatch("missions");
    const client = await clientFor(opts);
    const stop = startSpinner("Reading the missions…");
    const result = await client
      .missions({
        tokenId: options.tokenId,
        ...(options.status ? { status: options.status } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
      })
      .finally(stop);
    out.write(opts.json ? `${JSON.stringify(result.data)}\n` : renderMissions(result.data, style));
    reportPayment(result.payment);
  } catch (error) {
    fail(error);
  }
}

interface LedgerOptions {
  from?: string;
  to?: string;
  limit?: number;
  format?: (typeof LEDGER_EXPORT_FORMATS)[number];
  output?: string;
}

/** The operator's commands (ledger, refund) sign in with the operator's key: without one they exit 4, saying so. */
function requireOperatorKey(opts: GlobalOptions, command: "ledger" | "refund"): void {
  refuseWatch(command);
  const what = command === "ledger" ? "the ledger signs in" : "a refund is booked signed in";
  if (opts.anonymous) throw new UsageError(`${what} with the operator's key; drop --anonymous.`);
  if (!readKey(opts)) {
    err.write(
      `agent-tools: the ${command === "ledger" ? "ledger" : "refund book"} is the operator's: set AGENT_TOOLS_PRIVATE_KEY or pass --key-file with the operator's key\n` +
        "(on the embedded default, demo account #0 that pnpm start prints).\n",
    );
    process.exit(ExitCode.forbidden);
  }
}

async function runLedger(options: LedgerOptions): Promise<void> {
  const opts = globals();
  try {
    requireOperatorKey(opts, "ledger");
    if (options.output && !options.format)
      throw new UsageError("--output writes an export: add --format csv or jsonl.");
    if (options.format) {
      if (options.limit !== undefined) throw new UsageError("--limit is the report's; an export has every payment.");
      await exportLedgerTo(await clientFor(opts), options);
      return;
    }
    const stop = startSpinner("Reading the ledger…");
    const report = await (await clientFor(opts))
      .ledger({
        ...(options.from ? { from: options.from } : {}),
        ...(options.to ? { to: options.to } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
      })
      .finally(stop);
    out.write(opts.json ? `${JSON.stringify(report)}\n` : renderLedger(report, style));
  } catch (error) {
    fail(error);
  }
}

/**
 * `ledger --format`: every payment of the window, as the service streams it, to stdout or `--output`; the payments
 * written so far counted on stderr (a file's are also named when done).
 */
async function exportLedgerTo(client: Awaited<ReturnType<typeof clientFor>>, options: LedgerOptions): Promise<void> {
  const stream = await client.exportLedger({
    ...(options.from ? { from: options.from } : {}),
    ...(options.to ? { to: options.to } : {}),
    format: options.format!,
  });
  const target = options.output ? createWriteStream(options.output) : out;
  let lines = 0;
  const stop = startSpinner("Exporting the ledger…");
  const counted = Readable.fromWeb(stream as import("node:stream/web").ReadableStream<Uint8Array>).on(
    "data",
    (chunk) => {
      const bytes = chunk as Buffer;
      for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) lines += 1;
    },
  );
  try {
    await pipeline(counted, target, { end: target !== out });
  } finally {
    stop();
  }
  const payments = options.format === "csv" ? Math.max(0, lines - 1) : lines;
  if (options.output) err.write(`Wrote ${payments} payment${payments === 1 ? "" : "s"} to ${options.output}.\n`);
}

interface RefundOptions {
  payer: string;
  nonce: string;
  transaction: string;
  note?: string;
}

/** `refund`: books a refund the operator sent (`recordRefund`); prints the refund and what is left of the payment. */
async function runRefund(options: RefundOptions): Promise<void> {
  const opts = globals();
  // The fields as typed: the SDK checks them against the contract before anything is signed or sent.
  const input = {
    payer: options.payer,
    nonce: options.nonce,
    transaction: options.transaction,
    ...(options.note !== undefined ? { note: options.note } : {}),
  };
  try {
    requireOperatorKey(opts, "refund");
    const client = await clientFor(opts);
    const stop = startSpinner("Booking the refund…");
    const recorded = await client.recordRefund(input).finally(stop);
    out.write(opts.json ? `${JSON.stringify(recorded)}\n` : renderRefund(recorded, style));
  } catch (error) {
    fail(error, input);
  }
}

program
  .command("dispatch")
  .description(
    "Queue a mission: a later run of a tool for your agent, paid now (Elite clearance for the holder price; revealed agents only)",
  )
  .addArgument(new Argument("<tool>", "the tool the mission runs").choices(missionTools))
  .addOption(
    new Option("--token-id <id>", "the agent (token id) the mission runs for")
      .argParser(parseTokenId)
      .makeOptionMandatory(),
  )
  .addOption(
    new Option(
      "--run-at <when>",
      "when to run it: ISO-8601 (UTC unless a zone is given) or a delay from now (+30m, +2h, +1d); default now",
    ).argParser(parseWhen),
  )
  .addOption(
    new Option(
      "--param <key=value>",
      "a field of the tool's request (repeat the flag; repeat a key for a list)",
    ).argParser(collect),
  )
  .option("--params <json>", "the tool's request fields as a JSON object; --param values win over it")
  .addHelpText(
    "after",
    `
The mission's params are the tool's own request fields without tokenId (see agent-tools <tool> --help),
typed by the tool's schema: --param limit=10 is a number, --param slug=a --param slug=b a list.
Prints the mission (id, tool, runAt, status) and the brief; the price paid goes to stderr.
List missions and their results with: agent-tools missions --token-id <id>

Examples:
  $ agent-tools dispatch intel --token-id 5
  $ agent-tools dispatch allowlist-scan --token-id 5 --run-at ${nextMorningUtc()} --param type=upcoming --param limit=10
  $ agent-tools dispatch offer-radar --token-id 5 --run-at +1d --param slug=base-bloomers --param slug=static-kittens
  $ agent-tools dispatch drop-radar --token-id 5 --run-at +30m --params '{"type":"upcoming","chain":"base"}' --json`,
  )
  .action((tool: MissionTool, options: DispatchOptions) => runDispatch(tool, options));

program
  .command("missions")
  .description("List your agent's missions, newest first, with status, results and counts (a paid call, like dispatch)")
  .addOption(new Option("--token-id <id>", "the agent (token id)").argParser(parseTokenId).makeOptionMandatory())
  .addOption(new Option("--status <status>", "only missions with this status").choices(missionStatuses))
  .addOption(new Option("--limit <n>", "most recent missions to list, 1 to 100 (default 20)").argParser(parseCount))
  .addHelpText(
    "after",
    `
Examples:
  $ agent-tools missions --token-id 5
  $ agent-tools missions --token-id 5 --status done --limit 5
  $ agent-tools missions --token-id 5 --json`,
  )
  .action((options: MissionsOptions) => runMissions(options));

program
  .command("ledger")
  .description(
    "The operator's settlement ledger: totals per route and per day, the latest payments and refunds (not paid)",
  )
  .addOption(new Option("--from <day>", "first UTC day, YYYY-MM-DD (default 30 days before --to)").argParser(parseDay))
  .addOption(new Option("--to <day>", "last UTC day, YYYY-MM-DD (default today)").argParser(parseDay))
  .addOption(new Option("--limit <n>", "latest entries to list, 0 to 500 (default 20)").argParser(parseCount))
  .addOption(
    new Option(
      "--format <format>",
      "export every entry of the window (payments and refunds) instead of the report",
    ).choices(LEDGER_EXPORT_FORMATS),
  )
  .addOption(new Option("--output <file>", "write the export to a file (default stdout)"))
  .addHelpText(
    "after",
    `
Signs in with the operator's key (AGENT_TOOLS_PRIVATE_KEY or --key-file); any other key exits 4.

Examples:
  $ agent-tools ledger --key-file operator.key
  $ agent-tools ledger --from 2026-11-01 --to 2026-11-22 --limit 50
  $ agent-tools ledger --from 2026-11-01 --to 2026-11-30 --format csv --output ledger-2026-11.csv
  $ agent-tools ledger --json`,
  )
  .action((options: LedgerOptions) => runLedger(options));

async function runConsole(): Promise<void> {
  const opts = globals();
  try {
    refuseWatch("console");
    if (opts.anonymous) throw new UsageError("a console link signs in with the operator's key; drop --anonymous.");
    if (!readKey(opts)) {
      err.write(
        "agent-tools: a console link is signed with the operator's key: set AGENT_TOOLS_PRIVATE_KEY or pass --key-file\n" +
          "with the operator's key (on the embedded default, demo account #0 that pnpm start prints).\n",
      );
      process.exit(ExitCode.forbidden);
    }
    const stop = startSpinner("Making the link…");
    const link = await (await clientFor(opts)).consoleLink().finally(stop);
    out.write(opts.json ? `${JSON.stringify(link)}\n` : renderConsoleLink(link, style));
  } catch (error) {
    fail(error);
  }
}

program
  .command("refund")
  .description(
    "Book a refund you sent: the payment it gives back for (payer, nonce) and its transaction, in the operator's ledger (not paid)",
  )
  .requiredOption("--payer <address>", "who paid: the payment's payer, as the ledger lists it")
  .requiredOption("--nonce <hex>", "the payment's authorization nonce, as the ledger lists it")
  .requiredOption(
    "--transaction <hash>",
    "the refund's transaction: a transfer of the payment asset from the payee (PAY_TO) back to the payer",
  )
  .option("--note <text>", "why the money was given back, kept with the refund (at most 200 characters)")
  .addHelpText(
    "after",
    `
First send the money back with your own wallet: a transfer of the payment asset from PAY_TO to the payer, on the
payment chain. Then book it here. The service reads the transfer from the chain and books it beside the payment;
the ledger, its exports and the console list it. Signs in with the operator's key (AGENT_TOOLS_PRIVATE_KEY or
--key-file); any other key exits 4. A transaction already booked for this payment is answered again (exit 0); a
payment the ledger does not hold, a transaction that is not such a transfer, more than is left of the payment, or
a transaction booked for another payment exits 2.

Examples:
  $ agent-tools ledger --format jsonl --key-file operator.key   # each payment's payer and nonce
  $ agent-tools refund --payer ${REFUND_EXAMPLE.payer} --nonce ${REFUND_EXAMPLE.nonce} --transaction ${REFUND_EXAMPLE.transaction} --note 'half back: the scan came late' --key-file operator.key
  $ agent-tools refund --payer ${REFUND_EXAMPLE.payer} --nonce ${REFUND_EXAMPLE.nonce} --transaction ${REFUND_EXAMPLE.transaction} --key-file operator.key --json`,
  )
  .action((options: RefundOptions) => runRefund(options));

async function runPublic<T>(read: () => Promise<T>, render: (value: T) => string): Promise<void> {
  try {
    const value = await read();
    out.write(globals().json ? `${JSON.stringify(value)}\n` : render(value));
  } catch (error) {
    fail(error);
  }
}

program
  .command("console")
  .description(
    "A one-time link that opens the operator console (/operator) signed in, in a browser without a wallet (not paid)",
  )
  .addHelpText(
    "after",
    `
Signs a sign-in for the console with the operator's key (AGENT_TOOLS_PRIVATE_KEY or --key-file), after asking the
service that the key is the operator's (any other key exits 4), and prints a link to the service's public URL that
carries it. Open the link in a browser: it works once, within 5 minutes, and opens an hour's session there.

Examples:
  $ agent-tools console --key-file operator.key
  $ agent-tools console --key-file operator.key --json`,
  )
  .action(() => runConsole());

program
  .command("health")
  .description("check that the service is up")
  .action(() =>
    runPublic(
      async () => (await clientFor(globals())).health(),
      (h) => `${h.service} at ${globals().baseUrl}: ${h.ok ? style.green("up") : "down"}\n`,
    ),
  );

program
  .command("agent")
  .description("an agent's public identity record")
  .argument("<tokenId>", "token id, 1 to 6666", parseTokenId)
  .action((tokenId: number) =>
    runPublic(
      async () => (await clientFor(globals())).agentInfo(tokenId),
      (a) =>
        `${style.bold(a.name)} · ${a.rarity.tier} (rank ${a.rarity.rank} of ${a.rarity.of}, score ${a.rarity.score}) · clearance ${a.clearance}\n` +
        `owner ${a.owner}\n` +
        Object.entries(a.traits)
          .map(([k, v]) => `${style.dim(k.padEnd(10))} ${v}`)
          .join("\n") +
        `\nagent ${a.registration.agentId} on ${a.registration.agentRegistry} · ${a.registration.binding.bound ? "bound" : "not bound"} (ERC-8217)\n`,
    ),
  );

program
  .command("binding")
  .description("an agent's live ERC-8217 binding status")
  .argument("<tokenId>", "token id, 1 to 6666", parseTokenId)
  .action((tokenId: number) =>
    runPublic(
      async () => (await clientFor(globals())).binding(tokenId),
      (b) =>
        `token ${b.tokenId} · agent ${b.agentId} · ${b.bound ? style.green("bound") : "not bound"} · owner ${b.owner} · block ${b.blockNumber}\n`,
    ),
  );

program
  .command("catalog")
  .description("the payment catalog: every tool and its prices")
  .action(() =>
    runPublic(
      async () => (await clientFor(globals())).catalog(),
      (c) =>
        `${table(
          c.items.map((item) => ({
            method: item.method,
            resource: item.resource.replace(c.homepage, ""),
            description: item.description.slice(0, 60),
            standard: `${unitsToUsd(item.accepts[0]!.amount)} USD`,
            holders: `${unitsToUsd(item.accepts[1]?.amount ?? "0")} USD`,
          })),
          style,
        )}\n`,
    ),
  );

program
  .command("mcp")
  .description(
    "serve the tools to a desktop agent (Claude Desktop, Cursor) as a local MCP server on stdin/stdout, paying with your key",
  )
  .addOption(
    new Option(
      "--budget <usd>",
      "most this session may spend, in USD; a call that would pass it is refused before signing",
    ).argParser(parsePrice),
  )
  .action(async (options: { budget?: string }) => {
    const opts = globals();
    const key = readKey(opts);
    // Loaded here: the other commands start without the MCP library.
    const [{ runStdioBridge }, account] = await Promise.all([
      import("@agent-tools/sdk/mcp"),
      key ? accountOf(opts, key) : undefined,
    ]);
    await runStdioBridge({
      baseUrl: opts.baseUrl,
      maxPaymentPerCall: opts.maxPrice,
      ...(options.budget ? { budget: options.budget } : {}),
      ...(account ? { account } : {}),
      signIn: !opts.anonymous,
    });
    // stdout carries the protocol; what people read goes to stderr.
    err.write(
      `agent-tools mcp: serving ${opts.baseUrl}/mcp on stdio` +
        `${key ? `, paying up to ${opts.maxPrice} USD a call${options.budget ? `, ${options.budget} USD in all` : ""}` : ", free tools and quotes only (no key)"}\n`,
    );
  });

program.parseAsync(process.argv).catch(fail);

// The root `agent-tools` command: the flags every command takes, the top help, and how usage mistakes exit.
import { Command, Option } from "commander";
import { version } from "../package.json";
import { REFUND_EXAMPLE } from "./commands/ledger.js";
import type { CliDeps } from "./context.js";
import { ExitCode, usageMessage } from "./exit-codes.js";
import { parseHttpUrl, parsePrice, parseSeconds } from "./option-parsers.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8402";

export function createProgram({ env, exit }: Pick<CliDeps, "env" | "exit">): Command {
  return (
    new Command()
      .name("agent-tools")
      .description(
        "Agent Tools from a terminal: radar scans, agent intel and missions, paid per call with x402; the operator's ledger and console.",
      )
      .version(version)
      // Each command's help lists the flags every command takes too (--base-url, --key-file, --max-price, ...).
      .configureHelp({ showGlobalOptions: true })
      .showHelpAfterError("(agent-tools --help lists the commands; agent-tools <command> --help shows its flags)")
      // Usage mistakes exit 2 (commander's own default is 1); --help and --version exit 0.
      .exitOverride((error) => exit(error.exitCode === 0 ? ExitCode.ok : ExitCode.usage))
      // Commander's usage errors, said as the CLI's other refusals are (a sentence naming the flag).
      .configureOutput({ outputError: (text, write) => write(`${usageMessage(text)}\n`) })
      .addOption(
        new Option("--base-url <url>", "service origin (else AGENT_TOOLS_BASE_URL)").default(
          env.AGENT_TOOLS_BASE_URL ?? DEFAULT_BASE_URL,
        ),
      )
      .option("--key-file <path>", "file holding the private key that signs in and pays (else AGENT_TOOLS_PRIVATE_KEY)")
      .addOption(
        new Option("--max-price <usd>", "most to pay for one call, in USD; a higher quote is refused before signing")
          .default("1.00")
          .argParser(parsePrice),
      )
      .addOption(
        new Option(
          "--max-per-day <usd>",
          "most to pay over any 24 hours, in USD, counted across runs (else AGENT_TOOLS_MAX_PER_DAY); a call that would pass it is refused before signing",
        )
          .default(env.AGENT_TOOLS_MAX_PER_DAY)
          .argParser(parsePrice),
      )
      .addOption(
        new Option(
          "--max-deposit <usd>",
          "most one channel deposit may put in, in USD (else AGENT_TOOLS_MAX_DEPOSIT); a call that would deposit more is refused before signing",
        )
          .default(env.AGENT_TOOLS_MAX_DEPOSIT)
          .argParser(parsePrice),
      )
      .option("--anonymous", "do not sign in: pay the standard price, no token ownership needed")
      // Paying over a channel is the default; --channel is still taken, as runs written before that say it.
      .addOption(new Option("--channel").hideHelp())
      .option(
        "--no-channel",
        "pay each call with a transfer of its own (x402 exact), not over the payment channel the service offers (by default, one deposit then a signed voucher per call, kept in AGENT_TOOLS_CHANNEL_DIR)",
      )
      .option(
        "--upto",
        "pay a call no channel pays with x402 upto: a Permit2 permit of up to the price, charged the work the answer took (the key approves Permit2 for the asset once, beforehand)",
      )
      .addOption(
        new Option(
          "--rpc-url <url>",
          "a JSON-RPC URL of the payment chain (else AGENT_TOOLS_RPC_URL): with it, a channel this machine's record is behind on (paid from elsewhere, or its record lost) is checked on chain and paid on",
        )
          // An empty variable is no URL.
          .default(env.AGENT_TOOLS_RPC_URL || undefined)
          .argParser(parseHttpUrl),
      )
      .addOption(
        new Option(
          "--channel-deposit <usd>",
          "what opening or topping up a payment channel deposits, in USD (what is not charged is refundable: agent-tools channels refund)",
        )
          .default("1.00")
          .argParser(parsePrice),
      )
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
  $ agent-tools intel --token-id 1 --max-per-day 5.00    # refused before signing once 5.00 USD is spent in 24 hours
  $ agent-tools intel --token-id 1 --no-channel   # a transfer for this call alone, no payment channel
  $ agent-tools intel --token-id 1 --anonymous --no-channel --upto   # charged the work done, of a 1.00 USD ceiling
  $ agent-tools channels                          # your payment channels: balance, charged, refundable
  $ agent-tools channels refund                   # take back what is unspent
  $ agent-tools dispatch allowlist-scan --token-id 5 --run-at +2h --param type=upcoming --param limit=10
  $ agent-tools missions --token-id 5 --status done
  $ agent-tools ledger --from 2026-11-01 --key-file operator.key   # the operator's key
  $ agent-tools console --key-file operator.key   # a one-time sign-in link for the operator console
  $ agent-tools refund --payer ${REFUND_EXAMPLE.payer} --nonce ${REFUND_EXAMPLE.nonce} --transaction ${REFUND_EXAMPLE.transaction} --key-file operator.key
  $ agent-tools agent 7
  $ agent-tools mcp --budget 5.00                # a local MCP server for Claude Desktop or Cursor

Exit codes: 0 ok, 2 bad usage or invalid request, 3 payment refused or over a limit (--max-price, ...),
            4 forbidden (token, clearance, unrevealed agent, sign-in, not the operator),
            5 upstream or network trouble.`,
      )
  );
}

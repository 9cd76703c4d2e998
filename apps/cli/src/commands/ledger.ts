// The operator's book, not paid: `ledger` reports or exports the settled payments, `refund` books money given back.
import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { AgentToolsClient } from "@agent-tools/sdk";
import { LEDGER_EXPORT_FORMATS, type LedgerReport, type RecordedRefund, unitsToUsd } from "@agent-tools/sdk/contracts";
import { type Command, Option } from "commander";
import type { CommandContext } from "../context.js";
import { ExitCode, UsageError } from "../exit-codes.js";
import { parseCount, parseDay } from "../option-parsers.js";
import { type Style, table } from "../render.js";

/**
 * The values of the refund command's help examples: demo account #1 as the payer, and a nonce and a transaction of
 * the right form (apps/cli/test/doc-examples.test.ts books a real refund with them replaced).
 */
export const REFUND_EXAMPLE = {
  payer: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  nonce: `0x${"5e".repeat(32)}`,
  transaction: `0x${"7f".repeat(32)}`,
};

interface LedgerOptions {
  from?: string;
  to?: string;
  limit?: number;
  format?: (typeof LEDGER_EXPORT_FORMATS)[number];
  output?: string;
}

interface RefundOptions {
  payer: string;
  nonce: string;
  transaction: string;
  note?: string;
}

export function registerLedgerCommands(program: Command, context: CommandContext): void {
  program
    .command("ledger")
    .description(
      "The operator's settlement ledger: totals per route and per day, the latest payments and refunds (not paid)",
    )
    .addOption(
      new Option("--from <day>", "first UTC day, YYYY-MM-DD (default 30 days before --to)").argParser(parseDay),
    )
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
    .action((options: LedgerOptions) => runLedger(context, options));

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
    .action((options: RefundOptions) => runRefund(context, options));
}

/** The operator's commands (ledger, refund) sign in with the operator's key: without one they exit 4, saying so. */
function requireOperatorKey(context: CommandContext, command: "ledger" | "refund"): void {
  context.refuseWatch(command);
  const what = command === "ledger" ? "the ledger signs in" : "a refund is booked signed in";
  if (context.globals().anonymous) throw new UsageError(`${what} with the operator's key; drop --anonymous.`);
  if (!context.readKey()) {
    context.err.write(
      `agent-tools: the ${command === "ledger" ? "ledger" : "refund book"} is the operator's: set AGENT_TOOLS_PRIVATE_KEY or pass --key-file with the operator's key\n` +
        "(on the embedded default, demo account #0 that pnpm start prints).\n",
    );
    context.exit(ExitCode.forbidden);
  }
}

async function runLedger(context: CommandContext, options: LedgerOptions): Promise<void> {
  try {
    requireOperatorKey(context, "ledger");
    if (options.output && !options.format)
      throw new UsageError("--output writes an export: add --format csv or jsonl.");
    if (options.format) {
      if (options.limit !== undefined) throw new UsageError("--limit is the report's; an export has every payment.");
      await exportLedgerTo(context, await context.client(), options);
      return;
    }
    const stop = context.spinner("Reading the ledger…");
    const report = await (await context.client())
      .ledger({
        ...(options.from ? { from: options.from } : {}),
        ...(options.to ? { to: options.to } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
      })
      .finally(stop);
    context.print(report, (value) => renderLedger(value, context.style));
  } catch (error) {
    context.fail(error);
  }
}

/**
 * `ledger --format`: every payment of the window, as the service streams it, to stdout or `--output`; the payments
 * written so far counted on stderr (a file's are also named when done).
 */
async function exportLedgerTo(
  context: CommandContext,
  client: AgentToolsClient,
  options: LedgerOptions,
): Promise<void> {
  const { out, err } = context;
  const stream = await client.exportLedger({
    ...(options.from ? { from: options.from } : {}),
    ...(options.to ? { to: options.to } : {}),
    format: options.format!,
  });
  const target = options.output ? createWriteStream(options.output) : out;
  let lines = 0;
  const stop = context.spinner("Exporting the ledger…");
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

/** `refund`: books a refund the operator sent (`recordRefund`); prints the refund and what is left of the payment. */
async function runRefund(context: CommandContext, options: RefundOptions): Promise<void> {
  // The fields as typed: the SDK checks them against the contract before anything is signed or sent.
  const input = {
    payer: options.payer,
    nonce: options.nonce,
    transaction: options.transaction,
    ...(options.note !== undefined ? { note: options.note } : {}),
  };
  try {
    requireOperatorKey(context, "refund");
    const client = await context.client();
    const stop = context.spinner("Booking the refund…");
    const recorded = await client.recordRefund(input).finally(stop);
    context.print(recorded, (value) => renderRefund(value, context.style));
  } catch (error) {
    context.fail(error, input);
  }
}
const shortHash = (hash: string) => `${hash.slice(0, 10)}…${hash.slice(-4)}`;

/** `agent-tools ledger`: the brief, the total, tables per route and per day, and the latest entries. */
function renderLedger(report: LedgerReport, style: Style): string {
  const { total } = report;
  // Refund columns only when the window holds refunds: most books have none.
  const refundColumns = (t: LedgerReport["total"]) => (total.refunds > 0 ? { refunds: t.refunds, net: t.netUsd } : {});
  const parts = [
    report.brief,
    `${style.bold("total")} ${total.payments} payment${total.payments === 1 ? "" : "s"} · ${total.usd} USD${
      total.refunds > 0
        ? ` · ${total.refunds} refund${total.refunds === 1 ? "" : "s"} -${unitsToUsd(total.refunded)} USD · net ${total.netUsd} USD`
        : ""
    } ${style.dim(
      `· asked for ${report.from} to ${report.to} · ${report.network}`,
    )}${report.unconfirmed > 0 ? `\n${style.yellow(`${report.unconfirmed} settlement(s) sent, not yet confirmed`)}` : ""}`,
    `${style.bold("by route")}\n${table(
      report.byRoute.map((r) => ({ route: r.route, payments: r.payments, usd: r.usd, ...refundColumns(r) })),
      style,
    )}`,
    `${style.bold("by day")}\n${table(
      report.byDay.map((d) => ({ day: d.day, payments: d.payments, usd: d.usd, ...refundColumns(d) })),
      style,
    )}`,
    `${style.bold(`latest entries (${report.entries.length})`)}\n${table(
      report.entries.map((e) => ({
        settledAt: e.settledAt,
        kind: e.kind,
        route: `${e.method} ${e.route}`,
        tokenId: e.tokenId,
        payer: e.payer,
        price: e.pricePoint,
        usd: `${e.kind === "refund" ? "-" : ""}${unitsToUsd(e.amount)}`,
        transaction: shortHash(e.transaction),
      })),
      style,
      8,
    )}`,
  ];
  return `${parts.filter(Boolean).join("\n\n")}\n`;
}

/** `agent-tools refund`: the service's brief, the refund as the ledger lists it, and what is left of the payment. */
function renderRefund(recorded: RecordedRefund, style: Style): string {
  const { refund, payment } = recorded;
  const rows: [string, string][] = [
    ["refund", `${unitsToUsd(refund.amount)} USD to ${refund.payer} for ${refund.method} ${refund.route}`],
    ["tx", `${refund.transaction} (${refund.network}), mined ${refund.settledAt}`],
    [
      "payment",
      `${unitsToUsd(payment.amount)} USD paid · ${unitsToUsd(payment.refunded)} USD refunded · ${unitsToUsd(payment.remaining)} USD left`,
    ],
  ];
  if (refund.note) rows.push(["note", refund.note]);
  return `${recorded.brief}\n\n${rows.map(([key, value]) => `${style.dim(key.padEnd(8))} ${value}`).join("\n")}\n`;
}

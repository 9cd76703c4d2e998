// `channels`: the payment channels the tool commands pay over (list), and taking back what is unspent: through the
// service (refund), or on the chain without it (withdraw).
import type { ChannelSummary, RefundChannelReturnType, WithdrawChannelReturnType } from "@agent-tools/sdk/contracts";
import { unitsToUsd, usdToUnits } from "@agent-tools/sdk/contracts";
import { type Command, Option } from "commander";
import type { CommandContext } from "../context.js";
import { UsageError } from "../exit-codes.js";
import { parsePrice, parseTokenId } from "../option-parsers.js";
import { type Style, viewTable } from "../render.js";

interface RefundOptions {
  tokenId: number;
  amount?: string;
}

export function registerChannelCommands(program: Command, context: CommandContext): void {
  const channels = program
    .command("channels")
    .description("Your payment channels with the services you called: balance, charged, claimed, refundable")
    .addHelpText(
      "after",
      `
A tool command pays over a payment channel when the service offers one (x402 batch-settlement): the first call
deposits --channel-deposit (1.00 USD by default) into the channel, each later call signs a voucher for its price,
with no transaction of its own. The channels are kept in AGENT_TOOLS_CHANNEL_DIR (by default
~/.local/state/agent-tools/channels, readable by you alone), so the next run goes on with the same channel.
What is not charged stays yours: 'agent-tools channels refund' takes it back. --no-channel pays a call with a
transfer of its own instead.

Examples:
  $ agent-tools intel --token-id 1 --channel-deposit 0.10
  $ agent-tools channels
  $ agent-tools channels --json
  $ agent-tools channels refund`,
    )
    .action(() => runList(context));

  channels
    .command("refund")
    .description("Take back what is unspent on your channel with this service (the service claims what it charged)")
    .option(
      "--token-id <id>",
      "an agent the refund is asked through (GET /intel?tokenId=...); any will do, without signing in",
      parseTokenId,
      1,
    )
    .addOption(
      new Option("--amount <usd>", "take back this much, in USD (default: all that is left)").argParser(parsePrice),
    )
    .action((options: RefundOptions) => runRefund(context, options));

  channels
    .command("withdraw")
    .description(
      "Take back what the service has not claimed, on the payment chain without the service: a first run starts the withdrawal, a run after the channel's delay finishes it",
    )
    .option("--channel <id>", "the channel (default: the only one kept)")
    .addHelpText(
      "after",
      `
For when the service does not answer: 'channels refund' is quicker whenever it does. The withdrawal is x402's timed
one, on the channel contract: it needs AGENT_TOOLS_RPC_URL (or --rpc-url) and gas in the key's account on the payment
chain. Until the channel's delay has passed (24 hours on a service's default), the service can still claim what it
charged; then the rest comes back.

Examples:
  $ agent-tools channels withdraw          # starts it: prints from when it can be finished
  $ agent-tools channels withdraw          # run again after the delay: finishes it`,
    )
    .action((options: { channel?: string }) => runWithdraw(context, options));
}

/** A client that pays over channels: a key, and the channels kept (whatever --no-channel says). */
async function channelClient(context: CommandContext, command: string) {
  context.refuseWatch(command);
  if (!context.readKey()) {
    throw new UsageError(`${command} needs the key that pays: set AGENT_TOOLS_PRIVATE_KEY or pass --key-file.`);
  }
  return context.client({ channels: true });
}

async function runList(context: CommandContext): Promise<void> {
  try {
    const client = await channelClient(context, "channels");
    const list = await client.channels();
    context.print(
      list.map((channel) => ({
        channelId: channel.channelId,
        balance: channel.balance.toString(),
        charged: channel.charged.toString(),
        claimed: channel.claimed.toString(),
        refundable: channel.refundable.toString(),
      })),
      () => renderChannels(list, context.style),
    );
  } catch (error) {
    context.fail(error);
  }
}

async function runRefund(context: CommandContext, options: RefundOptions): Promise<void> {
  try {
    const client = await channelClient(context, "channels refund");
    const stop = context.spinner("Asking for the refund…");
    const refund = await client
      .refundChannel({
        tokenId: options.tokenId,
        ...(options.amount ? { amount: usdToUnits(options.amount) } : {}),
      })
      .finally(stop);
    context.print({ ...refund, refunded: refund.refunded.toString() }, () => renderRefund(refund));
  } catch (error) {
    context.fail(error);
  }
}

async function runWithdraw(context: CommandContext, options: { channel?: string }): Promise<void> {
  try {
    if (!context.globals().rpcUrl) {
      throw new UsageError(
        "channels withdraw sends a transaction on the payment chain: set AGENT_TOOLS_RPC_URL or pass --rpc-url (a JSON-RPC URL of that chain).",
      );
    }
    const client = await channelClient(context, "channels withdraw");
    const stop = context.spinner("Withdrawing on the payment chain…");
    const step = await client.withdrawChannel(options.channel ? { channelId: options.channel } : {}).finally(stop);
    context.print(
      {
        ...step,
        ...("amount" in step ? { amount: step.amount.toString() } : {}),
        ...("withdrawn" in step ? { withdrawn: step.withdrawn.toString() } : {}),
        ...("finishableAt" in step ? { finishableAt: step.finishableAt.toISOString() } : {}),
      },
      () => renderWithdraw(step),
    );
  } catch (error) {
    context.fail(error);
  }
}

function renderWithdraw(step: WithdrawChannelReturnType): string {
  const when = (date: Date) => `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  switch (step.status) {
    case "started":
      return (
        `Started the withdrawal of ${unitsToUsd(step.amount)} USD from channel ${step.channelId} · tx ${step.transaction}\n` +
        `Finish it from ${when(step.finishableAt)} with: agent-tools channels withdraw. Until then the service can claim what it charged.\n`
      );
    case "waiting":
      return `The withdrawal of ${unitsToUsd(step.amount)} USD from channel ${step.channelId} can be finished from ${when(step.finishableAt)}; nothing was sent.\n`;
    case "finished":
      return `Withdrew ${unitsToUsd(step.withdrawn)} USD from channel ${step.channelId} · tx ${step.transaction}\n`;
  }
}

/** The channels, the id last and whole (it is pasted into other tools). */
function renderChannels(list: ChannelSummary[], style: Style): string {
  return `${viewTable(
    list.map((channel) => ({
      "balance USD": unitsToUsd(channel.balance),
      "charged USD": unitsToUsd(channel.charged),
      "claimed USD": unitsToUsd(channel.claimed),
      "refundable USD": unitsToUsd(channel.refundable),
      channel: channel.channelId,
    })),
    style,
  )}\n`;
}

function renderRefund(refund: RefundChannelReturnType): string {
  return `Refunded ${unitsToUsd(refund.refunded)} USD from channel ${refund.channelId} · tx ${refund.transaction}\n`;
}

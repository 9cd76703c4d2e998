// `console`: a one-time link that signs the operator in to the console (/operator), in a browser without a wallet.
import type { CreateConsoleLinkReturnType } from "@agent-tools/sdk/contracts";
import type { Command } from "commander";
import type { CommandContext } from "../context.js";
import { ExitCode, UsageError } from "../exit-codes.js";
import type { Style } from "../render.js";

export function registerConsoleCommand(program: Command, context: CommandContext): void {
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
    .action(() => runConsole(context));
}

async function runConsole(context: CommandContext): Promise<void> {
  try {
    context.refuseWatch("console");
    if (context.globals().anonymous)
      throw new UsageError("a console link signs in with the operator's key; drop --anonymous.");
    if (!context.readKey()) {
      context.err.write(
        "agent-tools: a console link is signed with the operator's key: set AGENT_TOOLS_PRIVATE_KEY or pass --key-file\n" +
          "with the operator's key (on the embedded default, demo account #0 that pnpm start prints).\n",
      );
      context.exit(ExitCode.forbidden);
    }
    const stop = context.spinner("Making the link…");
    const link = await (await context.client()).consoleLink().finally(stop);
    context.print(link, (value) => renderConsoleLink(value, context.style));
  } catch (error) {
    context.fail(error);
  }
}

/**
 * `agent-tools console`: whom the link signs in, that it works once and for how long, then the link alone on its
 * line (docs/decisions.md, "The operator console").
 */
function renderConsoleLink(link: CreateConsoleLinkReturnType, style: Style, now = Date.now()): string {
  const minutes = Math.max(1, Math.round((Date.parse(link.expiresAt) - now) / 60_000));
  const until = `${link.expiresAt.slice(0, 10)} ${link.expiresAt.slice(11, 19)} UTC`;
  return (
    `Operator console sign-in for ${link.address}: open the link below in a browser.\n` +
    `${style.bold(`It works once, within ${minutes} minute${minutes === 1 ? "" : "s"}`)} (until ${until}). ` +
    "Until then it signs anyone in: keep it to yourself.\n\n" +
    `${link.url}\n`
  );
}

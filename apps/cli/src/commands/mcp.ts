// `mcp`: the tools served to a desktop agent (Claude Desktop, Cursor) as a local MCP server on stdin/stdout.
import { type Command, Option } from "commander";
import type { CommandContext } from "../context.js";
import { parsePrice } from "../option-parsers.js";

export function registerMcpCommand(program: Command, context: CommandContext): void {
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
    .action((options: { budget?: string }) => runMcp(context, options));
}

async function runMcp(context: CommandContext, options: { budget?: string }): Promise<void> {
  const opts = context.globals();
  const key = context.readKey();
  const [{ runStdioBridge }, account] = await Promise.all([
    context.loadMcp(),
    key ? context.accountOf(key) : undefined,
  ]);
  await runStdioBridge({
    baseUrl: opts.baseUrl,
    ...context.limits(account),
    ...context.channels(),
    ...(opts.upto ? { upto: true } : {}),
    ...(options.budget ? { budget: options.budget } : {}),
    ...(account ? { account } : {}),
    signIn: !opts.anonymous,
  });
  // stdout carries the protocol; what people read goes to stderr.
  context.err.write(
    `agent-tools mcp: serving ${opts.baseUrl}/mcp on stdio` +
      `${key ? `, paying up to ${opts.maxPrice} USD a call${opts.maxPerDay ? `, ${opts.maxPerDay} USD a day` : ""}${opts.channel !== false ? ", over payment channels" : ""}${options.budget ? `, ${options.budget} USD in all` : ""}` : ", free tools and quotes only (no key)"}\n`,
  );
}

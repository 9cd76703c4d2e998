// The paid tools, a command each (intel, drop-radar, ...), built from the route table: a flag per request field.
import { type ToolName, toolRoutes, ValidationError } from "@agent-tools/sdk/contracts";
import type { Command } from "commander";
import type { CommandContext } from "../context.js";
import { renderResult, table } from "../render.js";
import { addToolOptions, kebab, singular, toolInputFromOptions } from "../tool-options.js";
import { diffResults } from "../watch.js";

const commandNames: Record<ToolName, string> = {
  intel: "intel",
  dropRadar: "drop-radar",
  b20Radar: "b20-radar",
  altchainRadar: "altchain-radar",
  portfolio: "portfolio",
  allowlistScan: "allowlist-scan",
  offerRadar: "offer-radar",
};

export function registerToolCommands(program: Command, context: CommandContext): void {
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
    addToolOptions(command, name).action((options: Record<string, unknown>) => runTool(context, name, options));
  }
}

/**
 * One paid call, printed; with --watch, a call every N seconds that prints what is new or changed since the last
 * (a failed run is said and tried again, except an invalid request, which would fail every time).
 */
async function runTool(context: CommandContext, name: ToolName, options: Record<string, unknown>): Promise<void> {
  const { out, style } = context;
  const opts = context.globals();
  const client = await context.client();
  const input = toolInputFromOptions(name, options);
  const pause = () => new Promise((resolve) => setTimeout(resolve, opts.watch! * 1000));
  let previous: Record<string, unknown> | undefined;
  for (;;) {
    const stop = context.spinner(`${toolRoutes[name].summary}…`);
    let result: Awaited<ReturnType<(typeof client)[ToolName]>>;
    try {
      result = await (client[name] as (i: unknown) => ReturnType<(typeof client)[ToolName]>)(input);
    } catch (error) {
      stop();
      if (!opts.watch || error instanceof ValidationError) context.fail(error, input);
      context.warn(error);
      await pause();
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
    context.reportPayment(result.payment);
    if (!opts.watch) return;
    previous = data;
    await pause();
  }
}

// `agent-tools`: the root command (program.ts) and each family of commands (commands/), in the order --help lists them.
import { registerChannelCommands } from "./commands/channels.js";
import { registerConsoleCommand } from "./commands/console.js";
import { registerLedgerCommands } from "./commands/ledger.js";
import { registerMcpCommand } from "./commands/mcp.js";
import { registerMissionCommands } from "./commands/missions.js";
import { registerPublicCommands } from "./commands/public.js";
import { registerToolCommands } from "./commands/tools.js";
import { type CliDeps, createCommandContext } from "./context.js";
import { createProgram } from "./program.js";

const deps: CliDeps = {
  out: process.stdout,
  err: process.stderr,
  env: process.env,
  exit: (code) => process.exit(code),
  loadSdk: () => import("@agent-tools/sdk"),
  loadMcp: () => import("@agent-tools/sdk/mcp"),
};

const program = createProgram(deps);
const context = createCommandContext(program, deps);
registerToolCommands(program, context);
registerMissionCommands(program, context);
registerLedgerCommands(program, context);
registerConsoleCommand(program, context);
registerChannelCommands(program, context);
registerPublicCommands(program, context);
registerMcpCommand(program, context);

program.parseAsync(process.argv).catch((error: unknown) => context.fail(error));

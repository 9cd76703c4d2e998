// The mission queue: `dispatch` queues a later run of a tool, `missions` lists them with their results. Both are paid.
import {
  type DispatchInput,
  type DispatchOutput,
  type ListMissionsOutput,
  type Mission,
  type MissionStatus,
  type MissionTool,
  missionStatuses,
  missionTools,
} from "@agent-tools/sdk/contracts";
import { Argument, type Command, InvalidArgumentError, Option } from "commander";
import type { CommandContext } from "../context.js";
import { collect, parseCount, parseTokenId } from "../option-parsers.js";
import { type Style, table } from "../render.js";
import { missionParams, nextMorningUtc, parseRunAt } from "./mission-params.js";

interface DispatchOptions {
  tokenId: number;
  runAt?: string;
  param?: string[];
  params?: string;
}

interface MissionsOptions {
  tokenId: number;
  status?: MissionStatus;
  limit?: number;
}

const parseWhen = (value: string) => {
  try {
    return parseRunAt(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message.replace(/^--run-at \S+ is not a time: /, ""));
  }
};

export function registerMissionCommands(program: Command, context: CommandContext): void {
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
    .action((tool: MissionTool, options: DispatchOptions) => runDispatch(context, tool, options));

  program
    .command("missions")
    .description(
      "List your agent's missions, newest first, with status, results and counts (a paid call, like dispatch)",
    )
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
    .action((options: MissionsOptions) => runMissions(context, options));
}

async function runDispatch(context: CommandContext, tool: MissionTool, options: DispatchOptions): Promise<void> {
  let input: DispatchInput | undefined;
  try {
    context.refuseWatch("dispatch");
    const client = await context.client();
    // The params come from flags as text: the SDK checks them against the tool's own schema before sending.
    input = {
      tokenId: options.tokenId,
      mission: { tool, params: missionParams(tool, options.param, options.params) },
      ...(options.runAt ? { runAt: options.runAt } : {}),
    } as DispatchInput;
    const stop = context.spinner("Queueing the mission…");
    const result = await client.dispatch(input).finally(stop);
    context.print(result.data, (data) => renderDispatch(data, context.style));
    context.reportPayment(result.payment);
  } catch (error) {
    context.fail(error, input);
  }
}

async function runMissions(context: CommandContext, options: MissionsOptions): Promise<void> {
  try {
    context.refuseWatch("missions");
    const client = await context.client();
    const stop = context.spinner("Reading the missions…");
    const result = await client
      .missions({
        tokenId: options.tokenId,
        ...(options.status ? { status: options.status } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
      })
      .finally(stop);
    context.print(result.data, (data) => renderMissions(data, context.style));
    context.reportPayment(result.payment);
  } catch (error) {
    context.fail(error);
  }
}

const shortId = (id: string) => id.slice(0, 8);

/** The brief's pointer to the HTTP route that lists missions: the CLI names its own command instead. */
const HTTP_FOLLOW_UP = /\s*See its result with GET \/dispatch\?tokenId=\d+\.\s*$/;

/** `agent-tools dispatch`: the brief and the queued mission, and the one command that follows it. */
function renderDispatch(result: DispatchOutput, style: Style): string {
  const { mission } = result;
  const brief = result.brief.replace(HTTP_FOLLOW_UP, "");
  const rows: [string, string][] = [
    ["id", mission.id],
    ["tool", mission.tool],
    ["runAt", mission.runAt],
    ["status", mission.status],
  ];
  if (Object.keys(mission.params).length > 0) rows.push(["params", JSON.stringify(mission.params)]);
  return (
    `${brief}\n\n` +
    `${rows.map(([key, value]) => `${style.dim(key.padEnd(8))} ${value}`).join("\n")}\n\n` +
    `${style.dim(`Follow it with: agent-tools missions --token-id ${mission.tokenId}`)}\n`
  );
}

function missionRow(mission: Mission): Record<string, unknown> {
  return {
    id: shortId(mission.id),
    tool: mission.tool,
    status: mission.status,
    runAt: mission.runAt,
    finishedAt: mission.finishedAt,
    attempts: mission.attempts,
    error: mission.error ? `${mission.error.code}: ${mission.error.message}` : null,
  };
}

/** `agent-tools missions`: the brief, counts by status, a table of missions and the briefs of their results. */
function renderMissions(result: ListMissionsOutput, style: Style): string {
  const { counts } = result;
  const parts = [
    result.brief,
    `${style.bold(`missions (${result.missions.length})`)} ${style.dim(
      `· queued ${counts.queued} · running ${counts.running} · done ${counts.done} · failed ${counts.failed}`,
    )}\n${table(result.missions.map(missionRow), style)}`,
  ];
  const results = result.missions.filter((m) => m.result && typeof m.result.brief === "string");
  if (results.length > 0) {
    parts.push(
      `${style.bold("results")}\n${results
        .map((m) => `${style.dim(`${shortId(m.id)} ${m.tool}`)}  ${String(m.result!.brief)}`)
        .join("\n")}`,
    );
  }
  return `${parts.filter(Boolean).join("\n\n")}\n`;
}

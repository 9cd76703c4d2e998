import { readFileSync } from "node:fs";
import {
  accountFromPrivateKey,
  createAgentToolsClient,
  type Payment,
  type ToolName,
  toolRoutes,
  ValidationError,
} from "@agent-tools/sdk";
import { Command, InvalidArgumentError, Option } from "commander";
import { version } from "../package.json";
import { describeFailure, ExitCode } from "./exit-codes.js";
import { renderResult, styleFor, table } from "./render.js";
import { startSpinner } from "./spinner.js";
import { addToolOptions, toolInputFromOptions } from "./tool-options.js";
import { diffResults } from "./watch.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8402";

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

function fail(error: unknown): never {
  const { code, message } = describeFailure(error);
  err.write(`agent-tools: ${message}\n`);
  process.exit(code);
}

/** The signing key: --key-file, else AGENT_TOOLS_PRIVATE_KEY. Never printed. */
function readKey(options: GlobalOptions): `0x${string}` | undefined {
  let key = options.keyFile
    ? readFileSync(options.keyFile, "utf8").trim()
    : process.env.AGENT_TOOLS_PRIVATE_KEY?.trim();
  if (!key) return undefined;
  if (!key.startsWith("0x")) key = `0x${key}`;
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) {
    err.write(
      `agent-tools: the key ${options.keyFile ? `in ${options.keyFile}` : "in AGENT_TOOLS_PRIVATE_KEY"} is not a 32-byte hex private key.\n`,
    );
    process.exit(ExitCode.usage);
  }
  return key as `0x${string}`;
}

function clientFor(options: GlobalOptions) {
  const key = readKey(options);
  return createAgentToolsClient({
    baseUrl: options.baseUrl,
    maxPaymentPerCall: options.maxPrice,
    ...(key ? { account: accountFromPrivateKey(key) } : {}),
    signIn: !options.anonymous,
  });
}

function reportPayment(payment: Payment | null): void {
  if (!payment) return;
  err.write(
    errStyle.dim(
      `paid ${payment.amountUsd} USD from ${payment.payer} · tx ${payment.transaction} (${payment.network})\n`,
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

const program = new Command()
  .name("agent-tools")
  .description("Agent Tools from a terminal: radar scans and agent intel, paid per call with x402.")
  .version(version)
  .showHelpAfterError()
  .addOption(
    new Option("--base-url <url>", "service origin").default(process.env.AGENT_TOOLS_BASE_URL ?? DEFAULT_BASE_URL),
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
  $ agent-tools offer-radar --token-id 5 --slug night-owls --slug tide-pool --json
  $ agent-tools drop-radar --token-id 1 --watch 60
  $ agent-tools intel --token-id 7 --anonymous --max-price 1.00
  $ agent-tools agent 7

Exit codes: 0 ok, 2 bad usage or invalid request, 3 payment refused or over --max-price,
            4 forbidden (token or clearance), 5 upstream or network trouble.`,
  );

const globals = () => program.opts<GlobalOptions>();

async function runTool(name: ToolName, options: Record<string, unknown>): Promise<void> {
  const opts = globals();
  const client = clientFor(opts);
  const input = toolInputFromOptions(name, options);
  let previous: Record<string, unknown> | undefined;
  for (;;) {
    const stop = startSpinner(`${toolRoutes[name].summary}…`);
    let result: Awaited<ReturnType<(typeof client)[ToolName]>>;
    try {
      result = await (client[name] as (i: unknown) => ReturnType<(typeof client)[ToolName]>)(input);
    } catch (error) {
      stop();
      if (!opts.watch || error instanceof ValidationError) fail(error);
      err.write(`agent-tools: ${describeFailure(error).message}\n`);
      await new Promise((resolve) => setTimeout(resolve, opts.watch! * 1000));
      continue;
    }
    stop();
    const data = result.data as unknown as Record<string, unknown>;
    if (opts.json) {
      out.write(`${JSON.stringify(data)}\n`);
    } else if (!opts.watch || !previous) {
      out.write(renderResult(data, style));
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
    .description(`${route.summary}: ${route.description}`)
    .addHelpText(
      "after",
      `\nExample:\n  $ agent-tools ${commandNames[name]} ${Object.entries(route.sampleInput)
        .map(([k, v]) =>
          Array.isArray(v)
            ? v.map((x) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`).replace(/s$/, "")} ${x}`).join(" ")
            : `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${v}`,
        )
        .join(" ")}`,
    );
  addToolOptions(command, name).action((options: Record<string, unknown>) => runTool(name, options));
}

async function runPublic<T>(read: () => Promise<T>, render: (value: T) => string): Promise<void> {
  try {
    const value = await read();
    out.write(globals().json ? `${JSON.stringify(value)}\n` : render(value));
  } catch (error) {
    fail(error);
  }
}

program
  .command("health")
  .description("check that the service is up")
  .action(() =>
    runPublic(
      () => clientFor(globals()).health(),
      (h) => `${h.service} at ${globals().baseUrl}: ${h.ok ? style.green("up") : "down"}\n`,
    ),
  );

program
  .command("agent")
  .description("an agent's public identity record")
  .argument("<tokenId>", "token id, 1 to 6666", parseTokenId)
  .action((tokenId: number) =>
    runPublic(
      () => clientFor(globals()).agentInfo(tokenId),
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
      () => clientFor(globals()).binding(tokenId),
      (b) =>
        `token ${b.tokenId} · agent ${b.agentId} · ${b.bound ? style.green("bound") : "not bound"} · owner ${b.owner} · block ${b.blockNumber}\n`,
    ),
  );

program
  .command("catalog")
  .description("the payment catalog: every tool and its prices")
  .action(() =>
    runPublic(
      () => clientFor(globals()).catalog(),
      (c) =>
        `${table(
          c.items.map((item) => ({
            resource: item.resource.replace(c.homepage, ""),
            description: item.description.slice(0, 60),
            standard: `${Number(item.accepts[0]!.amount) / 1e6} USD`,
            holders: `${Number(item.accepts[1]?.amount ?? 0) / 1e6} USD`,
          })),
          style,
        )}\n`,
    ),
  );

program.parseAsync(process.argv).catch(fail);

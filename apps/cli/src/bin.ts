import { createAgentToolsClient } from "@agent-tools/sdk";
import { Command } from "commander";
import { version } from "../package.json";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8402";

const program = new Command()
  .name("agent-tools")
  .description("Run Agent Tools scans from a terminal.")
  .version(version)
  .option("--base-url <url>", "service origin", process.env.AGENT_TOOLS_BASE_URL ?? DEFAULT_BASE_URL)
  .option("--json", "print the response as JSON and nothing else on stdout")
  .addHelpText(
    "after",
    `
Examples:
  $ agent-tools health
  $ agent-tools health --base-url https://tools.example.org --json`,
  );

program
  .command("health")
  .description("check that the service is up")
  .action(async () => {
    const { baseUrl, json } = program.opts<{ baseUrl: string; json?: boolean }>();
    const client = createAgentToolsClient({ baseUrl });
    try {
      const health = await client.health();
      process.stdout.write(
        json ? `${JSON.stringify(health)}\n` : `${health.service} at ${baseUrl}: ${health.ok ? "up" : "down"}\n`,
      );
    } catch (error) {
      process.stderr.write(
        `agent-tools: ${(error as Error).message}\nIs the service running? Start it with: pnpm start\n`,
      );
      process.exitCode = 5;
    }
  });

await program.parseAsync(process.argv);

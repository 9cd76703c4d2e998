// The service's public records, free and without signing in: health, an agent, its binding, the payment catalog.
import { unitsToUsd } from "@agent-tools/sdk/contracts";
import type { Command } from "commander";
import type { CommandContext } from "../context.js";
import { parseTokenId } from "../option-parsers.js";
import { table } from "../render.js";

export function registerPublicCommands(program: Command, context: CommandContext): void {
  const { style } = context;

  program
    .command("health")
    .description("check that the service is up")
    .action(() =>
      runPublic(
        context,
        async () => (await context.client()).health(),
        (h) => `${h.service} at ${context.globals().baseUrl}: ${h.ok ? style.green("up") : "down"}\n`,
      ),
    );

  program
    .command("agent")
    .description("an agent's public identity record")
    .argument("<tokenId>", "token id, 1 to 6666", parseTokenId)
    .action((tokenId: number) =>
      runPublic(
        context,
        async () => (await context.client()).agentInfo(tokenId),
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
        context,
        async () => (await context.client()).binding(tokenId),
        (b) =>
          `token ${b.tokenId} · agent ${b.agentId} · ${b.bound ? style.green("bound") : "not bound"} · owner ${b.owner} · block ${b.blockNumber}\n`,
      ),
    );

  program
    .command("catalog")
    .description("the payment catalog: every tool and its prices")
    .action(() =>
      runPublic(
        context,
        async () => (await context.client()).catalog(),
        (c) =>
          `${table(
            c.items.map((item) => ({
              method: item.method,
              resource: item.resource.replace(c.homepage, ""),
              description: item.description.slice(0, 60),
              standard: `${unitsToUsd(item.accepts[0]!.amount)} USD`,
              holders: `${unitsToUsd(item.accepts[1]?.amount ?? "0")} USD`,
            })),
            style,
          )}\n`,
      ),
    );
}

async function runPublic<T>(
  context: CommandContext,
  read: () => Promise<T>,
  render: (value: T) => string,
): Promise<void> {
  try {
    context.print(await read(), render);
  } catch (error) {
    context.fail(error);
  }
}

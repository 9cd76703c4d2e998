/**
 * The market tools' own time, measured by calling each tool directly (no HTTP, no payment: those are the other
 * lines' subject): `/drop-radar` with scanChains across the known chains against a marketplace simulator that
 * answers every call after 150 ms, cold (empty caches) and warm (the same scan again), next to one upstream call;
 * and `/b20-radar` over 604,800 blocks of a fresh devnet's L2, cold and repeated (the scanner keeps what it read).
 */
import { createInProcessDevnet } from "@agent-tools/devnet";
import { simWalletAccessToken, startUpstreamSims } from "@agent-tools/upstream-sim";
import type { PublicClient } from "viem";
import { loadConfig } from "../src/config/config.js";
import { toolDeps } from "../src/startup/compose.js";
import { createTools } from "../src/tools/index.js";
import type { ToolContext } from "../src/tools/types.js";

const SIM_LATENCY_MS = 150;

export interface MarketLine {
  label: string;
  ms: number;
  upstreamCalls: number;
  note: string;
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await run();
  return { ms: performance.now() - start, value };
}

export async function benchMarket(progress: (line: string) => void): Promise<MarketLine[]> {
  const lines: MarketLine[] = [];
  const [devnet, sims] = await Promise.all([createInProcessDevnet(), startUpstreamSims({ latencyMs: SIM_LATENCY_MS })]);
  try {
    const operator = devnet.deployment.accounts[0]!;
    const config = loadConfig({
      MARKETPLACE_URL: sims.urls.marketplace,
      MARKET_DATA_URL: sims.urls.marketData,
      PAY_TO: operator.address,
      FACILITATOR_PRIVATE_KEY: operator.privateKey,
    });
    const deps = toolDeps(config, devnet.l2.publicClient as unknown as PublicClient, (w) => simWalletAccessToken(w));
    const tools = createTools(deps);
    const context = { now: () => new Date() } as unknown as ToolContext;

    progress(`drop radar: one upstream call at ${SIM_LATENCY_MS} ms simulated latency`);
    const one = await timed(() =>
      fetch(`${sims.urls.marketplace}/api/v2/drops?type=featured&limit=20`, { headers: { "x-api-key": "bench" } }).then(
        (r) => r.json(),
      ),
    );
    lines.push({
      label: "one marketplace call",
      ms: one.ms,
      upstreamCalls: 1,
      note: `simulated latency ${SIM_LATENCY_MS} ms`,
    });

    const params = {
      tokenId: 1,
      type: "all",
      limit: 20,
      scanChains: true,
      enrich: false,
      checkWalletEligibility: false,
      watchSlugs: [],
    };
    for (const phase of ["cold", "warm"] as const) {
      const before = sims.marketplace.requests().length;
      const run = await timed(() => tools.dropRadar!(params as never, context));
      const calls = sims.marketplace.requests().length - before;
      lines.push({
        label: `/drop-radar all feeds, scanChains, ${phase}`,
        ms: run.ms,
        upstreamCalls: calls,
        note: `${run.value.count} drops; ${calls} upstream calls in parallel`,
      });
    }

    const b20 = { tokenId: 1, blocksBack: 604_800, limit: 25 };
    sims.marketData.setLatency(0);
    for (const phase of ["cold", "repeated"] as const) {
      if (phase === "repeated") await devnet.l2.provider.request({ method: "evm_mine", params: [] });
      const run = await timed(() => tools.b20Radar!(b20 as never, context));
      lines.push({
        label: `/b20-radar 604,800 blocks, ${phase}`,
        ms: run.ms,
        upstreamCalls: 0,
        note: `${run.value.detectedCount} tokens, blocks ${run.value.fromBlock}-${run.value.toBlock}`,
      });
    }
    return lines;
  } finally {
    await Promise.all([devnet.close(), sims.close()]);
  }
}

export function printMarket(lines: MarketLine[]): void {
  process.stdout.write("\nMarket tools, the tool's own time (direct call, no HTTP or payment):\n");
  const width = Math.max(...lines.map((l) => l.label.length));
  for (const line of lines) {
    process.stdout.write(`  ${line.label.padEnd(width)}  ${line.ms.toFixed(0).padStart(6)} ms   ${line.note}\n`);
  }
}

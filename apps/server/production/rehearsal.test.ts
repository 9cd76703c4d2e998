/**
 * `pnpm test:production`: the deployment an operator runs, rehearsed end to end (production/environment.ts). A
 * client session with the `agent-tools` command line: every tool paid anonymously and as a holder, a mission, the
 * ledger, a restart, a token changing hands on chain; then calls paid over a payment channel by x402's own channel
 * client, claimed and given back through the reference facilitator over HTTP; then the server's memory at rest and
 * under load. One line of figures at the end.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { agentCollectionAbi, BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi, usdTokenAbi } from "@agent-tools/contracts";
import { meteredCharge } from "@agent-tools/schema";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { type Address, createWalletClient, type Hex, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForOutput } from "../src/startup/embedded-process.js";
import { createPace } from "../test/helpers/pace.js";
import { paymentHeader } from "../test/helpers/x402-client.js";
import { x402ChannelPayer } from "../test/helpers/x402-payer.js";
import {
  BLOCK_MS,
  MARKETPLACE_BUDGET,
  type Production,
  REHEARSAL_OVERRIDES,
  RPC_LOG_RANGE,
  startProduction,
  type Wallet,
} from "./environment.js";

const cliScript = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url));
let production: Production;
const figures: Record<string, string> = {};
/** Where the command line's key files are written (and removed at the end). */
const keyDir = mkdtempSync(join(tmpdir(), "agent-tools-rehearsal-keys-"));

beforeAll(async () => {
  production = await startProduction();
}, 300_000);
afterAll(async () => {
  await production?.close();
  rmSync(keyDir, { recursive: true, force: true });
  console.log(`production: ${Object.values(figures).join("; ")}`);
});

/** One `agent-tools` run as a user types it, with `account`'s key in a file of its own; its exit and output. */
async function cli(args: string[], wallet?: Wallet): Promise<{ code: number; json: unknown; ms: number; out: string }> {
  const keyArgs: string[] = [];
  if (wallet) {
    const keyFile = join(keyDir, wallet.account.address);
    writeFileSync(keyFile, `${wallet.key}\n`, { mode: 0o600 });
    keyArgs.push("--key-file", keyFile);
  }
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      // Paid with `exact` (--no-channel), each call settled on chain: the ledger is checked against the chain's
      // transfers below. The channel line of the rehearsal pays over a channel with x402's own client.
      [cliScript, "--base-url", production.url, "--json", "--no-channel", ...keyArgs, ...args],
      // What the command keeps between runs (spend logs) stays in the rehearsal's directory, not the user's home.
      { encoding: "utf8", timeout: 120_000, env: { ...process.env, XDG_STATE_HOME: join(keyDir, "state") } },
      (error, stdout, stderr) => {
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, json, ms: performance.now() - started, out: `${stdout}${stderr}` });
      },
    );
  });
}

/** The p50 of some durations, in ms. */
const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** A Prometheus counter's total over its labels, as `/metrics` shows it. */
async function metric(name: string): Promise<number> {
  const text = await (await fetch(production.metricsUrl)).text();
  return [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, "gm"))].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
}

describe("the production configuration", () => {
  it("is the example configuration with only the rehearsal's URLs, addresses and keys filled in", () => {
    const allowed = new Set([
      "PORT",
      "PUBLIC_URL",
      "METRICS_PORT",
      "PAY_TO",
      "OPERATOR_ADDRESS",
      "PAYMENT_ASSET",
      "L2_RPC_URL",
      "FACILITATOR_URLS",
      "FACILITATOR_API_KEYS",
      "CDP_API_KEY_ID",
      "CDP_API_KEY_SECRET",
      "RECEIPT_SIGNER_PRIVATE_KEY",
      "CHANNEL_PRIVATE_KEY",
      "L1_RPC_URL",
      "COLLECTION_ADDRESS",
      "IDENTITY_REGISTRY_ADDRESS",
      "MARKETPLACE_URL",
      "MARKETPLACE_API_KEY",
      "MARKETPLACE_REQUESTS_PER_MINUTE",
      "ELIGIBILITY_TOKENS_FILE",
      "MARKET_DATA_URL",
      "DATABASE_URL",
    ]);
    expect(production.filledIn.filter((name) => !allowed.has(name))).toEqual([]);
  });

  it("is all the server is given, but for the claim pass's interval in its environment", () => {
    // What the server process was started with (its environment as exec gave it, before --env-file read the file).
    const names = readFileSync(`/proc/${production.server.child.pid}/environ`, "utf8")
      .split("\0")
      .filter(Boolean)
      .map((entry) => entry.slice(0, entry.indexOf("=")));
    expect(names.filter((name) => name !== "PATH").sort()).toEqual(Object.keys(REHEARSAL_OVERRIDES).sort());
    expect(REHEARSAL_OVERRIDES).toEqual({ CHANNEL_CLAIM_INTERVAL_MS: "2000" });
  });
});

/** What each tool is asked for, for the Elite token 5 (its holder, account 5, may call every one). */
const TOOLS: [string, string[]][] = [
  ["intel", ["--token-id", "5"]],
  ["drop-radar", ["--token-id", "5", "--type", "all", "--limit", "5"]],
  ["b20-radar", ["--token-id", "5", "--limit", "5"]],
  ["altchain-radar", ["--token-id", "5", "--limit", "5"]],
  ["portfolio", ["--token-id", "5"]],
  ["allowlist-scan", ["--token-id", "5", "--limit", "5"]],
  ["offer-radar", ["--token-id", "5", "--slug", "base-bloomers"]],
];

describe("a client session", () => {
  const times = new Map<string, number[]>();
  let calls = 0;

  it("pays for every tool anonymously and as the holder, through the second facilitator while the first is down", async () => {
    const holder = production.holder(5);
    // Anonymous: a payer of the rehearsal's own per tool, all at once (the wallet tools pointed at the holder's
    // wallet); meanwhile the holder, signed in, calls each tool in turn.
    const anonymous = Promise.all(
      TOOLS.map(([tool, args], i) => {
        const walletArgs =
          tool === "portfolio" || tool === "allowlist-scan" ? ["--wallet-address", holder.account.address] : [];
        return cli([tool, ...args, ...walletArgs, "--anonymous"], production.payers[i]!);
      }),
    );
    const signedIn: Awaited<ReturnType<typeof cli>>[] = [];
    for (const [tool, args] of TOOLS) signedIn.push(await cli([tool, ...args], holder));
    for (const [i, run] of (await anonymous).entries()) {
      const [tool] = TOOLS[i]!;
      expect(run.code, `${tool} anonymous: ${run.out}`).toBe(0);
      expect(signedIn[i]!.code, `${tool} as holder: ${signedIn[i]!.out}`).toBe(0);
      expect((run.json as { brief: string }).brief.length).toBeGreaterThan(0);
      expect((signedIn[i]!.json as { brief: string }).brief.length).toBeGreaterThan(0);
      // Each paid answer came with a receipt the CLI checked, signed by the configured key.
      for (const { out } of [run, signedIn[i]!]) expect(out).toContain(`receipt signed by ${production.receiptSigner}`);
      times.set(tool, [run.ms, signedIn[i]!.ms]);
      calls += 2;
    }
    expect(await metric("agent_tools_facilitator_failovers_total")).toBeGreaterThanOrEqual(1);
  }, 300_000);

  it("queues a mission that runs, and lists it with its result", async () => {
    const holder = production.holder(5);
    const seen = production.server.output().length;
    const queued = await cli(["dispatch", "intel", "--token-id", "5"], holder);
    expect(queued.code, queued.out).toBe(0);
    const id = (queued.json as { mission: { id: string } }).mission.id;
    await waitForOutput(
      { ...production.server, output: () => production.server.output().slice(seen) },
      new RegExp(`"mission":"${id}"[^\\n]*"msg":"mission done"`),
      120_000,
      `mission ${id}`,
    );
    const listed = await cli(["missions", "--token-id", "5", "--status", "done"], holder);
    expect(listed.code, listed.out).toBe(0);
    const missions = (listed.json as { missions: { id: string; result: { brief?: string } | null }[] }).missions;
    expect(missions.find((m) => m.id === id)?.result?.brief).toBeTruthy();
    calls += 2;
  }, 180_000);

  it("books every settlement the chain shows, across a restart", async () => {
    const before = await cli(["ledger", "--limit", "500"], production.operator);
    expect(before.code, before.out).toBe(0);
    await production.stop();
    await production.start();
    const after = await cli(["ledger", "--limit", "500"], production.operator);
    expect(after.code, after.out).toBe(0);
    const ledger = after.json as { total: { payments: number; amount: string }; unconfirmed: number };
    expect(ledger.total).toEqual((before.json as typeof ledger).total);
    const transfers = await production.l2.getContractEvents({
      address: production.asset,
      abi: usdTokenAbi,
      eventName: "Transfer",
      args: { to: production.payTo },
      fromBlock: 0n,
    });
    expect(ledger.total.payments).toBe(transfers.length);
    expect(ledger.total.amount).toBe(transfers.reduce((sum, t) => sum + t.args.value!, 0n).toString());
    // And the service serves after the restart.
    const again = await cli(["intel", "--token-id", "5"], production.holder(5));
    expect(again.code, again.out).toBe(0);
    calls++;
    figures.settlements = `${transfers.length + 1} settlements booked = on chain, across a restart`;
  }, 180_000);

  it("follows a token that changes hands on chain: the old holder is refused, the new one served", async () => {
    // Token 3 goes from account 3 to account 4, in a block of the collection chain.
    const [from, to] = [production.holder(3), production.holder(4)];
    const wallet = createWalletClient({
      account: from.account,
      transport: http(production.devnet.deployment.l1.rpcUrl),
    });
    const hash = await wallet.writeContract({
      chain: null,
      address: production.devnet.deployment.addresses.collection,
      abi: agentCollectionAbi,
      functionName: "transferFrom",
      args: [from.account.address, to.account.address, 3n],
    });
    await production.l1.waitForTransactionReceipt({ hash, pollingInterval: BLOCK_MS.l1 / 4 });
    // The free identity record says when the service has seen it.
    for (;;) {
      const info = (await (await fetch(`${production.url}/agents/info/3`)).json()) as { owner?: string };
      if (info.owner?.toLowerCase() === to.account.address.toLowerCase()) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const refused = await cli(["intel", "--token-id", "3"], from);
    expect(refused.code).not.toBe(0);
    expect(refused.out).toMatch(/not_token_owner|does not own|not own/i);
    const served = await cli(["intel", "--token-id", "3"], to);
    expect(served.code, served.out).toBe(0);
    calls += 2;
  }, 120_000);

  it("ends with its figures", async () => {
    const failovers = await metric("agent_tools_facilitator_failovers_total");
    const marketplaceCalls = production.sims.marketplace.requests().length;
    const throttled = production.sims.marketplace.requests().filter((r) => r.status === 429).length;
    expect(throttled, "the marketplace never throttled the service: it kept within its key's budget").toBe(0);
    figures.calls = `${calls} CLI calls, p50 per tool ${[...times].map(([tool, ms]) => `${tool} ${Math.round(p50(ms))} ms`).join(", ")}`;
    figures.failovers = `${failovers} facilitator failover${failovers === 1 ? "" : "s"} (the first facilitator down)`;
    figures.upstream = `marketplace ${marketplaceCalls} calls against a budget of ${MARKETPLACE_BUDGET}/min, 0 throttled`;
    const rpc = [production.rpc.l1.stats(), production.rpc.l2.stats()];
    const sum = (key: "logs" | "logRangeRefused" | "throttled") => rpc.reduce((n, stats) => n + stats[key], 0);
    expect(sum("logRangeRefused"), "an eth_getLogs wider than the provider's cap").toBe(0);
    figures.rpc = `RPC: ${sum("logs")} eth_getLogs within the ${RPC_LOG_RANGE}-block cap (0 refused), ${sum("throttled")} answers 429 retried`;
  });
});

/** The rehearsal's payment token balance of `address`, in base units. */
const usdBalance = (address: Address) =>
  production.l2.readContract({
    address: production.asset,
    abi: usdTokenAbi,
    functionName: "balanceOf",
    args: [address],
  });

/** A channel as the channel contract holds it. */
async function channelOnChain(channelId: Hex): Promise<{ balance: bigint; totalClaimed: bigint }> {
  const [balance, totalClaimed] = await production.l2.readContract({
    address: BATCH_SETTLEMENT_ADDRESS,
    abi: batchSettlementAbi,
    functionName: "channels",
    args: [channelId],
  });
  return { balance, totalClaimed };
}

/**
 * Resolves once `done` holds on the payment chain, checking it at every new block (a moment something may have
 * landed in); rejects, saying `what`, if it does not within `timeoutMs`.
 */
function untilChain(what: string, done: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let checking = false;
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`${what}: not seen on chain within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const stop = production.l2.watchBlockNumber({
      emitOnBegin: true,
      pollingInterval: BLOCK_MS.l2 / 2,
      onBlockNumber: () => {
        if (checking) return;
        checking = true;
        done().then(
          (yes) => {
            checking = false;
            if (!yes) return;
            clearTimeout(timer);
            stop();
            resolve();
          },
          (error: unknown) => {
            clearTimeout(timer);
            stop();
            reject(error);
          },
        );
      },
    });
  });
}

describe("a payment channel", () => {
  it("x402's channel client deposits and pays five calls; the service's claim pass claims them and the rest goes back, through the reference facilitator over HTTP", async () => {
    const payer = production.channelPayer.account;
    // x402's channel client on @x402/fetch, unmodified, paying over channels only. It deposits eight calls' worth
    // (its default is five), so that something is left to give back after five.
    const { scheme, post } = x402ChannelPayer({
      account: payer,
      chain: production.l2,
      network: "eip155:8453",
      asset: production.asset,
      options: { depositPolicy: { depositMultiplier: 8 } },
    });
    const intel = () => post(`${production.url}/intel`, { tokenId: 5 });

    // The 402 offers the channel beside exact, with the service's channel key as its receiver authorizer.
    const quote = await fetch(`${production.url}/intel`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tokenId: 5 }),
    });
    expect(quote.status).toBe(402);
    const accepts = ((await quote.json()) as PaymentRequired).accepts;
    expect(accepts.map((accept) => accept.scheme)).toEqual(["exact", "batch-settlement"]);
    const offer = accepts[1]!;
    expect(offer.extra).toMatchObject({ receiverAuthorizer: production.channelAuthorizer });
    const price = BigInt(offer.amount);
    // Each call is charged by its work (one agent examined), under the price its voucher signs as a ceiling.
    const charge = meteredCharge({ upstreamReads: 0, itemsExamined: 1, blocksScanned: 0 }, price);
    expect(charge).toBeLessThan(price);

    const before = await usdBalance(payer.address);
    const startBlock = await production.l2.getBlockNumber();
    const settlements: ReturnType<typeof decodePaymentResponseHeader>[] = [];
    const times: number[] = [];
    for (let call = 0; call < 5; call += 1) {
      const started = performance.now();
      const res = await intel();
      times.push(performance.now() - started);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(((await res.json()) as { brief: string }).brief.length).toBeGreaterThan(0);
      settlements.push(decodePaymentResponseHeader(res.headers.get("payment-response")!));
    }
    const lastCall = performance.now();
    // The first call deposited, in a transaction the reference facilitator sent; the next four moved nothing on chain.
    const deposit = BigInt(settlements[0]!.amount!);
    expect(deposit).toBe(8n * price);
    expect(settlements[0]!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(settlements.slice(1).map((s) => s.transaction)).toEqual(["", "", "", ""]);
    expect((await production.l2.getTransaction({ hash: settlements[0]!.transaction as Hex })).from.toLowerCase()).toBe(
      production.facilitator.toLowerCase(),
    );
    expect(await usdBalance(payer.address)).toBe(before - deposit);
    const states = settlements.map(
      (s) => (s.extra as { channelState: { channelId: Hex; chargedCumulativeAmount: string } }).channelState,
    );
    const channelId = states[0]!.channelId;
    expect(states.map((state) => state.channelId)).toEqual(Array(5).fill(channelId));
    expect(states.map((state) => BigInt(state.chargedCumulativeAmount))).toEqual(
      [1n, 2n, 3n, 4n, 5n].map((n) => n * charge),
    );

    // The service's claim pass (every 2 s here) claims what the five calls were charged through the reference
    // facilitator, then sweeps it to payTo in the same pass (the instance stopped for the restart above gave the
    // claimer's lease up).
    await untilChain(
      "the five calls claimed and swept",
      async () => {
        const { totalClaimed } = await channelOnChain(channelId);
        const [, totalSettled] = await production.l2.readContract({
          address: BATCH_SETTLEMENT_ADDRESS,
          abi: batchSettlementAbi,
          functionName: "receivers",
          args: [production.payTo, production.asset],
        });
        return totalClaimed === 5n * charge && totalSettled === 5n * charge;
      },
      120_000,
    );
    const claimSeconds = (performance.now() - lastCall) / 1000;
    expect(await channelOnChain(channelId)).toEqual({ balance: deposit, totalClaimed: 5n * charge });
    const events = async (eventName: "Claimed" | "Settled" | "Refunded") =>
      production.l2.getContractEvents({
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: batchSettlementAbi,
        eventName,
        fromBlock: startBlock,
      });
    const claims = await events("Claimed");
    expect(claims.reduce((sum, log) => sum + (log.args as { claimAmount: bigint }).claimAmount, 0n)).toBe(5n * charge);
    const sweeps = await events("Settled");
    for (const log of [...claims, ...sweeps]) {
      expect((log.args as { sender: Address }).sender.toLowerCase()).toBe(production.facilitator.toLowerCase());
    }

    // The payer takes back what is left: a cooperative refund through the service, sent by the reference facilitator.
    const refundBefore = await usdBalance(payer.address);
    const refunded = await scheme.refund(`${production.url}/intel?tokenId=5`);
    expect(refunded.success).toBe(true);
    expect(await usdBalance(payer.address)).toBe(refundBefore + deposit - 5n * charge);
    expect(await channelOnChain(channelId)).toEqual({ balance: 5n * charge, totalClaimed: 5n * charge });
    const refunds = await events("Refunded");
    expect(refunds.map((log) => (log.args as { amount: bigint }).amount)).toEqual([deposit - 5n * charge]);
    expect((refunds[0]!.args as { sender: Address }).sender.toLowerCase()).toBe(production.facilitator.toLowerCase());

    // The operator's report says the same.
    const report = await cli(["ledger", "--limit", "0"], production.operator);
    expect(report.code, report.out).toBe(0);
    const amount = (value: bigint) => expect.objectContaining({ amount: value.toString() });
    expect((report.json as { channels?: unknown }).channels).toEqual({
      channels: 1,
      deposited: amount(deposit),
      charged: amount(5n * charge),
      claimed: amount(5n * charge),
      swept: amount(5n * charge),
      refunded: amount(deposit - 5n * charge),
      unclaimed: amount(0n),
    });
    figures.channel =
      `a channel: 5 calls over one deposit (p50 ${Math.round(p50(times))} ms, the first with its deposit ${Math.round(times[0]!)} ms), ` +
      `claimed and swept by the service's pass ${claimSeconds.toFixed(1)} s after the last, the rest refunded, ` +
      "each transaction sent by the reference facilitator over HTTP";
  }, 240_000);
});

describe("memory", () => {
  it("stays under 300 MB at rest and under sustained load, on Postgres", async () => {
    const atRest = production.rss();
    // 15 s of load: public reads and 402 challenges at 150 a second, paid calls from three payers at 10 a second
    // each. Paced, so that a fast machine stays within the per-address limit of the paid routes (200 a second: 75
    // challenges and 60 paid requests with their quotes here) and a slow one simply sends less.
    const stopAt = performance.now() + 15_000;
    const pace = createPace(150);
    const reads = (async () => {
      let n = 0;
      while (performance.now() < stopAt) {
        await pace();
        const res =
          n++ % 2 === 0
            ? await fetch(`${production.url}/agents/info/${1 + (n % 100)}`)
            : await fetch(`${production.url}/intel`, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({ tokenId: 1 + (n % 100) }),
              });
        await res.arrayBuffer();
      }
      return n;
    })();
    let peak = atRest;
    const paid = production.payers.slice(0, 3).map(async (payer) => {
      const payerPace = createPace(10);
      let n = 0;
      while (performance.now() < stopAt) {
        await payerPace();
        const quote = await fetch(`${production.url}/intel`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ tokenId: 7 }),
        });
        const payment = await paymentHeader(payer.account, production.l2, await quote.json(), {
          network: "eip155:8453",
          asset: production.asset,
        });
        const res = await fetch(`${production.url}/intel`, {
          method: "POST",
          headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": payment },
          body: JSON.stringify({ tokenId: 7 }),
        });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
        peak = Math.max(peak, production.rss());
        n++;
      }
      return n;
    });
    const [requests, ...paidCalls] = await Promise.all([reads, ...paid]);
    const underLoad = Math.max(peak, production.rss());
    const mb = (bytes: number) => Math.round(bytes / 1_048_576);
    figures.memory = `rss ${mb(atRest)} MB at rest, ${mb(underLoad)} MB at most under load (${requests} reads and challenges, ${paidCalls.reduce((a, b) => a + b, 0)} paid calls in 15 s)`;
    expect(atRest).toBeLessThan(300 * 1_048_576);
    expect(underLoad).toBeLessThan(300 * 1_048_576);
  }, 120_000);
});

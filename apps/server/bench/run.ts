/**
 * `pnpm bench`: the service as shipped, next to references built from off-the-shelf parts, in one run on
 * loopback. It prints; it asserts nothing.
 *
 * - The devnet runs in a process of its own (as `pnpm start` runs it), serving JSON-RPC over HTTP.
 * - Ours: `node apps/server/dist/main.js` reaching the chains over HTTP, PGlite on disk, info-level logs to a file,
 *   the built-in facilitator.
 * - References, in another process: a bare Express 5 app, and plain `@x402/express` with x402's own facilitator
 *   settling on the same chain over HTTP (bench/apps.ts).
 * - This process only generates the load (autocannon, 10 connections; at a rate, its own sender, calls at even
 *   intervals), the two sides of each comparison in
 *   alternating rounds, and reads each server process's CPU time from /proc.
 * - Then, with every chain call held 100 ms by a proxy (a remote RPC), ours again: public GET and 402 latency,
 *   and paid calls per second next to what settlements sent one at a time would allow.
 *
 * - Paid calls over MCP (`POST /mcp`, the payment in the call's `_meta`) next to the same calls over HTTP.
 * - Settlements: ours as shipped (batched) next to ours sending each settlement alone (`SETTLEMENT_BATCH_SIZE=1`,
 *   its own key), as fast as answers come, at 50 and 100 paid calls/s, at 100/s on a chain that mines a block every second,
 *   and behind the 100 ms proxy (64 connections, and 100 calls/s); gas per settled payment read from the receipts.
 *
 * - The operator's ledger (bench/ledger.ts): ours as built on a throwaway Postgres cluster (DATABASE_URL) and on
 *   PGlite (DATA_DIR), the book grown with synthetic settled payments through the migrated schema; at each size the
 *   SDK, signed in as the operator, times the reports, a first and a middle page, the CSV export (with both sides'
 *   resident memory), and the store times one paid call's ledger write (claim, then settle).
 *
 * - Paid calls over x402 `batch-settlement` channels (bench/channels.ts) next to paid `exact` calls and
 *   `@x402/express` in the same run; at 100 calls/s on a chain mining a block every second, next to `exact`; and the
 *   gas of 1,000 calls over channels (deposits, claims and sweeps) next to `exact`'s, from the receipts.
 *
 * - A terminal session (bench/cli-session.ts): 20 runs of the built `agent-tools intel` on a chain mining a block every
 *   second, paid with `exact`, then over a channel refunded at the end; wall time and gas.
 *
 *   --only=healthz,info,challenge,paid,channels,cli,mcp,batching,remote,market,ledger   run some lines only
 *   --ledger-sizes=10000,1000000,10000000       the ledger line's book sizes on Postgres (payments, grown in turn)
 *   --ledger-pglite-sizes=10000,100000,1000000  and on PGlite (a size that would grow for over 5 minutes is left out)
 *   --cpu-prof[=dir]                                   write CPU profiles of our server (default ./bench-profiles)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { spawnDevnetProcess } from "@agent-tools/devnet";
import { toolRoutes } from "@agent-tools/schema";
import { deploymentEnv } from "../test/helpers/deployment-env.js";
import { type ChannelSide, channelCalls, channelGas, openChannels } from "./channels.js";
import { benchCliSession, SESSION_CALLS } from "./cli-session.js";
import { benchLedger, type LedgerLine, printLedger } from "./ledger.js";
import { alternate, combine, type LoadOptions, type LoadResult, load, type ServerCpu } from "./load.js";
import { benchMarket, type MarketLine, printMarket } from "./market.js";
import { benchPaid } from "./paid.js";
import { createSigners, HOLDER_BODY, HOLDER_INDEX, INTEL_BODY } from "./payments.js";
import { type OurServer, processCpuMicros, startOurServer, startReferenceHost } from "./processes.js";
import { comparedSettlements, printSettlements, type SettlementRow, settlementCost } from "./settlements.js";
import { fmt, printTable, type Row } from "./table.js";

const args = process.argv.slice(2);
const only = args
  .find((a) => a.startsWith("--only="))
  ?.slice(7)
  .split(",");
const wants = (line: string) => !only || only.includes(line);
/** Book sizes of the ledger line (`--ledger-sizes=10000,1000000`), Postgres and PGlite. */
const sizesOf = (flag: string) =>
  args
    .find((a) => a.startsWith(`${flag}=`))
    ?.slice(flag.length + 1)
    .split(",")
    .filter(Boolean)
    .map(Number);
const ledgerSizes = sizesOf("--ledger-sizes");
const pgliteSizes = sizesOf("--ledger-pglite-sizes");
/** The lines that run against the devnet, ours next to the references (the others start what they need). */
const CHAIN_LINES = ["healthz", "info", "challenge", "paid", "channels", "cli", "mcp", "batching", "remote"];
const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);

/** Latency the proxy adds to every chain call in the remote lines. */
const REMOTE_RPC_MS = 100;
/** Connections of the remote paid line: pipelined settlements show with calls in flight, not one at a time. */
const REMOTE_PAID_CONNECTIONS = 64;
/** Paid calls per second at even intervals behind the proxy. */
const REMOTE_PACED_RATE = 100;
const ROUNDS = 2;
const SECONDS_PER_ROUND = 3;
/** The steady paid load of the settlement lines, and the block time of their interval-mined line. */
const STEADY_RATE = 100;
const BLOCK_MS = 1000;
/** The origin the reference app binds sign-ins to. */
const REFERENCE_ORIGIN = "http://reference.bench";

/** Two sides of a comparison, each warmed up, then measured in alternating rounds. */
async function compare<K extends string>(sides: Record<K, LoadOptions>): Promise<Record<K, LoadResult>> {
  for (const options of Object.values(sides) as LoadOptions[]) await load({ ...options, seconds: 1 });
  const runs = await alternate(
    ROUNDS,
    Object.fromEntries(
      (Object.entries(sides) as [K, LoadOptions][]).map(([key, options]) => [
        key,
        () => load({ ...options, seconds: SECONDS_PER_ROUND }),
      ]),
    ) as Record<K, () => Promise<LoadResult>>,
  );
  return Object.fromEntries((Object.keys(sides) as K[]).map((key) => [key, combine(runs[key])])) as Record<
    K,
    LoadResult
  >;
}

/** One JSON-RPC call (the devnet's mining controls). */
async function rpc(url: string, method: string, params: unknown[]): Promise<void> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const answer = (await res.json()) as { error?: { message: string } };
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
}

/** The lines that run against the devnet: ours next to the references, the settlement lines, the remote lines. */
async function chainLines(out: {
  rows: Row[];
  settlementRows: SettlementRow[];
  breakdowns: { label: string; serverTimings: string[] }[];
  notes: string[];
}): Promise<void> {
  const { rows, settlementRows, breakdowns, notes } = out;
  const temp = mkdtempSync(join(tmpdir(), "agent-tools-bench-"));
  progress("starting the devnet in its own process");
  const devnet = await spawnDevnetProcess({ l1Port: 0, l2Port: 0 });
  const { deployment } = devnet;
  const accounts = deployment.accounts;
  const network = `eip155:${deployment.l2.chainId}` as const;
  const ourEnv = (l1: string, l2: string, data: string) => ({
    ...deploymentEnv(deployment, { l1, l2 }),
    FACILITATOR_PRIVATE_KEY: accounts[0]!.privateKey,
    DATA_DIR: join(temp, data),
    // The load comes from one address (and the holder lines from one payer) on behalf of many clients: the
    // per-address and per-payer limits are lifted so that they measure the paid path, not the limiter.
    PAID_RATE_PER_IP: "1000000",
    PAID_CONCURRENCY_PER_IP: "100000",
    PAID_RATE_PER_PAYER: "1000000",
    PAID_CONCURRENCY_PER_PAYER: "100000",
  });
  const reference = startReferenceHost();
  let ours: OurServer | undefined;
  let single: OurServer | undefined;
  /** Ours with each settlement sent alone, from a key of its own (devnet account 8). */
  const singleEnv = (l1: string, l2: string, data: string) => ({
    ...ourEnv(l1, l2, data),
    FACILITATOR_PRIVATE_KEY: accounts[8]!.privateKey,
    SETTLEMENT_BATCH_SIZE: "1",
  });
  try {
    progress("starting our server (dist/main.js) and the references");
    ours = await startOurServer(ourEnv(deployment.l1.rpcUrl, deployment.l2.rpcUrl, "data"), join(temp, "ours.log"));
    const ourCpu: ServerCpu = async () => processCpuMicros(ours!.pid);
    const referenceCpu: ServerCpu = async () => processCpuMicros(reference.pid);
    const infoBody = await (await fetch(`${ours.url}/agents/info/1`)).text();
    const ready = await reference.ask({
      type: "start",
      terms: {
        network,
        rpcUrl: deployment.l2.rpcUrl,
        asset: deployment.addresses.usdToken,
        payTo: accounts[0]!.address,
        amount: "1000000",
        holderAmount: "10000",
        maxTimeoutSeconds: 120,
        // x402's facilitator settles from its own key: the two facilitators never share a nonce sequence.
        facilitatorKey: accounts[9]!.privateKey,
        publicUrl: REFERENCE_ORIGIN,
        signInChains: [`eip155:${deployment.l1.chainId}`, network],
      },
      infoBody,
      answer: JSON.stringify(toolRoutes.intel.sampleOutput),
    });
    if (ready.type !== "ready") throw new Error("the reference process did not start");
    const signers = createSigners({
      privateKeys: accounts.map((a) => a.privateKey),
      network,
      asset: deployment.addresses.usdToken,
      l1ChainId: deployment.l1.chainId,
    });

    if (wants("healthz")) {
      progress("GET /healthz next to bare Express GET /ping");
      const r = await compare({
        bare: { url: `${ready.bare}/ping`, expect: 200, serverCpu: referenceCpu },
        ours: { url: `${ours.url}/healthz`, expect: 200, serverCpu: ourCpu },
      });
      rows.push(
        { line: "GET /healthz", app: "bare Express 5 /ping", result: r.bare },
        { line: "GET /healthz", app: "ours", result: r.ours, versus: r.bare },
      );
    }
    if (wants("info")) {
      progress("GET /agents/info/1 next to bare Express answering the same body");
      const r = await compare({
        bare: { url: `${ready.bare}/agents/info/1`, expect: 200, serverCpu: referenceCpu },
        ours: { url: `${ours.url}/agents/info/1`, expect: 200, serverCpu: ourCpu },
      });
      rows.push(
        { line: "GET /agents/info/1", app: "bare Express 5", result: r.bare },
        { line: "GET /agents/info/1", app: "ours", result: r.ours, versus: r.bare },
      );
    }
    if (wants("challenge")) {
      progress("402 challenge next to @x402/express with the SIWX extension");
      const post = (url: string, serverCpu: ServerCpu): LoadOptions => ({
        url,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: INTEL_BODY,
        expect: 402,
        serverCpu,
      });
      const r = await compare({
        reference: post(`${ready.reference}/intel`, referenceCpu),
        ours: post(`${ours.url}/intel`, ourCpu),
      });
      rows.push(
        { line: "402 POST /intel", app: "@x402/express + SIWX", result: r.reference },
        { line: "402 POST /intel", app: "ours", result: r.ours, versus: r.reference },
      );
    }
    if (wants("paid")) {
      progress("paid POST /intel, anonymous: reference, ours");
      const anonymous = await benchPaid({
        reference: { url: `${ready.reference}/intel`, body: INTEL_BODY, signers, serverCpu: referenceCpu },
        ours: { url: `${ours.url}/intel`, body: INTEL_BODY, signers, serverCpu: ourCpu },
      });
      progress("paid POST /intel, signed-in holder: reference, ours");
      const holder = await benchPaid({
        reference: {
          url: `${ready.reference}/intel-holder`,
          body: HOLDER_BODY,
          signers,
          signIn: { index: HOLDER_INDEX, origin: REFERENCE_ORIGIN, path: "/intel-holder" },
          serverCpu: referenceCpu,
        },
        ours: {
          url: `${ours.url}/intel`,
          body: HOLDER_BODY,
          signers,
          signIn: { index: HOLDER_INDEX, origin: ours.url, path: "/intel" },
          serverCpu: ourCpu,
        },
      });
      rows.push(
        {
          line: "paid, anonymous",
          app: "@x402/express",
          result: anonymous.reference.result,
          failures: anonymous.reference.failures,
        },
        {
          line: "paid, anonymous",
          app: "ours",
          result: anonymous.ours.result,
          versus: anonymous.reference.result,
          failures: anonymous.ours.failures,
        },
        {
          line: "paid, signed-in holder",
          app: "@x402/express + SIWX",
          result: holder.reference.result,
          failures: holder.reference.failures,
        },
        {
          line: "paid, signed-in holder",
          app: "ours",
          result: holder.ours.result,
          versus: holder.reference.result,
          failures: holder.ours.failures,
        },
      );
      breakdowns.push(
        { label: "ours, anonymous", serverTimings: anonymous.ours.serverTimings },
        { label: "ours, signed-in holder", serverTimings: holder.ours.serverTimings },
      );
    }

    if (wants("channels")) {
      await channelLine({ rows, notes, ours, ourCpu, referenceCpu, ready, signers, deployment, network });
    }

    if (wants("cli")) {
      progress(
        `a terminal session of ${SESSION_CALLS} agent-tools intel runs, a block every ${BLOCK_MS} ms: exact, upto, then a channel`,
      );
      await rpc(deployment.l2.rpcUrl, "evm_setAutomine", [false]);
      await rpc(deployment.l2.rpcUrl, "evm_setIntervalMining", [BLOCK_MS]);
      try {
        const { exact, upto, channel } = await benchCliSession({
          baseUrl: ours.url,
          l2RpcUrl: deployment.l2.rpcUrl,
          tempDir: temp,
        });
        const perCall = (side: typeof exact) => Number(side.gas) / side.calls;
        notes.push(
          `A terminal session of ${SESSION_CALLS} \`agent-tools intel\` runs on ${BLOCK_MS} ms blocks (a process per call, ` +
            `as the holder): exact ${fmt(exact.seconds, 1)} s, ${fmt(Number(exact.gas))} gas in ${exact.transactions} ` +
            `transactions; upto ${fmt(upto.seconds, 1)} s, ${fmt(Number(upto.gas))} gas in ${upto.transactions} ` +
            `transactions (${fmt((100 * perCall(upto)) / perCall(exact), 1)}% of exact's gas); ` +
            `over a channel ${fmt(channel.seconds, 1)} s (${fmt(exact.seconds / channel.seconds, 2)}x ` +
            `faster), ${fmt(Number(channel.gas))} gas in ${channel.transactions} transactions, the deposit and the ` +
            `closing refund included (${fmt((100 * perCall(channel)) / perCall(exact), 1)}% of exact's gas).`,
        );
      } finally {
        await rpc(deployment.l2.rpcUrl, "evm_setIntervalMining", [0]);
        await rpc(deployment.l2.rpcUrl, "evm_setAutomine", [true]);
      }
    }

    if (wants("mcp")) {
      progress("paid intel over HTTP and over MCP, anonymous: ours, both");
      const mcp = await benchPaid({
        http: { url: `${ours.url}/intel`, body: INTEL_BODY, signers, serverCpu: ourCpu },
        mcp: {
          url: `${ours.url}/mcp`,
          body: INTEL_BODY,
          signers,
          serverCpu: ourCpu,
          mcp: { tool: "intel", challengeUrl: `${ours.url}/intel` },
        },
      });
      rows.push(
        {
          line: "paid, anonymous: HTTP vs MCP",
          app: "ours, POST /intel",
          result: mcp.http.result,
          failures: mcp.http.failures,
        },
        {
          line: "paid, anonymous: HTTP vs MCP",
          app: "ours, MCP tools/call intel",
          result: mcp.mcp.result,
          versus: mcp.http.result,
          failures: mcp.mcp.failures,
        },
      );
    }

    if (wants("batching")) {
      progress("settlements: batched (ours as shipped) next to single sends, as fast as they go and at 100 calls/s");
      single = await startOurServer(
        singleEnv(deployment.l1.rpcUrl, deployment.l2.rpcUrl, "data-single"),
        join(temp, "ours-single.log"),
      );
      const singleCpu: ServerCpu = async () => processCpuMicros(single!.pid);
      const sides = (extra: { rate?: number; connections?: number; seconds?: number }) => ({
        single: { url: `${single!.url}/intel`, body: INTEL_BODY, signers, serverCpu: singleCpu, ...extra },
        batched: { url: `${ours!.url}/intel`, body: INTEL_BODY, signers, serverCpu: ourCpu, ...extra },
      });
      const lines = [
        { line: "paid, as fast as answers come", extra: {} },
        // At a rate, calls come at even intervals, as many open at once as the answers need.
        { line: `paid, ${STEADY_RATE / 2} calls/s`, extra: { rate: STEADY_RATE / 2, connections: 300 } },
        { line: `paid, ${STEADY_RATE} calls/s`, extra: { rate: STEADY_RATE, connections: 300 } },
        // Calls settle once a block: enough blocks that where the calls fall between them evens out.
        {
          line: `paid, ${STEADY_RATE} calls/s, a block every ${BLOCK_MS / 1000} s`,
          extra: { rate: STEADY_RATE, connections: 300, seconds: 20 },
        },
      ];
      for (const { line, extra } of lines) {
        const interval = line.includes("block every");
        if (interval) {
          progress(`the payment chain now mines a block every ${BLOCK_MS} ms`);
          await rpc(deployment.l2.rpcUrl, "evm_setAutomine", [false]);
          await rpc(deployment.l2.rpcUrl, "evm_setIntervalMining", [BLOCK_MS]);
        }
        progress(line);
        const r = await benchPaid(sides(extra));
        if (interval) {
          await rpc(deployment.l2.rpcUrl, "evm_setIntervalMining", [0]);
          await rpc(deployment.l2.rpcUrl, "evm_setAutomine", [true]);
        }
        settlementRows.push(...(await comparedSettlements(deployment.l2.rpcUrl, line, r)));
      }
      await single.stop();
      single = undefined;
    }

    if (wants("remote")) {
      progress(`our server again, every chain call held ${REMOTE_RPC_MS} ms by a proxy`);
      await ours.stop();
      const delayed = await reference.ask({
        type: "delay",
        targets: { l1: deployment.l1.rpcUrl, l2: deployment.l2.rpcUrl },
        delayMs: REMOTE_RPC_MS,
      });
      if (delayed.type !== "delayed") throw new Error("the delaying proxy did not start");
      ours = await startOurServer(
        ourEnv(delayed.urls.l1!, delayed.urls.l2!, "data-remote"),
        join(temp, "ours-remote.log"),
      );
      const remoteCpu: ServerCpu = async () => processCpuMicros(ours!.pid);
      const info = await compare({ ours: { url: `${ours.url}/agents/info/1`, expect: 200, serverCpu: remoteCpu } });
      const quote = await compare({
        ours: {
          url: `${ours.url}/intel`,
          method: "POST",
          headers: { "content-type": "application/json" },
          body: INTEL_BODY,
          expect: 402,
          serverCpu: remoteCpu,
        },
      });
      // Single sends behind the same proxy, next to ours as shipped (batched).
      single = await startOurServer(
        singleEnv(delayed.urls.l1!, delayed.urls.l2!, "data-single-remote"),
        join(temp, "ours-single-remote.log"),
      );
      const singleCpu: ServerCpu = async () => processCpuMicros(single!.pid);
      const remotePaid = (url: string, serverCpu: ServerCpu) => ({
        url: `${url}/intel`,
        body: INTEL_BODY,
        signers,
        serverCpu,
        connections: REMOTE_PAID_CONNECTIONS,
      });
      const { single: singleRemote, ...paid } = await benchPaid({
        single: remotePaid(single.url, singleCpu),
        ours: remotePaid(ours.url, remoteCpu),
      });
      // Calls at even intervals, as many clients each calling now and then make them, behind the same proxy.
      progress(`paid, ${REMOTE_PACED_RATE} calls/s at even intervals, every chain call held ${REMOTE_RPC_MS} ms`);
      const paced = { rate: REMOTE_PACED_RATE, connections: 300 };
      const steadyRemote = await benchPaid({
        single: { ...remotePaid(single.url, singleCpu), ...paced },
        batched: { ...remotePaid(ours.url, remoteCpu), ...paced },
      });
      await single.stop();
      single = undefined;
      settlementRows.push(
        ...(await comparedSettlements(
          deployment.l2.rpcUrl,
          `RPC +${REMOTE_RPC_MS} ms, ${REMOTE_PAID_CONNECTIONS} conns`,
          { single: singleRemote, batched: paid.ours },
        )),
        ...(await comparedSettlements(
          deployment.l2.rpcUrl,
          `RPC +${REMOTE_RPC_MS} ms, ${REMOTE_PACED_RATE} calls/s`,
          steadyRemote,
        )),
      );
      const oneAtATime = 1000 / REMOTE_RPC_MS;
      rows.push(
        { line: `RPC +${REMOTE_RPC_MS} ms: GET /agents/info/1`, app: "ours", result: info.ours },
        { line: `RPC +${REMOTE_RPC_MS} ms: 402 POST /intel`, app: "ours", result: quote.ours },
        {
          line: `RPC +${REMOTE_RPC_MS} ms: paid, ${REMOTE_PAID_CONNECTIONS} conns`,
          app: "ours",
          result: paid.ours.result,
          failures: paid.ours.failures,
        },
      );
      breakdowns.push({ label: `ours, RPC +${REMOTE_RPC_MS} ms`, serverTimings: paid.ours.serverTimings });
      notes.push(
        `With every chain call ${REMOTE_RPC_MS} ms away, settlements sent one at a time (each waiting for the last ` +
          `send's round trip) allow at most ${oneAtATime.toFixed(0)} paid calls/s; ours served ` +
          `${paid.ours.result.rps.toFixed(1)}/s (${(paid.ours.result.rps / oneAtATime).toFixed(1)}x).`,
      );
    }
  } finally {
    await single?.stop();
    await ours?.stop();
    await reference.close();
    await devnet.close();
    rmSync(temp, { recursive: true, force: true });
  }
}

/** Calls of each measured round over channels (a round takes a few seconds at thousands a second). */
const CHANNEL_CALLS = 6000;
/** Calls over channels on the chain mining a block every second, as fast as answers come. */
const BLOCKED_CHANNEL_CALLS = 4000;

/**
 * Paid calls over channels next to paid `exact` calls and `@x402/express`, in alternating rounds of one run; then at
 * 100 calls/s on a chain mining a block every second; then the gas of 1,000 calls over fresh channels.
 */
async function channelLine(c: {
  rows: Row[];
  notes: string[];
  ours: OurServer;
  ourCpu: ServerCpu;
  referenceCpu: ServerCpu;
  ready: { reference: string };
  signers: ReturnType<typeof createSigners>;
  deployment: Awaited<ReturnType<typeof spawnDevnetProcess>>["deployment"];
  network: `${string}:${string}`;
}): Promise<void> {
  const { rows, notes, ours, ourCpu, deployment, network } = c;
  const side = (payers: number[], channelsPerPayer: number, depositPrices: number): ChannelSide => ({
    url: `${ours.url}/intel`,
    body: INTEL_BODY,
    rpcUrl: deployment.l2.rpcUrl,
    network,
    asset: deployment.addresses.usdToken,
    privateKeys: deployment.accounts.map((a) => a.privateKey),
    payers,
    channelsPerPayer,
    depositPrices,
  });
  progress("paid POST /intel over channels: opening 24 channels with x402's channel client");
  const busy = side([2, 3, 4, 5, 6, 7], 4, 3000);
  const opened = await openChannels(busy);
  const used = new Map<`0x${string}`, number>();
  const charged = new Map<`0x${string}`, bigint>();
  await channelCalls(busy, opened.channels, used, 300, charged, {});
  progress("paid POST /intel: over channels, exact, @x402/express, in alternating rounds");
  const exact = await benchPaid({
    reference: { url: `${c.ready.reference}/intel`, body: INTEL_BODY, signers: c.signers, serverCpu: c.referenceCpu },
    ours: { url: `${ours.url}/intel`, body: INTEL_BODY, signers: c.signers, serverCpu: ourCpu },
  });
  const channelRounds = await alternate(ROUNDS, {
    channels: () => channelCalls(busy, opened.channels, used, CHANNEL_CALLS, charged, { serverCpu: ourCpu }),
  });
  const overChannels = combine(channelRounds.channels.map((run) => run.result));
  const channelFailures: Record<string, number> = {};
  for (const run of channelRounds.channels) {
    for (const [reason, n] of Object.entries(run.failures))
      channelFailures[reason] = (channelFailures[reason] ?? 0) + n;
  }
  rows.push(
    { line: "paid, anonymous: channels", app: "@x402/express", result: exact.reference.result },
    {
      line: "paid, anonymous: channels",
      app: "ours, exact",
      result: exact.ours.result,
      versus: exact.reference.result,
    },
    {
      line: "paid, anonymous: channels",
      app: "ours, channel vs exact",
      result: overChannels,
      versus: exact.ours.result,
      failures: channelFailures,
    },
    {
      line: "paid, anonymous: channels",
      app: "ours, channel vs x402",
      result: overChannels,
      versus: exact.reference.result,
    },
  );

  progress(
    `paid POST /intel at ${STEADY_RATE} calls/s on a chain mining a block every ${BLOCK_MS} ms: channels, exact`,
  );
  await rpc(deployment.l2.rpcUrl, "evm_setAutomine", [false]);
  await rpc(deployment.l2.rpcUrl, "evm_setIntervalMining", [BLOCK_MS]);
  try {
    const slowExact = await benchPaid({
      ours: {
        url: `${ours.url}/intel`,
        body: INTEL_BODY,
        signers: c.signers,
        serverCpu: ourCpu,
        rate: STEADY_RATE,
        seconds: 6,
      },
    });
    const slowChannels = await channelCalls(busy, opened.channels, used, STEADY_RATE * 6, charged, {
      serverCpu: ourCpu,
      rate: STEADY_RATE,
    });
    // The same three sides as above, as fast as their answers come on 10 connections, on the chain with blocks: a
    // call paid with `exact` waits for its block, one over a channel for none (docs/testing.md).
    progress(`paid POST /intel on 10 connections, a block every ${BLOCK_MS} ms: @x402/express, exact, channels`);
    const blocked = await benchPaid({
      reference: {
        url: `${c.ready.reference}/intel`,
        body: INTEL_BODY,
        signers: c.signers,
        serverCpu: c.referenceCpu,
        seconds: 20,
      },
      ours: { url: `${ours.url}/intel`, body: INTEL_BODY, signers: c.signers, serverCpu: ourCpu, seconds: 20 },
    });
    const blockedChannels = await channelCalls(busy, opened.channels, used, BLOCKED_CHANNEL_CALLS, charged, {
      serverCpu: ourCpu,
    });
    const onBlocks = `paid, 10 connections, ${BLOCK_MS} ms blocks`;
    rows.push(
      { line: onBlocks, app: "@x402/express", result: blocked.reference.result, failures: blocked.reference.failures },
      {
        line: onBlocks,
        app: "ours, exact",
        result: blocked.ours.result,
        versus: blocked.reference.result,
        failures: blocked.ours.failures,
      },
      {
        line: onBlocks,
        app: "ours, channel vs exact",
        result: blockedChannels.result,
        versus: blocked.ours.result,
        failures: blockedChannels.failures,
      },
      {
        line: onBlocks,
        app: "ours, channel vs x402",
        result: blockedChannels.result,
        versus: blocked.reference.result,
      },
    );
    rows.push(
      { line: `${STEADY_RATE}/s, ${BLOCK_MS} ms blocks`, app: "ours, exact", result: slowExact.ours.result },
      {
        line: `${STEADY_RATE}/s, ${BLOCK_MS} ms blocks`,
        app: "ours, channel",
        result: slowChannels.result,
        versus: slowExact.ours.result,
        failures: slowChannels.failures,
      },
    );
  } finally {
    await rpc(deployment.l2.rpcUrl, "evm_setIntervalMining", [0]);
    await rpc(deployment.l2.rpcUrl, "evm_setAutomine", [true]);
  }

  progress("gas of 1,000 paid calls over 8 fresh channels (deposits, claims, sweeps) next to exact's");
  // Fresh channels, of salts the busy ones do not use, each depositing 200 prices.
  const gasSide = { ...side([2, 3, 4, 5, 6, 7, 8, 9], 1, 200), firstSalt: 100 };
  const freshOpened = await openChannels(gasSide);
  const freshUsed = new Map<`0x${string}`, number>();
  const freshCharged = new Map<`0x${string}`, bigint>();
  const gasRun = await channelCalls(
    gasSide,
    freshOpened.channels,
    freshUsed,
    1000 - freshOpened.channels.length,
    freshCharged,
    { connections: 4 },
  );
  const gas = await channelGas(deployment.l2.rpcUrl, freshOpened.channels, freshCharged, freshOpened.fromBlock, {
    payTo: deployment.accounts[0]!.address,
    asset: deployment.addresses.usdToken,
  });
  const exactCost = await settlementCost(deployment.l2.rpcUrl, exact.ours);
  const calls = freshOpened.channels.length + gasRun.result.ok;
  const perCall = Number(gas.gas) / calls;
  notes.push(
    `Gas per paid call over channels: ${fmt(perCall)} (${fmt(calls)} calls over 8 channels: ${gas.transactions} transactions ` +
      `of deposits, claims and sweeps, ${fmt(Number(gas.gas))} gas), against ${fmt(exactCost.gasPerPayment)} per exact ` +
      `payment (${fmt(exactCost.payments)} payments in ${fmt(exactCost.transactions)} transactions): ` +
      `${fmt((100 * perCall) / exactCost.gasPerPayment, 1)}%.`,
  );
}

async function main(): Promise<void> {
  const started = performance.now();
  const rows: Row[] = [];
  const settlementRows: SettlementRow[] = [];
  const breakdowns: { label: string; serverTimings: string[] }[] = [];
  const notes: string[] = [];
  const chain = CHAIN_LINES.some(wants);
  if (chain) await chainLines({ rows, settlementRows, breakdowns, notes });

  let market: MarketLine[] = [];
  if (wants("market")) {
    progress("market tools: drop radar at 150 ms upstream latency, B20 radar over 604,800 blocks");
    market = await benchMarket(progress);
  }

  let ledger: LedgerLine | undefined;
  if (wants("ledger")) {
    progress("the operator's ledger as the book grows, on Postgres and on PGlite");
    ledger = await benchLedger(progress, {
      ...(ledgerSizes ? { sizes: ledgerSizes } : {}),
      ...(pgliteSizes ? { pgliteSizes } : {}),
    });
  }

  if (chain) {
    printTable(rows, breakdowns, {
      environment: `Node ${process.version}, ${cpus().length} CPUs, 127.0.0.1, autocannon 8, 10 connections unless said; at a rate, calls at even intervals`,
      seconds: (performance.now() - started) / 1000,
      notes,
    });
  }
  if (settlementRows.length > 0) printSettlements(settlementRows);
  if (market.length > 0) printMarket(market);
  if (ledger) printLedger(ledger);
  if (!chain) process.stdout.write(`Whole bench: ${fmt((performance.now() - started) / 1000, 1)} s.\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

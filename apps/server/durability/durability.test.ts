import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { usdTokenAbi } from "@agent-tools/contracts";
import { type RunningDevnet, startDevnet } from "@agent-tools/devnet";
import {
  dispatchResponseSchema,
  type LedgerReport,
  ledgerReportSchema,
  listMissionsResponseSchema,
} from "@agent-tools/schema";
import { startUpstreamSims, type UpstreamSims } from "@agent-tools/upstream-sim";
import type { PaymentRequired } from "@x402/core/types";
import pg from "pg";
import { type Address, createPublicClient, defineChain, http, type PrivateKeyAccount, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// The built module: it starts the built embedded default next to it, as `pnpm start` does.
import { type EmbeddedProcess, spawnEmbeddedService } from "../dist/index.js";
import { type CollectionIndex, createCollectionIndex } from "../src/chain/collection-index.js";
import { runNodeScript, waitForOutput } from "../src/startup/embedded-process.js";
import { openDatabase } from "../src/store/open-database.js";
import { openPglite } from "../src/store/pglite.js";
import { deploymentEnv } from "../test/helpers/deployment-env.js";
import { startTestFacilitator, type TestFacilitator } from "../test/helpers/http-facilitator.js";
import { skipPostgres, startTestPostgres, type TestPostgres } from "../test/helpers/test-postgres.js";
import { tokenHeldBy } from "../test/helpers/tokens.js";
import { paymentHeader, signInHeader } from "../test/helpers/x402-client.js";

/**
 * The durable records under real processes: the built server (`dist/main.js`) against chains, simulators and an
 * HTTP facilitator run by the test, killed and restarted.
 */
const mainScript = fileURLToPath(new URL("../dist/main.js", import.meta.url));

let devnet: RunningDevnet;
let sims: UpstreamSims;
let facilitator: TestFacilitator;
let collection: CollectionIndex;
let l2: PublicClient;
let baseEnv: Record<string, string>;
const temp = mkdtempSync(join(tmpdir(), "agent-tools-durability-"));
const repo = fileURLToPath(new URL("../../../", import.meta.url));

/** Whether any process of the process group `-group` is left (signal 0 checks without sending). */
function groupAlive(group: number): boolean {
  try {
    process.kill(group, 0);
    return true;
  } catch {
    return false;
  }
}

const account = (index: number): PrivateKeyAccount =>
  privateKeyToAccount(devnet.deployment.accounts[index]!.privateKey);

beforeAll(async () => {
  devnet = await startDevnet({ l1Port: 0, l2Port: 0 });
  sims = await startUpstreamSims({ host: "127.0.0.1" });
  const { deployment } = devnet;
  const l2Chain = defineChain({
    id: deployment.l2.chainId,
    name: "l2",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [deployment.l2.rpcUrl!] } },
  });
  l2 = createPublicClient({ chain: l2Chain, transport: http(deployment.l2.rpcUrl!) }) as PublicClient;
  facilitator = await startTestFacilitator(
    createPublicClient({ chain: l2Chain, transport: http(deployment.l2.rpcUrl!), pollingInterval: 50 }) as PublicClient,
    deployment.accounts[0]!.privateKey,
    `eip155:${deployment.l2.chainId}`,
  );
  collection = createCollectionIndex({
    client: createPublicClient({ transport: http(deployment.l1.rpcUrl!) }) as PublicClient,
    collection: deployment.addresses.collection,
  });
  await collection.sync();
  baseEnv = {
    ...deploymentEnv(deployment),
    MARKETPLACE_URL: sims.urls.marketplace,
    MARKET_DATA_URL: sims.urls.marketData,
    FACILITATOR_URL: facilitator.url,
    DISPATCH_POLL_MS: "50",
  };
}, 120_000);
afterAll(async () => {
  await facilitator?.close();
  await sims?.close();
  await devnet?.close();
  rmSync(temp, { recursive: true, force: true });
});

interface ServerProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** Starts the built server on a port the OS picks (its public origin is then that address) and waits until it serves. */
async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const started = runNodeScript(mainScript, { LOG_LEVEL: "warn", ...baseEnv, PORT: "0", ...env });
  // The address it listens on: its public origin, unless PUBLIC_URL names another.
  const [, publicUrl, listening] = await waitForOutput(
    started,
    /Agent Tools API on (http:\/\/\S+) {2}\((?:listening on (http:\/\/\S+); )?/,
    120_000,
    "the server",
  );
  const url = listening ?? publicUrl;
  const { child } = started;
  return {
    url: url!,
    child,
    output: started.output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * Resolves once the servers have logged the end of every mission of `ids` ("mission done" or "mission failed", at
 * level info), checking each time one of them prints.
 */
function missionsDone(servers: ServerProcess[], ids: string[]): Promise<void> {
  const finished = () => {
    const text = servers.map((server) => server.output()).join("\n");
    const done = new Set(
      [...text.matchAll(/"mission":"([0-9a-f-]{36})".*"msg":"mission (?:done|failed)"/g)].map((match) => match[1]),
    );
    return ids.every((id) => done.has(id));
  };
  return new Promise((resolve) => {
    const check = () => {
      if (!finished()) return;
      for (const server of servers) server.child.stdout?.off("data", check);
      resolve();
    };
    for (const server of servers) server.child.stdout?.on("data", check);
    check();
  });
}

/** The first revealed token of devnet account `index` with this clearance. */
const tokenOf = (index: number, clearance: "Elite" | "Holder") =>
  tokenHeldBy(collection, devnet.deployment.accounts[index]!.address, clearance);

/** A paid call: request, 402, pay from `payer`, the same request with the payment (signed in when `signIn`). */
async function paidCall(
  server: ServerProcess,
  request: { method: "GET" | "POST"; path: string; body?: unknown },
  payer: PrivateKeyAccount,
  options: { signIn?: boolean } = {},
): Promise<{ res: Response; payment: string }> {
  const url = `${server.url}${request.path}`;
  const signIn: Record<string, string> = options.signIn
    ? { "SIGN-IN-WITH-X": await signInHeader(payer, url, `eip155:${devnet.deployment.l1.chainId}`) }
    : {};
  const send = (headers: Record<string, string>) =>
    fetch(url, {
      method: request.method,
      // A connection per request: a keep-alive socket the server closes as the next request goes out would fail
      // that request, which this file must not mistake for the crash it provokes.
      headers: { "content-type": "application/json", connection: "close", ...signIn, ...headers },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    });
  const challenge = await send({});
  expect(challenge.status).toBe(402);
  const payment = await paymentHeader(payer, l2, (await challenge.json()) as PaymentRequired, {
    network: `eip155:${devnet.deployment.l2.chainId}`,
    asset: devnet.deployment.addresses.usdToken,
  });
  return { res: await send({ "PAYMENT-SIGNATURE": payment }), payment };
}

async function ledgerOf(server: ServerProcess): Promise<LedgerReport> {
  const url = `${server.url}/operator/ledger?limit=500`;
  const res = await fetch(url, {
    headers: { "SIGN-IN-WITH-X": await signInHeader(account(0), url, `eip155:${devnet.deployment.l1.chainId}`) },
  });
  expect(res.status).toBe(200);
  return ledgerReportSchema.parse(await res.json());
}

const balanceOf = (address: Address) =>
  l2.readContract({
    address: devnet.deployment.addresses.usdToken,
    abi: usdTokenAbi,
    functionName: "balanceOf",
    args: [address],
  });

describe("a crash right after a settlement (PGlite)", () => {
  it("keeps the payment in the ledger once, refuses its replay, and runs the queued mission once after the restart", async () => {
    const dataDir = join(temp, "crash");
    const holder = account(3);
    const tokenId = tokenOf(3, "Elite");
    // The first process runs no missions (DISPATCH_CONCURRENCY=0): the mission queued here is due at once, and it is
    // the restarted process that must find it and run it.
    const first = await startServer({ DATA_DIR: dataDir, DISPATCH_CONCURRENCY: "0" });

    const queued = await paidCall(
      first,
      { method: "POST", path: "/dispatch", body: { tokenId, mission: { tool: "intel" } } },
      holder,
      { signIn: true },
    );
    expect(queued.res.status).toBe(202);
    const { mission } = dispatchResponseSchema.parse(await queued.res.json());
    const before = await balanceOf(holder.address);

    // The next settlement goes through on chain, then the server dies before it hears back.
    let killed: Promise<unknown> | undefined;
    facilitator.afterNextSettlement(async (): Promise<"drop"> => {
      killed = once(first.child, "exit");
      first.child.kill("SIGKILL");
      await killed;
      return "drop";
    });
    const cut = paidCall(first, { method: "POST", path: "/intel", body: { tokenId } }, holder, { signIn: true });
    const error = await cut.then(
      () => undefined,
      (reason: Error) => reason,
    );
    // The connection fails as soon as the kernel closes the killed process's sockets; Node reports the exit after.
    await killed;
    const why = `${error?.message} (${String(error?.cause)}); exit ${first.child.exitCode} ${first.child.signalCode}\n${first.output()}`;
    expect(killed, why).toBeDefined();
    expect(error?.message, why).toMatch(/fetch failed/);
    expect(first.child.signalCode, why).toBe("SIGKILL");
    const taken = facilitator.settlements.at(-1)!;
    expect(taken.success).toBe(true);
    expect(await balanceOf(holder.address)).toBe(before - 10_000n);

    const second = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: "info" });
    try {
      // The restarted process finds the mission queued before the crash and runs it.
      await missionsDone([second], [mission.id]);
      const ledger = await ledgerOf(second);
      const intel = ledger.entries.filter((entry) => entry.route === "/intel");
      expect(intel).toEqual([
        expect.objectContaining({
          transaction: taken.transaction,
          tokenId,
          payer: holder.address,
          caller: holder.address,
          pricePoint: "discounted",
          amount: "10000",
        }),
      ]);
      expect(ledger.entries.filter((entry) => entry.route === "/dispatch")).toHaveLength(1);
      expect(ledger.unconfirmed).toBe(0);

      const listed = await paidCall(second, { method: "GET", path: `/dispatch?tokenId=${tokenId}` }, holder, {
        signIn: true,
      });
      const missions = listMissionsResponseSchema.parse(await listed.res.json()).missions;
      expect(missions.find((m) => m.id === mission.id)).toMatchObject({ status: "done", attempts: 1 });
    } finally {
      await second.stop();
    }

    // Read the store itself once the server is gone: one row per payment, one run of the mission.
    const db = await openPglite(dataDir);
    try {
      const rows = await db.query<{ route: string; n: number }>(
        "SELECT route, count(*)::int AS n FROM settlements WHERE status = 'settled' GROUP BY route ORDER BY route",
      );
      expect(rows).toEqual([
        { route: "/dispatch", n: 2 },
        { route: "/intel", n: 1 },
      ]);
      const runs = await db.query<{ attempt: number; outcome: string }>(
        "SELECT attempt, outcome FROM mission_runs WHERE mission_id = $1",
        [mission.id],
      );
      expect(runs).toEqual([{ attempt: 1, outcome: "done" }]);
    } finally {
      await db.close();
    }
  }, 120_000);
});

describe("a restart (PGlite)", () => {
  it("refuses a sign-in that already served a call before the restart, and charges nothing", async () => {
    const dataDir = join(temp, "sign-in");
    // One public origin for both processes: a sign-in is bound to it, not to the port each one picks.
    const env = { DATA_DIR: dataDir, PUBLIC_URL: "http://tools.restart.test" };
    const holder = account(5);
    const tokenId = tokenOf(5, "Holder");
    const signIn = await signInHeader(
      holder,
      "http://tools.restart.test/intel",
      `eip155:${devnet.deployment.l1.chainId}`,
    );
    const call = async (server: ServerProcess) => {
      const send = (headers: Record<string, string>) =>
        fetch(`${server.url}/intel`, {
          method: "POST",
          headers: { "content-type": "application/json", "SIGN-IN-WITH-X": signIn, ...headers },
          body: JSON.stringify({ tokenId }),
        });
      const challenge = await send({});
      expect(challenge.status).toBe(402);
      const payment = await paymentHeader(holder, l2, (await challenge.json()) as PaymentRequired, {
        network: `eip155:${devnet.deployment.l2.chainId}`,
        asset: devnet.deployment.addresses.usdToken,
      });
      return send({ "PAYMENT-SIGNATURE": payment });
    };

    const first = await startServer(env);
    try {
      expect((await call(first)).status).toBe(200);
    } finally {
      await first.stop();
    }
    const before = await balanceOf(holder.address);
    const second = await startServer(env);
    try {
      const challenge = await fetch(`${second.url}/intel`, {
        method: "POST",
        headers: { "content-type": "application/json", "SIGN-IN-WITH-X": signIn },
        body: JSON.stringify({ tokenId }),
      });
      expect(challenge.status).toBe(402);
      expect(((await challenge.json()) as PaymentRequired).error).toMatch(
        /^invalid_siwx: invalid_siwx_nonce: .*already used/,
      );
      expect(await balanceOf(holder.address)).toBe(before);
    } finally {
      await second.stop();
    }
  }, 120_000);
});

describe.skipIf(skipPostgres())("two server processes on one Postgres database", () => {
  let postgres: TestPostgres | undefined;
  beforeAll(async () => {
    postgres = await startTestPostgres();
  }, 60_000);
  afterAll(async () => {
    await postgres?.stop();
  });

  it("the embedded default refuses a database holding an earlier start's book, naming DATABASE_URL", async () => {
    const databaseUrl = await postgres!.createDatabase();
    const db = await openDatabase({ kind: "postgres", url: databaseUrl });
    try {
      await db.query(
        `INSERT INTO settlements (payment_key, status, route, method, token_id, payer, nonce, price_point, amount,
           asset, network, pay_to, valid_before, request_id)
         VALUES ('earlier', 'pending', '/intel', 'POST', 1, '0x1', '0x1', 'standard', 10000, '0x1', 'eip155:31338',
           '0x1', now(), 'r')`,
      );
    } finally {
      await db.close();
    }
    const embeddedScript = fileURLToPath(new URL("../dist/embedded.js", import.meta.url));
    const proc = runNodeScript(embeddedScript, {
      PORT: "0",
      L1_PORT: "0",
      L2_PORT: "0",
      LOG_LEVEL: "warn",
      DATABASE_URL: databaseUrl,
    });
    const [code] = (await once(proc.child, "exit")) as [number | null];
    expect(code).toBe(1);
    expect(proc.output()).toMatch(
      /agent-tools failed to start: DATABASE_URL: the database holds payments, channels or missions of an earlier start of the embedded default/,
    );
  }, 120_000);

  it("run 50 due missions, each exactly once", async () => {
    const databaseUrl = await postgres!.createDatabase();
    // One mission at a time each, polling often: both instances are kept busy on the same queue.
    const env = { DATABASE_URL: databaseUrl, DISPATCH_CONCURRENCY: "1", DISPATCH_POLL_MS: "20", LOG_LEVEL: "info" };
    const servers = await Promise.all([startServer(env), startServer(env)]);
    try {
      // Queued for later, then all made due at once in the store (however long queuing took): both instances find
      // fifty due missions on the same queue.
      const runAt = new Date(Date.now() + 3_600_000).toISOString();
      const ids: string[] = [];
      for (let batch = 0; batch < 10; batch++) {
        const answers = await Promise.all(
          [0, 1, 2, 3, 4].map(async (i) => {
            const n = batch * 5 + i;
            const { res } = await paidCall(
              servers[n % 2]!,
              { method: "POST", path: "/dispatch", body: { tokenId: 1 + (n % 9), mission: { tool: "intel" }, runAt } },
              account(1 + (n % 9)),
            );
            expect(res.status).toBe(202);
            return dispatchResponseSchema.parse(await res.json()).mission.id;
          }),
        );
        ids.push(...answers);
      }
      expect(new Set(ids).size).toBe(50);

      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      try {
        await db.query("UPDATE missions SET run_at = now() WHERE id = ANY($1::uuid[])", [ids]);
        await missionsDone(servers, ids);
        const missions = await db.query<{ status: string; attempts: number }>(
          "SELECT status, attempts FROM missions WHERE id = ANY($1::uuid[])",
          [ids],
        );
        expect(missions.rows).toHaveLength(50);
        expect(missions.rows.every((m) => m.status === "done" && m.attempts === 1)).toBe(true);
        const runs = await db.query<{ mission_id: string; instance: string }>(
          "SELECT mission_id, instance FROM mission_runs WHERE mission_id = ANY($1::uuid[])",
          [ids],
        );
        expect(runs.rows).toHaveLength(50);
        expect(new Set(runs.rows.map((r) => r.mission_id)).size).toBe(50);
        // Both instances took part.
        expect(new Set(runs.rows.map((r) => r.instance)).size).toBe(2);
        for (const server of servers) expect(server.output()).not.toMatch(/"level":(50|60)/);
      } finally {
        await db.end();
      }
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  }, 180_000);
});

describe("the embedded default (pnpm start)", () => {
  // One embedded default serves both tests: the refusals are tried while it holds its directory and ports, then it
  // is paid, stopped and started again on the same directory.
  const dataDir = join(temp, "embedded");
  let first: EmbeddedProcess;
  beforeAll(async () => {
    first = await spawnEmbeddedService({ dataDir });
  }, 120_000);
  afterAll(async () => {
    await first?.close();
  });

  it("refuses a second start on a data directory in use before seeding anything, and names the port variables", async () => {
    const embeddedScript = fileURLToPath(new URL("../dist/embedded.js", import.meta.url));
    const start = async (env: Record<string, string>) => {
      const proc = runNodeScript(embeddedScript, { PORT: "0", L1_PORT: "0", L2_PORT: "0", LOG_LEVEL: "warn", ...env });
      const [code] = (await once(proc.child, "exit")) as [number | null];
      return { code, output: proc.output() };
    };
    const second = await start({ DATA_DIR: dataDir });
    expect(second.code).toBe(1);
    expect(second.output).toMatch(new RegExp(`in use by process ${first.child.pid}`));
    expect(second.output).not.toMatch(/seeding/);

    const l1Port = /L1 \(collection\)\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(first.output())?.[1];
    const third = await start({ DATA_DIR: join(temp, "embedded-other"), L1_PORT: l1Port! });
    expect(third.code).toBe(1);
    expect(third.output).toMatch(
      new RegExp(`L1: port ${l1Port} on 127\\.0\\.0\\.1 is already in use \\(set L1_PORT and L2_PORT`),
    );
  }, 120_000);

  it("moves an earlier start's book aside when started again on new chains, and stops all it started on kill <pid> of pnpm start", async () => {
    let transaction: string;
    try {
      expect(first.output()).toContain(`data           ${dataDir}`);
      const l2Url = first.output().match(/L2 \(payments\)\s+(http:\/\/\S+)/)?.[1];
      const usd = first.output().match(/USD token\s+(0x[0-9a-fA-F]{40})/)?.[1];
      expect(l2Url && usd).toBeTruthy();
      const embeddedL2 = createPublicClient({ transport: http(l2Url) }) as PublicClient;
      const url = `${first.url}/intel`;
      const send = (headers: Record<string, string>) =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: '{"tokenId":1}',
        });
      const challenge = await send({});
      const payment = await paymentHeader(account(1), embeddedL2, (await challenge.json()) as PaymentRequired, {
        network: "eip155:31338",
        asset: usd!,
      });
      const res = await send({ "PAYMENT-SIGNATURE": payment });
      expect(res.status).toBe(200);
      transaction = JSON.parse(Buffer.from(res.headers.get("payment-response")!, "base64").toString()).transaction;
    } finally {
      await first.close();
    }

    // Started again as a user does, with `pnpm start` (a supervisor's process is pnpm), then stopped by its PID.
    const pnpm = spawn("pnpm", ["start"], {
      cwd: repo,
      // A user's shell: no variables of the package manager that runs these tests.
      env: {
        PATH: (process.env.PATH ?? "")
          .split(delimiter)
          .filter((dir) => !dir.includes("node_modules"))
          .join(delimiter),
        HOME: process.env.HOME ?? tmpdir(),
        DATA_DIR: dataDir,
        PORT: "0",
        L1_PORT: "0",
        L2_PORT: "0",
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
      // A process group of its own: what pnpm started is found by the group, whoever its parent is now.
      detached: true,
    });
    let printed = "";
    pnpm.stdout.on("data", (chunk) => {
      printed += chunk;
    });
    pnpm.stderr.on("data", (chunk) => {
      printed += chunk;
    });
    const group = -pnpm.pid!;
    try {
      await waitForOutput({ child: pnpm, output: () => printed }, /^Try: curl /m, 120_000, "pnpm start");
      const secondUrl = /^ {2}API +(http:\/\/\S+)/m.exec(printed)?.[1];
      const url = `${secondUrl}/operator/ledger`;
      const res = await fetch(url, {
        headers: { "SIGN-IN-WITH-X": await signInHeader(account(0), url, "eip155:31337") },
      });
      expect(res.status).toBe(200);
      const report = ledgerReportSchema.parse(await res.json());
      // The chains are new: the payment of the first start is not in this start's book, which would describe a
      // transaction and a balance these chains do not have; it is kept in the database moved aside.
      expect(report.entries).toEqual([]);
      const earlier = join(dataDir, "earlier-start");
      expect(printed).toContain(`data: the earlier start's database, whose chains are gone, moved to ${earlier}`);
      const moved = await openPglite(earlier);
      try {
        const rows = await moved.query<{ transaction: string }>("SELECT transaction FROM settlements");
        expect(rows.map((row) => row.transaction)).toEqual([transaction]);
      } finally {
        await moved.close();
      }

      const stopping = Date.now();
      process.kill(pnpm.pid!, "SIGTERM");
      // Every process the start command started is gone (the server, and the chains it started) within the 10 s the
      // server gives its own shutdown before it exits anyway (lifecycle.ts). Its work is done in a tenth of a second;
      // the process then ends once V8 has finished the background compiling of PGlite's WebAssembly it started, about
      // two seconds on an idle machine, longer on a busy one.
      while (groupAlive(group) && Date.now() - stopping < 10_000) await new Promise((done) => setTimeout(done, 50));
      expect(groupAlive(group), `still running 10 s after kill ${pnpm.pid}:\n${printed}`).toBe(false);
      await expect(fetch(`${secondUrl}/healthz`)).rejects.toThrow();
    } finally {
      if (groupAlive(group)) process.kill(group, "SIGKILL");
    }
  }, 180_000);
});

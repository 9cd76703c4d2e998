/**
 * `pnpm test:scale`: three instances of the built server on one Postgres database behind nginx (scale/cluster.ts),
 * under paid load, anonymous and signed in, with missions queued. What must hold across instances: a payment
 * serves once, a sign-in once, the per-payer rate is one count, a SIGKILLed instance loses and doubles nothing; and
 * the throughput of three instances next to one. One summary line at the end.
 */
import { writeFileSync } from "node:fs";
import { usdTokenAbi } from "@agent-tools/contracts";
import { parsePaymentRefusal, paymentRequiredSchema } from "@agent-tools/schema";
import type { PaymentRequired } from "@x402/core/types";
import type { PrivateKeyAccount } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForOutput } from "../src/startup/embedded-process.js";
import { createPace } from "../test/helpers/pace.js";
import { type Book, paymentSettlementKey, settlementKey, settlementsSince } from "../test/helpers/settlements-since.js";
import { type Cluster, SCALE_LIMITS, startCluster } from "./cluster.js";

let cluster: Cluster;
const summary: Record<string, string> = {};
/** Paid calls measured on one instance, and again on three. */
const THROUGHPUT_PAID_CALLS = 480;
/**
 * Payers of each throughput run: enough that none makes more than half its rate's worth of calls in the whole run,
 * so that however fast the machine, no call meets the per-payer limit.
 */
const THROUGHPUT_PAYERS = Math.ceil(THROUGHPUT_PAID_CALLS / (SCALE_LIMITS.payerRate / 2));
/** Fresh payers (no token): 0 replays, 1 bursts, 2-5 are the kill's load, then two throughput runs' worth. */
const FRESH_PAYERS = 6 + 2 * THROUGHPUT_PAYERS;

beforeAll(async () => {
  cluster = await startCluster({ freshPayers: FRESH_PAYERS });
}, 300_000);
afterAll(async () => {
  await cluster?.close();
  const line = ["replay", "sign-in", "rate", "kill", "throughput"]
    .map((phase) => summary[phase] ?? `${phase} not run`)
    .join("; ");
  console.log(`scale: ${line}`);
  if (process.env.SCALE_REPORT) writeFileSync(process.env.SCALE_REPORT, `${JSON.stringify(summary, null, 2)}\n`);
});

interface Outcome {
  status: number;
  reason?: string;
  transaction?: `0x${string}`;
  /** The proxy's own error page: the instance behind it died under the call (its fate is unknown). */
  cutOff?: boolean;
  /** The EIP-3009 nonce of the payment sent. */
  nonce?: string;
  /** The settlement key of the payment sent (its payer and nonce). */
  key?: string;
}

const nonceOf = (payment: string): string =>
  JSON.parse(Buffer.from(payment, "base64").toString("utf8")).payload.authorization.nonce;

const post = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

async function quote(base: string, path: string, body: unknown, signIn?: string): Promise<PaymentRequired> {
  const res = await post(base, path, body, signIn ? { "SIGN-IN-WITH-X": signIn } : {});
  const text = await res.text();
  if (res.status !== 402) throw new Error(`quote of ${path}: ${res.status} ${text.slice(0, 200)}`);
  return paymentRequiredSchema.parse(JSON.parse(text)) as PaymentRequired;
}

async function paidCall(base: string, path: string, body: unknown, payment: string, signIn?: string) {
  const res = await post(base, path, body, {
    "PAYMENT-SIGNATURE": payment,
    ...(signIn ? { "SIGN-IN-WITH-X": signIn } : {}),
  });
  const text = await res.text();
  const outcome: Outcome = { status: res.status, nonce: nonceOf(payment), key: paymentSettlementKey(payment) };
  if (!(res.headers.get("content-type") ?? "").includes("application/json")) outcome.cutOff = true;
  else if (res.status === 402) outcome.reason = parsePaymentRefusal(JSON.parse(text).error).reason;
  else if (res.status !== 200) outcome.reason = JSON.parse(text).error?.code;
  const receipt = res.headers.get("PAYMENT-RESPONSE");
  if (receipt) outcome.transaction = JSON.parse(Buffer.from(receipt, "base64").toString("utf8")).transaction;
  return outcome;
}

const balanceOf = (who: PrivateKeyAccount) =>
  cluster.l2.readContract({ address: cluster.asset, abi: usdTokenAbi, functionName: "balanceOf", args: [who.address] });

describe("one payment, one sign-in, one rate, whatever instance is asked", () => {
  it("a payment replayed to every instance at once is served once and charged once", async () => {
    const payer = cluster.payers[0]!;
    const body = { tokenId: 4 };
    const required = await quote(cluster.url, "/intel", body);
    const payment = await cluster.pay(payer, required);
    const before = await balanceOf(payer);
    const outcomes = await Promise.all(
      [...cluster.instances.map((i) => i.url), cluster.url, cluster.url].map((base) =>
        paidCall(base, "/intel", body, payment),
      ),
    );
    const served = outcomes.filter((o) => o.status === 200);
    expect(served).toHaveLength(1);
    for (const refused of outcomes.filter((o) => o.status !== 200)) {
      expect(refused.status).toBe(402);
      expect(["payment_in_use", "payment_already_used"]).toContain(refused.reason);
    }
    expect(before - (await balanceOf(payer))).toBe(BigInt(required.accepts[0]!.amount));
    const nonce = nonceOf(payment);
    const rows = await cluster.db.query("SELECT status FROM settlements WHERE nonce = $1", [nonce]);
    expect(rows.rows).toEqual([{ status: "settled" }]);
    summary.replay = `replay: 1 of ${outcomes.length} served, charged once`;
  });

  it("a sign-in spent on one instance is refused by the others, and the refused calls cost nothing", async () => {
    const holder = cluster.account(3);
    const body = { tokenId: 3 };
    const signIn = await cluster.signIn(holder, "/intel");
    const [first, ...others] = cluster.instances;
    const required = await quote(first!.url, "/intel", body, signIn);
    expect(required.accepts[0]!.amount).toBe("10000"); // the holder price: the sign-in was taken
    const served = await paidCall(first!.url, "/intel", body, await cluster.pay(holder, required), signIn);
    expect(served.status).toBe(200);
    const before = await balanceOf(holder);
    for (const instance of others) {
      const again = await paidCall(instance.url, "/intel", body, await cluster.pay(holder, required), signIn);
      expect(again).toMatchObject({ status: 402, reason: "invalid_siwx" });
    }
    expect(await balanceOf(holder)).toBe(before);
    summary["sign-in"] = `sign-in: spent on instance 0, refused by ${others.length} others`;
  });

  it(`holds a payer to ${SCALE_LIMITS.payerRate} calls per second across the three instances together`, async () => {
    const payer = cluster.payers[1]!;
    const body = { tokenId: 6 };
    const required = await quote(cluster.url, "/intel", body);
    const burst = SCALE_LIMITS.payerRate * 3;
    const payments = await Promise.all(Array.from({ length: burst }, () => cluster.pay(payer, required)));
    const before = await balanceOf(payer);
    const started = performance.now();
    const outcomes = await Promise.all(payments.map((payment) => paidCall(cluster.url, "/intel", body, payment)));
    const spanMs = performance.now() - started;
    const admitted = outcomes.filter((o) => o.status === 200).length;
    const limited = outcomes.filter((o) => o.status === 429 && o.reason === "rate_limited").length;
    expect(admitted + limited, JSON.stringify(outcomes.filter((o) => o.status !== 200 && o.status !== 429))).toBe(
      burst,
    );
    // Counted per instance, three instances would admit up to three times the rate in one second. Counted once,
    // the burst admits the rate per window of one second it spans (one, unless the machine is slow).
    const windows = 1 + Math.floor(spanMs / 1000);
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(SCALE_LIMITS.payerRate * windows);
    expect(before - (await balanceOf(payer))).toBe(BigInt(admitted) * BigInt(required.accepts[0]!.amount));
    summary.rate =
      `rate: ${admitted} of ${burst} admitted at once (limit ${SCALE_LIMITS.payerRate}/s, ` +
      `${windows} window${windows > 1 ? "s" : ""} of 1 s in ${Math.round(spanMs)} ms), ${limited} refused uncharged`;
  });
});

/**
 * Paid calls through the proxy until stopped: anonymous payers and signed-in holders, each in a loop paced at half
 * the payer rate the instances enforce, so that however fast the machine answers, no payer meets the limit (the
 * rate test above is where it is met).
 */
function steadyPaidLoad() {
  const outcomes: Outcome[] = [];
  let stopped = false;
  let served = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const record = (outcome: Outcome) => {
    outcomes.push(outcome);
    if (outcome.status === 200) served++;
    for (const w of waiters.filter((w) => served >= w.count)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  const loop = async (payer: PrivateKeyAccount, tokenId: number, signedIn: boolean) => {
    const pace = createPace(SCALE_LIMITS.payerRate / 2);
    while (!stopped) {
      await pace();
      try {
        const signIn = signedIn ? await cluster.signIn(payer, "/intel") : undefined;
        const required = await quote(cluster.url, "/intel", { tokenId }, signIn);
        const payment = await cluster.pay(payer, required);
        record(await paidCall(cluster.url, "/intel", { tokenId }, payment, signIn));
      } catch (error) {
        // No answer at all (the connection broke with the instance): unknown, like the proxy's error page.
        record({ status: 0, cutOff: true, reason: (error as Error).message });
      }
    }
  };
  const running = [
    ...[2, 3, 4, 5].map((i) => loop(cluster.payers[i]!, 10 + i, false)),
    ...[1, 2].map((i) => loop(cluster.account(i), i, true)),
  ];
  return {
    outcomes,
    servedMore: (count: number) => new Promise<void>((resolve) => waiters.push({ count: served + count, resolve })),
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}

/** The settled payments of the shared database: the whole book, however many (the ledger's listing is capped). */
async function book(): Promise<Book> {
  const rows = await cluster.db.query<{ payer: string; nonce: string }>(
    "SELECT payer, nonce FROM settlements WHERE status = 'settled'",
  );
  return { payments: rows.rows.length, settlements: rows.rows.map((r) => settlementKey(r.payer, r.nonce)) };
}

/** A drop-radar mission queued through the proxy by the Elite holder (account 5), due now. */
async function queueMission(): Promise<string> {
  const elite = cluster.account(5);
  const mission = { tokenId: 5, mission: { tool: "drop-radar", params: { type: "upcoming", limit: 5 } } };
  const signIn = await cluster.signIn(elite, "/dispatch");
  const required = await quote(cluster.url, "/dispatch", mission, signIn);
  const res = await post(cluster.url, "/dispatch", mission, {
    "SIGN-IN-WITH-X": signIn,
    "PAYMENT-SIGNATURE": await cluster.pay(elite, required),
  });
  expect(res.status, await res.clone().text()).toBe(202);
  return ((await res.json()) as { mission: { id: string } }).mission.id;
}

describe("an instance killed under load", () => {
  it("loses no settlement and records none twice; every mission is recorded once, run twice only if it was cut", async () => {
    const startBlock = (await cluster.l2.getBlockNumber({ cacheTime: 0 })) + 1n;
    const bookBefore = await book();
    const load = steadyPaidLoad();
    await load.servedMore(30);

    // Missions queued through the proxy while the marketplace holds every answer back: each mission that starts
    // waits on it, so the instance to kill certainly dies with missions in its hands. Missions are queued until
    // it has started one (the instances' workers share them).
    const victim = cluster.instances[1]!;
    const victimPid = victim.process.child.pid!;
    const seen = victim.process.output().length;
    let victimStarted = false;
    const victimStarts = waitForOutput(
      { ...victim.process, output: () => victim.process.output().slice(seen) },
      /mission started/,
      120_000,
      "a mission on the instance to kill",
    ).then(() => {
      victimStarted = true;
    });
    cluster.marketplace.inject({ kind: "hold" });
    const missionIds: string[] = [];
    // The holder is a payer too: its calls are paced like the load's.
    const pace = createPace(SCALE_LIMITS.payerRate / 2);
    while (!victimStarted && missionIds.length < 40) {
      await pace();
      missionIds.push(await queueMission());
    }
    await victimStarts;
    await victim.kill();
    // The missions the killed instance held: started there, never finished.
    const cut = (
      await cluster.db.query<{ mission_id: string }>(
        "SELECT mission_id FROM mission_runs WHERE instance LIKE $1 AND finished_at IS NULL",
        [`%:${victimPid}:%`],
      )
    ).rows.map((r) => r.mission_id);
    expect(cut.length, "missions in the killed instance's hands").toBeGreaterThan(0);
    cluster.marketplace.clearFaults();
    await load.servedMore(20); // the other two carry the load while it is down
    await victim.start();
    await load.servedMore(30);
    await load.stop();

    // What the chain shows (every settlement is a Transfer to the payee), and the book once it has caught up.
    const { transfers, onChain, recorded } = await settlementsSince({
      l2: cluster.l2,
      asset: cluster.asset,
      payTo: cluster.payTo,
      fromBlock: startBlock,
      readBook: book,
      before: bookBefore,
    });
    expect(onChain.size).toBe(transfers);
    const served = load.outcomes.filter((o) => o.status === 200);
    const cutOff = load.outcomes.filter((o) => o.cutOff).length;
    // The restarted instance listens before it is ready and answers 503 `starting` meanwhile: refused before any
    // step, so uncharged (checked below), and the caller tries again.
    const starting = load.outcomes.filter((o) => o.status === 503 && o.reason === "starting");
    const wrong = load.outcomes.filter((o) => o.status !== 200 && !o.cutOff && !starting.includes(o));
    expect(wrong.slice(0, 10), "answers other than 200 under load").toEqual([]);
    expect(new Set(recorded).size, "no settlement recorded twice").toBe(recorded.length);
    expect([...recorded].sort(), "the book's rows are the chain's settlements").toEqual([...onChain.keys()].sort());
    // Each answer names the transaction its settlement is in (a batch's transaction carries several).
    for (const o of served)
      expect(onChain.get(o.key!), `${o.key} settled in the answer's transaction`).toBe(o.transaction);
    expect(new Set(served.map((o) => o.key)).size, "no two answers for one settlement").toBe(served.length);
    const chargedWhileStarting = await cluster.db.query("SELECT nonce FROM settlements WHERE nonce = ANY($1::text[])", [
      starting.map((o) => o.nonce),
    ]);
    expect(chargedWhileStarting.rows, "calls turned away while starting are not charged").toEqual([]);

    // Each mission done, its result recorded once; run twice if the killed instance held it, else once (the
    // instances renew the leases of what they run, however long the marketplace kept them waiting).
    const missions = async () =>
      (
        await cluster.db.query<{ id: string; status: string; runs: number; done: number }>(
          `SELECT m.id, m.status,
             (SELECT count(*)::int FROM mission_runs r WHERE r.mission_id = m.id) AS runs,
             (SELECT count(*)::int FROM mission_runs r WHERE r.mission_id = m.id AND r.outcome = 'done') AS done
           FROM missions m WHERE m.id = ANY($1::uuid[])`,
          [missionIds],
        )
      ).rows;
    let rows = await missions();
    for (let i = 0; i < 300 && rows.some((r) => r.status !== "done"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      rows = await missions();
    }
    expect(rows).toHaveLength(missionIds.length);
    for (const row of rows) {
      expect(row.status, row.id).toBe("done");
      expect(row.done, `${row.id} recorded once`).toBe(1);
      expect(row.runs, `${row.id} run ${cut.includes(row.id) ? "twice (cut by the kill)" : "once"}`).toBe(
        cut.includes(row.id) ? 2 : 1,
      );
    }
    summary.kill =
      `kill: 0 lost 0 double (${onChain.size} settled on chain in ${new Set(onChain.values()).size} transactions = ` +
      `${recorded.length} book rows, ${served.length} ` +
      `served, ${cutOff} cut off by the kill, ${starting.length} turned away uncharged while it started; ` +
      `${rows.length} missions done once, the ${cut.length} cut by the kill run again)`;
  });
});

/** `total` requests of `send`, `concurrency` at a time; requests per second and the statuses seen. */
async function measure(total: number, concurrency: number, send: (i: number) => Promise<number>) {
  const statuses: Record<number, number> = {};
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const status = await send(next++);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return { perSecond: Math.round(total / ((performance.now() - started) / 1000)), statuses };
}

describe("throughput", () => {
  it("of three instances next to one, through the same proxy: public reads, 402 challenges, paid calls", async () => {
    const figures: Record<string, { one: number; three: number }> = {};
    const kinds = {
      "public GET": { total: 3000, concurrency: 32 },
      "402 challenge": { total: 2000, concurrency: 32 },
      "paid call": { total: THROUGHPUT_PAID_CALLS, concurrency: 32 },
    };
    // Each run pays from payers of its own.
    const firstPayer = 6;
    const runs = [
      {
        name: "one",
        base: cluster.singleUrl,
        payers: cluster.payers.slice(firstPayer, firstPayer + THROUGHPUT_PAYERS),
      },
      { name: "three", base: cluster.url, payers: cluster.payers.slice(firstPayer + THROUGHPUT_PAYERS) },
    ] as const;
    for (const { name, base, payers } of runs) {
      const reads = await measure(kinds["public GET"].total, kinds["public GET"].concurrency, async (i) => {
        const res = await fetch(`${base}/agents/info/${1 + (i % 100)}`);
        await res.arrayBuffer();
        return res.status;
      });
      const challenges = await measure(kinds["402 challenge"].total, kinds["402 challenge"].concurrency, async (i) => {
        const res = await post(base, "/intel", { tokenId: 1 + (i % 100) });
        await res.arrayBuffer();
        return res.status;
      });
      // Payments signed before the clock starts.
      const required = await quote(base, "/intel", { tokenId: 20 });
      const payments = await Promise.all(
        Array.from({ length: kinds["paid call"].total }, (_, i) => cluster.pay(payers[i % payers.length]!, required)),
      );
      const paid = await measure(kinds["paid call"].total, kinds["paid call"].concurrency, async (i) => {
        return (await paidCall(base, "/intel", { tokenId: 20 }, payments[i]!)).status;
      });
      expect(reads.statuses).toEqual({ 200: kinds["public GET"].total });
      expect(challenges.statuses).toEqual({ 402: kinds["402 challenge"].total });
      expect(paid.statuses, "every paid call served (the per-payer rate was not reached)").toEqual({
        200: kinds["paid call"].total,
      });
      for (const [kind, result] of [
        ["public GET", reads],
        ["402 challenge", challenges],
        ["paid call", paid],
      ] as const) {
        figures[kind] = { ...(figures[kind] ?? { one: 0, three: 0 }), [name]: result.perSecond };
      }
    }
    summary.throughput = Object.entries(figures)
      .map(([kind, f]) => `${kind} ${f.one} -> ${f.three} req/s (${(f.three / f.one).toFixed(2)}x)`)
      .join(", ");
  }, 600_000);
});

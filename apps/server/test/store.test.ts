import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCallLimiter, postgresRateCounter } from "../src/limits/call-limiter.js";
import { createRequestBudget } from "../src/limits/request-budget.js";
import { createChannelStore } from "../src/store/channels.js";
import type { Database } from "../src/store/database.js";
import { FacilitatorKeyInUseError, lockFacilitatorKeys } from "../src/store/facilitator-key-locks.js";
import { DatabaseTooNewError, LATEST_MIGRATION, migrate, migrations } from "../src/store/migrations.js";
import { createMissionQueue } from "../src/store/mission-queue.js";
import { DataDirectoryInUseError, openMemoryPglite, openPglite } from "../src/store/pglite.js";
import { openPostgres } from "../src/store/postgres.js";
import { createSettlementLedger, type SettlementClaim } from "../src/store/settlement-ledger.js";
import { createSignInNonceStore } from "../src/store/sign-in-nonces.js";
import { migrateUpTo, openTestDatabase } from "./helpers/test-database.js";
import { skipPostgres, startTestPostgres, type TestPostgres } from "./helpers/test-postgres.js";

const withoutPostgres = skipPostgres();
let postgres: TestPostgres | undefined;
beforeAll(async () => {
  if (!withoutPostgres) postgres = await startTestPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});

const PAYER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
let claims = 0;
function claimOf(overrides: Partial<SettlementClaim> = {}): SettlementClaim {
  claims += 1;
  const nonce = `0x${claims.toString(16).padStart(64, "0")}`;
  return {
    paymentKey: `eip3009:eip155:31338:0xasset:${PAYER.toLowerCase()}:${nonce}`,
    route: "/dispatch",
    method: "POST",
    tokenId: 3,
    payer: PAYER,
    nonce,
    caller: PAYER,
    pricePoint: "discounted",
    amount: "10000",
    asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    network: "eip155:31338",
    payTo: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
    validBefore: new Date(Date.now() + 60_000),
    requestId: `req-${claims}`,
    ...overrides,
  };
}

/** A mission of intel for token 3, due a second ago, bought by the payment `paymentKey`. */
function dueMission(paymentKey: string) {
  return {
    tokenId: 3,
    tool: "intel" as const,
    params: {},
    caller: null,
    requestedBy: PAYER,
    paymentKey,
    runAt: new Date(Date.now() - 1000),
  };
}

/** Each backend the store runs on; Postgres where a server is installed (always in CI). */
const backends: [string, () => Promise<{ open: () => Promise<Database>; fresh: Database }>][] = [
  [
    "PGlite",
    async () => {
      const fresh = await openTestDatabase();
      return { fresh, open: async () => fresh };
    },
  ],
  [
    "Postgres",
    async () => {
      if (!postgres) throw new Error("no Postgres server here");
      const url = await postgres.createDatabase();
      const fresh = await openPostgres(url);
      await migrate(fresh);
      return { fresh, open: () => openPostgres(url) };
    },
  ],
];

describe.each(backends.filter(([name]) => name !== "Postgres" || !withoutPostgres))(
  "the store on %s",
  (name, setUp) => {
    let db: Database;
    let open: () => Promise<Database>;
    const others: Database[] = [];
    beforeAll(async () => {
      ({ fresh: db, open } = await setUp());
    }, 60_000);
    afterAll(async () => {
      for (const other of others) await other.close();
      await db?.close();
    });

    it("is at the latest schema version, each step applied once; migrating again changes nothing", async () => {
      const rows = await db.query<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version");
      expect(rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
      expect(await migrate(db)).toEqual([]);
    });

    it("refuses a database migrated by a newer build, naming both versions", async () => {
      await db.query("INSERT INTO schema_migrations (version, name) VALUES ($1, 'from the future')", [
        LATEST_MIGRATION + 1,
      ]);
      try {
        await expect(migrate(db)).rejects.toThrow(DatabaseTooNewError);
        await expect(migrate(db)).rejects.toThrow(`schema version ${LATEST_MIGRATION + 1}`);
      } finally {
        await db.query("DELETE FROM schema_migrations WHERE version = $1", [LATEST_MIGRATION + 1]);
      }
    });

    it("claims a payment once: in use while pending, used once settled, free again once released", async () => {
      const ledger = createSettlementLedger(db);
      const claim = claimOf();
      expect((await ledger.claim(claim)).outcome).toBe("claimed");
      expect((await ledger.claim({ ...claim, requestId: "another" })).outcome).toBe("in_use");
      await ledger.release(claim.paymentKey);
      expect((await ledger.claim(claim)).outcome).toBe("claimed");
      await ledger.markSettled(claim.paymentKey, `0x${"12".repeat(32)}`, new Date());
      expect((await ledger.claim(claim)).outcome).toBe("used");
      // A settled row is never released or settled again.
      await ledger.release(claim.paymentKey);
      await ledger.markSettled(claim.paymentKey, `0x${"34".repeat(32)}`, new Date());
      const [row] = await db.query<{ transaction: string; n: number }>(
        "SELECT transaction, count(*) OVER ()::int AS n FROM settlements WHERE payment_key = $1",
        [claim.paymentKey],
      );
      expect(row).toEqual({ transaction: `0x${"12".repeat(32)}`, n: 1 });
    });

    it("tells each claim what its payer has in flight, one claim at a time, even when they come together", async () => {
      const ledger = createSettlementLedger(db);
      const payer = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
      const mine = (overrides: Partial<SettlementClaim> = {}) => claimOf({ payer, amount: "25000", ...overrides });
      const first = mine();
      expect(await ledger.claim(first)).toEqual({ outcome: "claimed", inFlight: 0n });
      expect(await ledger.claim(mine())).toEqual({ outcome: "claimed", inFlight: 25_000n });
      // Not counted: another payer's claims, another asset's, settled ones, and authorizations past validBefore.
      expect(await ledger.claim(claimOf({ amount: "999" }))).toMatchObject({ outcome: "claimed" });
      await ledger.claim(mine({ asset: "0x0000000000000000000000000000000000000001" }));
      await ledger.markSettled(first.paymentKey, `0x${"56".repeat(32)}`, new Date());
      await ledger.claim(mine({ validBefore: new Date(Date.now() - 1000) }));
      expect(await ledger.claim(mine({ amount: "1" }))).toEqual({ outcome: "claimed", inFlight: 25_000n });

      // Twenty at once: each sees all the claims made before it, so no two are blind to each other.
      const other = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65";
      const results = await Promise.all(
        Array.from({ length: 20 }, () => ledger.claim(claimOf({ payer: other, amount: "1000" }))),
      );
      const seen = results.map((r) => (r.outcome === "claimed" ? r.inFlight : -1n)).sort((a, b) => Number(a - b));
      expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i) * 1000n));
    });

    it("takes a sign-in nonce once per address: in use, spent for good, given back, swept once expired", async () => {
      const signIns = createSignInNonceStore(db);
      const expiresAt = new Date(Date.now() + 60_000);
      expect(await signIns.claim(PAYER, "n-1", expiresAt)).toBe("claimed");
      expect(await signIns.claim(PAYER.toLowerCase(), "n-1", expiresAt)).toBe("in_use");
      // Another address may have picked the same nonce.
      expect(await signIns.claim("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", "n-1", expiresAt)).toBe("claimed");
      await signIns.release(PAYER, "n-1");
      expect(await signIns.claim(PAYER, "n-1", expiresAt)).toBe("claimed");
      expect(await signIns.isSpent(PAYER, "n-1")).toBe(false);
      await signIns.spend(PAYER, "n-1");
      expect(await signIns.isSpent(PAYER, "n-1")).toBe(true);
      await signIns.release(PAYER, "n-1");
      expect(await signIns.claim(PAYER, "n-1", expiresAt)).toBe("spent");
      expect(await signIns.sweep(new Date(Date.now() + 30_000))).toBe(0);
      expect(await signIns.sweep(new Date(Date.now() + 120_000))).toBe(2);
      expect(await signIns.isSpent(PAYER, "n-1")).toBe(false);
    });

    it("runs only paid missions, and a given-back payment takes its mission with it", async () => {
      const ledger = createSettlementLedger(db);
      const queue = createMissionQueue(db);
      const paid = claimOf();
      const unpaid = claimOf();
      for (const claim of [paid, unpaid]) {
        expect((await ledger.claim(claim)).outcome).toBe("claimed");
        await queue.add(dueMission(claim.paymentKey));
      }
      expect(await queue.claimDue("worker-a", 10, 60_000)).toEqual([]);
      await ledger.markSettled(paid.paymentKey, `0x${"56".repeat(32)}`, new Date());
      await ledger.release(unpaid.paymentKey);
      const claimed = await queue.claimDue("worker-a", 10, 60_000);
      expect(claimed.map((m) => m.attempt)).toEqual([1]);
      const [{ n } = { n: -1 }] = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM missions WHERE payment_key = $1",
        [unpaid.paymentKey],
      );
      expect(n).toBe(0);
      expect(await queue.complete(claimed[0]!.id, "worker-a", 1, { ok: true })).toBe(true);
    });

    it("hands a mission whose worker died to another once the lease ends; the late worker's answer is not kept", async () => {
      const ledger = createSettlementLedger(db);
      const queue = createMissionQueue(db);
      const claim = claimOf();
      await ledger.claim(claim);
      await ledger.markSettled(claim.paymentKey, `0x${"78".repeat(32)}`, new Date());
      const mission = await queue.add(dueMission(claim.paymentKey));
      const [first] = await queue.claimDue("worker-a", 10, 60_000);
      expect(first?.id).toBe(mission.id);
      expect(await queue.claimDue("worker-b", 10, 60_000)).toEqual([]);
      // worker-a dies; its lease runs out (the store is told it ended a moment ago).
      await db.query("UPDATE missions SET lease_until = now() - interval '1 second' WHERE id = $1", [mission.id]);
      const [second] = await queue.claimDue("worker-b", 10, 60_000);
      expect(second).toMatchObject({ id: mission.id, attempt: 2 });
      expect(await queue.complete(mission.id, "worker-a", 1, { late: true })).toBe(false);
      expect(await queue.complete(mission.id, "worker-b", 2, { onTime: true })).toBe(true);
      expect((await queue.get(mission.id))?.result).toEqual({ onTime: true });
    });

    it("renews a claim only for the worker that holds it", async () => {
      const ledger = createSettlementLedger(db);
      const queue = createMissionQueue(db);
      const claim = claimOf();
      await ledger.claim(claim);
      await ledger.markSettled(claim.paymentKey, `0x${"79".repeat(32)}`, new Date());
      const mission = await queue.add(dueMission(claim.paymentKey));
      await queue.claimDue("worker-a", 10, 1000);
      const leaseOf = async () =>
        (
          await db.query<{ ms: number }>(
            "SELECT (extract(epoch FROM lease_until - now()) * 1000)::float8 AS ms FROM missions WHERE id = $1",
            [mission.id],
          )
        )[0]!.ms;
      expect(await queue.renew(mission.id, "worker-a", 1, 600_000)).toBe(true);
      expect(await leaseOf()).toBeGreaterThan(500_000);
      // Another worker, or an earlier attempt, cannot keep it.
      expect(await queue.renew(mission.id, "worker-b", 1, 1000)).toBe(false);
      expect(await queue.renew(mission.id, "worker-a", 2, 1000)).toBe(false);
      expect(await leaseOf()).toBeGreaterThan(500_000);
      await db.query("UPDATE missions SET lease_until = now() - interval '1 second' WHERE id = $1", [mission.id]);
      expect(await queue.claimDue("worker-b", 10, 60_000)).toMatchObject([{ id: mission.id, attempt: 2 }]);
      expect(await queue.renew(mission.id, "worker-a", 1, 600_000)).toBe(false);
    });

    it("lends the channel claimer's lease to one instance at a time, and takes it back when its holder gives it up", async () => {
      const channels = createChannelStore(db);
      expect(await channels.lease("instance-a", 60_000)).toBe(true);
      expect(await channels.lease("instance-b", 60_000)).toBe(false);
      // Only its holder gives it up.
      await channels.releaseLease("instance-b");
      expect(await channels.lease("instance-b", 60_000)).toBe(false);
      await channels.releaseLease("instance-a");
      expect(await channels.lease("instance-b", 60_000)).toBe(true);
      await channels.releaseLease("instance-b");
    });

    it("keeps the channels' deposits, sweeps and refunds as their events are recorded, an event seen twice once", async () => {
      const channels = createChannelStore(db);
      const before = await channels.totals();
      const event = (kind: "deposit" | "sweep" | "refund", amount: bigint, channelId = "0xc1") => ({
        transaction: `0x${(++claims).toString(16).padStart(64, "0")}`,
        kind,
        channelId: kind === "sweep" ? "" : channelId,
        amount,
        asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        network: "eip155:31338",
      });
      const deposit = event("deposit", 3_000_000n);
      await channels.record(deposit);
      await channels.record(deposit);
      await channels.record(event("deposit", 1_000_000n, "0xc2"));
      await channels.record(event("sweep", 250_000n));
      await channels.record(event("refund", 40_000n));
      const after = await channels.totals();
      expect(after.deposited - before.deposited).toBe(4_000_000n);
      expect(after.swept - before.swept).toBe(250_000n);
      expect(after.refunded - before.refunded).toBe(40_000n);
      // The kept totals are the events' own sums.
      const [sums] = await db.query<{ deposited: string; swept: string; refunded: string }>(
        `SELECT (SELECT coalesce(sum(amount), 0) FROM channel_events WHERE kind = 'deposit')::text AS deposited,
           (SELECT coalesce(sum(amount), 0) FROM channel_events WHERE kind = 'sweep')::text AS swept,
           (SELECT coalesce(sum(amount), 0) FROM channel_events WHERE kind = 'refund')::text AS refunded`,
      );
      expect([after.deposited, after.swept, after.refunded].map(String)).toEqual([
        sums!.deposited,
        sums!.swept,
        sums!.refunded,
      ]);
    });

    it("books each claim's calls under it, and a call settled after a later claim under the claim that took it", async () => {
      const channels = createChannelStore(db);
      const ledger = createSettlementLedger(db);
      const channelId = `0x${"c7".repeat(32)}`;
      await channels.open({
        channelId,
        config: {},
        payer: PAYER,
        balance: 1_000_000n,
        totalClaimed: 0n,
        refundNonce: 0n,
        withdrawRequestedAt: 0,
      });
      const entryOf = (cumulative: bigint) =>
        claimOf({
          paymentKey: `channel:${channelId}:${cumulative}`,
          nonce: channelId,
          amount: "10000",
          channel: { id: channelId, cumulative: cumulative.toString() },
        });
      const charge = (expected: bigint, booked: boolean) =>
        channels.charge({
          channelId,
          expected,
          charged: expected + 10_000n,
          signedMax: expected + 10_000n,
          signature: "0x01",
          ...(booked ? { booking: { claim: entryOf(expected + 10_000n), transaction: "" } } : {}),
        });
      const transactionsOf = async () =>
        (
          await db.query<{ cumulative: string; transaction: string | null }>(
            "SELECT cumulative::text, transaction FROM settlements WHERE channel_id = $1 ORDER BY cumulative",
            [channelId],
          )
        ).map((row) => [row.cumulative, row.transaction]);
      const claimOne = `0x${"a1".repeat(32)}`;
      const claimTwo = `0x${"a2".repeat(32)}`;
      const terms = { asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3", network: "eip155:31338" };
      // Two calls, claimed; a third whose entry a payment identifier left pending (its instance stopped before the
      // charge's entry was settled), a fourth; the second claim takes the channel to 40,000.
      await charge(0n, true);
      await charge(10_000n, true);
      await channels.claimed({ transaction: claimOne, ...terms }, [{ channelId, totalClaimed: 20_000n }]);
      await ledger.claim(entryOf(30_000n));
      await charge(20_000n, false);
      await charge(30_000n, true);
      await channels.claimed({ transaction: claimTwo, ...terms }, [{ channelId, totalClaimed: 40_000n }]);
      // The same claim seen again books nothing twice. (The pending entry has no transaction yet.)
      await channels.claimed({ transaction: claimTwo, ...terms }, [{ channelId, totalClaimed: 40_000n }]);
      expect(await transactionsOf()).toEqual([
        ["10000", claimOne],
        ["20000", claimOne],
        ["30000", null],
        ["40000", claimTwo],
      ]);
      const events = await db.query<{ transaction: string; amount: string }>(
        "SELECT transaction, amount::text FROM channel_events WHERE channel_id = $1 AND kind = 'claim' ORDER BY transaction",
        [channelId],
      );
      expect(events).toEqual([
        { transaction: claimOne, amount: "20000" },
        { transaction: claimTwo, amount: "10000" },
      ]);
      // Settled late, the pending entry is booked under the claim that took the calls above it.
      expect(await channels.settleLeftovers(new Date(Date.now() + 1000))).toEqual({ settled: 1, released: 0 });
      expect(await transactionsOf()).toEqual([
        ["10000", claimOne],
        ["20000", claimOne],
        ["30000", claimTwo],
        ["40000", claimTwo],
      ]);
    });

    // One PGlite serves one process; Postgres is where instances race for missions.
    const onPostgres = name === "Postgres" ? it : () => undefined;
    onPostgres("gives concurrent claimers disjoint missions: each due mission is claimed once", async () => {
      const ledger = createSettlementLedger(db);
      const ids = new Set<string>();
      for (let i = 0; i < 40; i++) {
        const claim = claimOf();
        await ledger.claim(claim);
        await ledger.markSettled(claim.paymentKey, `0x${"9a".repeat(32)}`, new Date());
        const mission = await createMissionQueue(db).add(dueMission(claim.paymentKey));
        ids.add(mission.id);
      }
      // Four connections claim three at a time, all four at once in each round, until a round finds nothing.
      // Rounds make the race happen on any machine: left to run freely, the first connection to open can
      // take every mission before the others have asked.
      const workers = await Promise.all([0, 1, 2, 3].map(() => open()));
      others.push(...workers);
      const queues = workers.map((worker) => createMissionQueue(worker));
      const taken: string[][] = queues.map(() => []);
      for (;;) {
        const round = await Promise.all(queues.map((queue, index) => queue.claimDue(`worker-${index}`, 3, 60_000)));
        if (round.every((batch) => batch.length === 0)) break;
        for (const [index, batch] of round.entries()) taken[index]!.push(...batch.map((m) => m.id));
      }
      const all = taken.flat().filter((id) => ids.has(id));
      expect(all.length).toBe(ids.size);
      expect(new Set(all).size).toBe(ids.size);
      // Each claimed while the others did, and none was left without work.
      expect(taken.every((mine) => mine.length > 0)).toBe(true);
    });
  },
);

describe.skipIf(withoutPostgres)("several instances on one Postgres database", () => {
  let url: string;
  let a: Database;
  let b: Database;
  beforeAll(async () => {
    url = await postgres!.createDatabase();
    a = await openPostgres(url);
    await migrate(a);
    b = await openPostgres(url);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it("count one request rate between them: past the limit, the second instance refuses too", async () => {
    // Four per minute rather than per second: the eight calls below fall in one window however slow the machine.
    const settings = { ratePerSecond: 4, concurrency: 100 };
    const window = { windowSeconds: 60 };
    const onA = createCallLimiter(settings, { name: "payer", rates: postgresRateCounter(a.pool!, window) });
    const onB = createCallLimiter(settings, { name: "payer", rates: postgresRateCounter(b.pool!, window) });
    const key = "0xpayer-shared-rate";
    const outcomes = await Promise.all([onA, onB, onA, onB, onA, onB, onA, onB].map((l) => l.take(key)));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(4);
    expect(outcomes.filter((o) => !o.ok).every((o) => !o.ok && o.why === "rate")).toBe(true);
    // Each limit and key has its own count.
    expect((await onB.take("0xanother-payer")).ok).toBe(true);
    const perIp = createCallLimiter(settings, { name: "ip", rates: postgresRateCounter(b.pool!, window) });
    expect((await perIp.take(key)).ok).toBe(true);
  });

  it("share an upstream key's budget: past it, the other instance's request is not sent either", async () => {
    const budget = (pool: NonNullable<Database["pool"]>) =>
      createRequestBudget(3, { name: "marketplace", key: "key-shared", rates: postgresRateCounter(pool) })!;
    const [onA, onB] = [budget(a.pool!), budget(b.pool!)];
    const taken = [await onA.take(), await onB.take(), await onA.take(), await onB.take()];
    expect(taken.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    expect(taken[3]).toBeGreaterThan(0);
    // Another key has a budget of its own.
    expect(
      await createRequestBudget(3, {
        name: "marketplace",
        key: "key-other",
        rates: postgresRateCounter(a.pool!),
      })!.take(),
    ).toBeUndefined();
  });

  it("never settle with one facilitator key: the second instance is refused until the first lets go", async () => {
    const address = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" as const;
    const first = await lockFacilitatorKeys(a.pool!, [address]);
    await expect(lockFacilitatorKeys(b.pool!, [address], { waitMs: 0 })).rejects.toThrow(FacilitatorKeyInUseError);
    await expect(lockFacilitatorKeys(b.pool!, [address], { waitMs: 0 })).rejects.toThrow(
      /0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC is in use by another instance/,
    );
    // Another key is free; and once the first instance lets go (or dies), the key is taken.
    const other = await lockFacilitatorKeys(b.pool!, ["0x90F79bf6EB2c4f870365E785982E1f101E93b906"], { waitMs: 0 });
    await first.release();
    const second = await lockFacilitatorKeys(b.pool!, [address], { waitMs: 0 });
    await second.release();
    await other.release();
  });
});

describe("channel events recorded before their totals were kept", () => {
  it("are added up once by the migration that keeps the totals, which the triggers then keep", async () => {
    const db = await openMemoryPglite();
    try {
      await migrateUpTo(db, 12);
      await db.query(
        `INSERT INTO channel_events (transaction, kind, channel_id, amount, asset, network)
         VALUES ('0x01', 'deposit', '0xc1', 3000000, 'a', 'n'), ('0x02', 'deposit', '0xc2', 2000000, 'a', 'n'),
           ('0x03', 'claim', '0xc1', 70000, 'a', 'n'), ('0x04', 'sweep', '', 70000, 'a', 'n')`,
      );
      expect(await migrate(db)).toEqual(migrations.filter((m) => m.version >= 13).map((m) => m.version));
      const channels = createChannelStore(db);
      expect(await channels.totals()).toMatchObject({ deposited: 5_000_000n, swept: 70_000n, refunded: 0n });
      await channels.record({
        transaction: "0x05",
        kind: "refund",
        channelId: "0xc2",
        amount: 1_930_000n,
        asset: "a",
        network: "n",
      });
      expect(await channels.totals()).toMatchObject({ deposited: 5_000_000n, swept: 70_000n, refunded: 1_930_000n });
    } finally {
      await db.close();
    }
  });
});

describe("PGlite's data directory", () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-tools-store-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps the records across a close and a reopen", async () => {
    const first = await openPglite(dir);
    await migrate(first);
    const claim = claimOf();
    await createSettlementLedger(first).claim(claim);
    await first.close();
    const again = await openPglite(dir);
    try {
      expect(await migrate(again)).toEqual([]);
      expect((await createSettlementLedger(again).claim(claim)).outcome).toBe("in_use");
      // Sized as an embedded store, not as a database server (docs/decisions.md, "Memory").
      expect(await again.query("SHOW shared_buffers")).toEqual([{ shared_buffers: "16MB" }]);
    } finally {
      await again.close();
    }
  }, 60_000);

  it("refuses a second process while one holds it, and takes over a stale lock", async () => {
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    try {
      writeFileSync(join(dir, "agent-tools.pid"), String(holder.pid));
      await expect(openPglite(dir)).rejects.toThrow(DataDirectoryInUseError);
      await expect(openPglite(dir)).rejects.toThrow(`in use by process ${holder.pid}`);
    } finally {
      holder.kill("SIGKILL");
    }
    await new Promise((resolve) => holder.once("exit", resolve));
    const db = await openPglite(dir);
    await db.close();
  }, 60_000);

  it("gives every new directory a cluster of its own, none of another's records in it", async () => {
    // New directories after the first are copies of a cluster kept once per machine (docs/decisions.md, "Memory"):
    // what one of them records is in no other, whichever was made first.
    const others = [0, 1].map(() => mkdtempSync(join(tmpdir(), "agent-tools-store-new-")));
    try {
      const claim = claimOf();
      for (const other of others) {
        const db = await openPglite(other);
        try {
          expect(await migrate(db)).toEqual(migrations.map((m) => m.version));
          expect((await createSettlementLedger(db).claim(claim)).outcome).toBe("claimed");
          expect(await db.query("SHOW shared_buffers")).toEqual([{ shared_buffers: "16MB" }]);
        } finally {
          await db.close();
        }
      }
    } finally {
      for (const other of others) rmSync(other, { recursive: true, force: true });
    }
  }, 60_000);
});

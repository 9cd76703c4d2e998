import { paidRoutes } from "@agent-tools/schema";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CollectionIndex, IndexedToken } from "../src/chain/collection-index.js";
import { createMissionWorker, type MissionOutcome } from "../src/missions/mission-worker.js";
import type { Database } from "../src/store/database.js";
import { createMissionQueue } from "../src/store/mission-queue.js";
import { createSettlementLedger } from "../src/store/settlement-ledger.js";
import { openTestDatabase } from "./helpers/test-database.js";

let db: Database;
beforeAll(async () => {
  db = await openTestDatabase();
}, 60_000);
afterAll(async () => {
  await db?.close();
});

/** A collection of one token, 3, always fresh. */
const collection = {
  fresh: async () => {},
  token: (tokenId: number) => (tokenId === 3 ? ({ tokenId: 3 } as IndexedToken) : undefined),
} as unknown as CollectionIndex;

/** An intel mission for token 3, due now, its payment settled. */
async function queueMission(): Promise<string> {
  const nonce = `0x${"ab".repeat(32)}`;
  const paymentKey = `eip3009:eip155:31338:0xasset:0xpayer:${nonce}`;
  const ledger = createSettlementLedger(db);
  await ledger.claim({
    paymentKey,
    route: "/dispatch",
    method: "POST",
    tokenId: 3,
    payer: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    nonce,
    caller: null,
    pricePoint: "standard",
    amount: "1000000",
    asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    network: "eip155:31338",
    payTo: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
    validBefore: new Date(Date.now() + 60_000),
    requestId: "req-lease",
  });
  await ledger.markSettled(paymentKey, `0x${"cd".repeat(32)}`, new Date());
  const mission = await createMissionQueue(db).add({
    tokenId: 3,
    tool: "intel",
    params: {},
    caller: null,
    requestedBy: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    paymentKey,
    runAt: new Date(Date.now() - 1000),
  });
  return mission.id;
}

/** Resolves once `check` holds, asking the database every 50 ms. */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe("the mission worker's lease", () => {
  it("is renewed while a mission runs: a mission that outlasts its lease twice is not taken over, and runs once", async () => {
    const id = await queueMission();
    const LEASE_MS = 1500;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const logger = pino({ level: "silent" });
    const queue = createMissionQueue(db);
    const worker = createMissionWorker({
      queue,
      collection,
      logger,
      leaseMs: LEASE_MS,
      pollMs: 60_000,
      instance: "instance-a",
      tools: {
        intel: async () => {
          started();
          await held;
          return paidRoutes.intel.sampleOutput as never;
        },
      },
    });
    // Another instance, polling the same queue all along.
    const other = createMissionWorker({
      queue,
      collection,
      logger,
      tools: {},
      leaseMs: LEASE_MS,
      pollMs: 50,
      instance: "instance-b",
    });
    const outcomes: (MissionOutcome & { instance: string })[] = [];
    for (const w of [worker, other]) w.onOutcome((outcome) => outcomes.push({ ...outcome, instance: w.instance }));
    worker.start();
    await running;
    other.start();
    try {
      const [{ lease_until: firstLease }] = (await db.query<{ lease_until: Date }>(
        "SELECT lease_until FROM missions WHERE id = $1",
        [id],
      )) as [{ lease_until: Date }];
      // Two whole leases pass on the database's clock while the tool runs.
      await until(
        async () =>
          (
            await db.query<{ past: boolean }>(
              "SELECT now() > $1::timestamptz + make_interval(secs => $2::double precision / 1000) AS past",
              [firstLease, LEASE_MS],
            )
          )[0]!.past,
      );
    } finally {
      release();
      // Each stop waits for the missions running there.
      await worker.stop();
      await other.stop();
    }
    expect(outcomes).toEqual([{ id, tool: "intel", attempt: 1, outcome: "done", instance: "instance-a" }]);
    const runs = await db.query<{ instance: string; outcome: string }>(
      "SELECT instance, outcome FROM mission_runs WHERE mission_id = $1",
      [id],
    );
    expect(runs).toEqual([{ instance: "instance-a", outcome: "done" }]);
  });
});

import { agentCollectionAbi } from "@agent-tools/contracts";
import {
  type Clearance,
  dispatchResponseSchema,
  dropRadarResponseSchema,
  intelResponseSchema,
  listMissionsResponseSchema,
  type Mission,
} from "@agent-tools/schema";
import type { Address } from "viem";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type PaidTestServer, type SendCall, startPaidTestServer } from "./helpers/paid-server.js";
import { tokenHeldBy } from "./helpers/tokens.js";

let t: PaidTestServer;
const INTERNAL_SECRET = "SECRET-API-KEY";
const account = (index: number): Address => t.devnet.deployment.accounts[index]!.address;

/** The first revealed token of devnet account `index` with this clearance. */
const tokenOf = (index: number, clearance: Clearance) => tokenHeldBy(t.chain.collection, account(index), clearance);

beforeAll(async () => {
  // Two attempts, 50 ms apart: enough to see a retry without waiting for the production backoff.
  t = await startPaidTestServer({
    env: { DISPATCH_MAX_ATTEMPTS: "2", DISPATCH_RETRY_BASE_MS: "50", DISPATCH_POLL_MS: "50" },
    tools: {
      // A tool that fails on something internal, with the kind of text a library writes.
      offerRadar: async () => {
        throw new Error(`request failed: https://rpc.example/v2/${INTERNAL_SECRET} (viem@2.57.20)`);
      },
    },
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
});
// Faults only: the last test leaves the market-data client's circuit open on purpose, and nothing after it calls it.
afterEach(() => {
  t.sims.marketplace.faults.clear();
  t.sims.marketData.faults.clear();
});

type Headers = Record<string, string>;

/** Request -> 402 -> pay from `payer` -> the same request with the payment (and sign-in, when given). */
async function paid(send: SendCall, payer: number, signIn?: Record<string, string>) {
  return t.paidCall((headers) => send({ ...signIn, ...headers }), payer);
}

async function queue(holder: number, body: unknown, options: { anonymous?: boolean } = {}) {
  const signIn = options.anonymous ? undefined : { "SIGN-IN-WITH-X": await t.signIn(holder, "/dispatch") };
  return paid((headers) => t.post("/dispatch", body, headers), holder, signIn);
}

async function list(holder: number, query: string, options: { anonymous?: boolean } = {}) {
  const path = `/dispatch?${query}`;
  const signIn = options.anonymous ? undefined : { "SIGN-IN-WITH-X": await t.signIn(holder, path) };
  return paid((headers) => t.get(path, headers), holder, signIn);
}

/**
 * Resolves with the mission once it is in one of `statuses`, as the worker left it in the store: checked at once
 * and after each attempt the worker finishes.
 */
function until(id: string, statuses: Mission["status"][]): Promise<Mission> {
  return new Promise((resolve, reject) => {
    const check = async () => {
      const mission = await t.queue.get(id);
      if (!mission || !statuses.includes(mission.status)) return;
      unsubscribe();
      resolve(mission);
    };
    const unsubscribe = t.worker.onOutcome((outcome) => {
      if (outcome.id === id) check().catch(reject);
    });
    check().catch(reject);
  });
}

async function runsOf(id: string): Promise<{ attempt: number; outcome: string | null }[]> {
  return t.db.query("SELECT attempt, outcome FROM mission_runs WHERE mission_id = $1 ORDER BY attempt", [id]);
}

describe("POST /dispatch", () => {
  it("queues a mission for an Elite holder at the discounted price (202), runs it once and keeps the answer", async () => {
    const tokenId = tokenOf(3, "Elite");
    const { res, required } = await queue(3, { tokenId, mission: { tool: "intel" } });
    expect(required.accepts[0]?.amount).toBe("10000");
    expect(res.status).toBe(202);
    expect(res.headers.get("payment-response")).toBeTruthy();
    const body = dispatchResponseSchema.parse(await res.json());
    expect(body.mission).toMatchObject({ tokenId, tool: "intel", status: "queued", requestedBy: account(3) });
    expect(body.brief).toMatch(new RegExp(`agent #${tokenId}: intel runs now`));

    const done = await until(body.mission.id, ["done", "failed"]);
    expect(done.status).toBe("done");
    expect(done.attempts).toBe(1);
    const answer = intelResponseSchema.parse(done.result);
    expect(answer).toMatchObject({ tokenId, caller: account(3) });
    expect(await runsOf(body.mission.id)).toEqual([{ attempt: 1, outcome: "done" }]);

    // The call is in the ledger once, with the mission's payment.
    const [row] = await t.db.query<{ route: string; method: string; status: string; amount: string }>(
      "SELECT s.route, s.method, s.status, s.amount::text AS amount FROM settlements s JOIN missions m USING (payment_key) WHERE m.id = $1",
      [body.mission.id],
    );
    expect(row).toEqual({ route: "/dispatch", method: "POST", status: "settled", amount: "10000" });
  });

  it("stores the tool's params with its defaults and waits for runAt", async () => {
    const tokenId = tokenOf(3, "Elite");
    const runAt = new Date(Date.now() + 3_600_000).toISOString();
    const { res } = await queue(3, {
      tokenId,
      mission: { tool: "drop-radar", params: { type: "upcoming", limit: 3 } },
      runAt,
    });
    expect(res.status).toBe(202);
    const { mission } = dispatchResponseSchema.parse(await res.json());
    expect(mission.params).toEqual({
      type: "upcoming",
      limit: 3,
      scanChains: true,
      enrich: false,
      checkWalletEligibility: false,
      watchSlugs: [],
    });
    expect(mission.runAt).toBe(runAt);
    // Not due: a whole pass of the worker after the call leaves it queued.
    await t.worker.wake();
    expect((await t.queue.get(mission.id))?.status).toBe("queued");
    // Its time comes (the store is told it is due now); the next pass runs it.
    const [due] = await t.db.query<{ at: number }>(
      "UPDATE missions SET run_at = now() WHERE id = $1 RETURNING floor(extract(epoch FROM run_at) * 1000)::float8 AS at",
      [mission.id],
    );
    const finished = until(mission.id, ["done", "failed"]);
    t.worker.wake();
    const done = await finished;
    expect(done.status).toBe("done");
    expect(Date.parse(done.startedAt!)).toBeGreaterThanOrEqual(due!.at);
    expect(dropRadarResponseSchema.parse(done.result).drops.length).toBeLessThanOrEqual(3);
  });

  it("answers 400 naming the mission's bad field, before any price is quoted", async () => {
    const tokenId = tokenOf(3, "Elite");
    const res = await t.post("/dispatch", {
      tokenId,
      mission: { tool: "allowlist-scan", params: { limit: 500 } },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; details: { field: string }[] } };
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details.map((d) => d.field)).toEqual(["mission.params.limit"]);
  });

  it("refuses an unrevealed agent with 403 agent_not_revealed, signed in or not, and charges nothing", async () => {
    let unrevealed = 6001;
    while (t.chain.collection.token(unrevealed)?.owner !== account(3)) unrevealed += 1;
    expect(t.chain.collection.token(unrevealed)?.revealed).toBe(false);
    for (const headers of [{}, { "SIGN-IN-WITH-X": await t.signIn(3, "/dispatch") }] as Headers[]) {
      const res = await t.post("/dispatch", { tokenId: unrevealed, mission: { tool: "intel" } }, headers);
      expect(res.status).toBe(403);
      const body = (await res.json()) as { error: { code: string; details: { field: string }[] } };
      expect(body.error.code).toBe("agent_not_revealed");
      expect(body.error.details[0]?.field).toBe("tokenId");
    }
  });

  it("refuses a signed-in holder whose token is below Elite with 403 insufficient_clearance", async () => {
    const res = await t.post(
      "/dispatch",
      { tokenId: tokenOf(3, "Holder"), mission: { tool: "intel" } },
      { "SIGN-IN-WITH-X": await t.signIn(3, "/dispatch") },
    );
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("insufficient_clearance");
  });

  it("charges nothing and queues nothing when an anonymous wallet mission names no wallet", async () => {
    const tokenId = tokenOf(4, "Elite");
    const before = await t.balance(account(5));
    const count = async (sql: string) => (await t.db.query<{ n: number }>(sql))[0]?.n;
    const missionsBefore = await count("SELECT count(*)::int AS n FROM missions");
    const { res } = await queue(5, { tokenId, mission: { tool: "allowlist-scan" } }, { anonymous: true });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { details: { field: string }[] } };
    expect(body.error.details[0]?.field).toBe("mission.params.walletAddress");
    expect(await t.balance(account(5))).toBe(before);
    expect(await count("SELECT count(*)::int AS n FROM missions")).toBe(missionsBefore);
    expect(await count("SELECT count(*)::int AS n FROM settlements WHERE status = 'pending'")).toBe(0);
  });
});

describe("mission retries", () => {
  it("retries a mission whose upstream failed, then keeps the answer", async () => {
    const tokenId = tokenOf(3, "Elite");
    // Every request of the first attempt fails (the upstream client tries 3 times); the second attempt passes.
    t.sims.marketplace.faults.set("/api/v2/drops", { status: 500, times: 3 });
    const { res } = await queue(3, {
      tokenId,
      mission: { tool: "drop-radar", params: { type: "featured", limit: 2, scanChains: false } },
    });
    const { mission } = dispatchResponseSchema.parse(await res.json());
    const done = await until(mission.id, ["done", "failed"]);
    expect(done.status).toBe("done");
    expect(done.attempts).toBe(2);
    expect((await runsOf(mission.id)).map((r) => r.outcome)).toEqual(["retry: upstream_error", "done"]);
  });
});

describe("GET /dispatch", () => {
  it("lists the agent's missions newest first with counts, for its holder", async () => {
    const tokenId = tokenOf(6, "Elite");
    const first = dispatchResponseSchema.parse(
      await (await queue(6, { tokenId, mission: { tool: "intel" } })).res.json(),
    );
    const second = dispatchResponseSchema.parse(
      await (await queue(6, { tokenId, mission: { tool: "intel" } })).res.json(),
    );
    await until(first.mission.id, ["done"]);
    await until(second.mission.id, ["done"]);

    const { res, required } = await list(6, `tokenId=${tokenId}&limit=1`);
    expect(required.accepts[0]?.amount).toBe("10000");
    expect(res.status).toBe(200);
    const body = listMissionsResponseSchema.parse(await res.json());
    expect(body.counts).toEqual({ queued: 0, running: 0, done: 2, failed: 0 });
    expect(body.missions.map((m) => m.id)).toEqual([second.mission.id]);
    expect(body.brief).toContain(`Agent #${tokenId} has 2 missions of ${account(6)}: 2 done`);

    const none = listMissionsResponseSchema.parse(await (await list(6, `tokenId=${tokenId}&status=failed`)).res.json());
    expect(none.missions).toEqual([]);
  });

  it("shows an anonymous payer only the missions its own payments queued", async () => {
    const tokenId = tokenOf(7, "Elite");
    const mine = dispatchResponseSchema.parse(
      await (await queue(8, { tokenId, mission: { tool: "intel" } }, { anonymous: true })).res.json(),
    );
    expect(mine.mission.requestedBy).toBe(account(8));
    await queue(7, { tokenId, mission: { tool: "intel" } });

    const { res, required } = await list(8, `tokenId=${tokenId}`, { anonymous: true });
    expect(required.accepts[0]?.amount).toBe("1000000");
    const body = listMissionsResponseSchema.parse(await res.json());
    expect(body.missions.map((m) => m.id)).toEqual([mine.mission.id]);

    // The holder sees the mission it queued, not the one an anonymous payer planted in its agent's list.
    const holderView = listMissionsResponseSchema.parse(await (await list(7, `tokenId=${tokenId}`)).res.json());
    expect(holderView.missions).toHaveLength(1);
    expect(holderView.missions.map((m) => m.id)).not.toContain(mine.mission.id);
    expect(holderView.missions[0]!.requestedBy).toBe(account(7));
  });

  it("validates the query like a body: 400 naming the field", async () => {
    const res = await t.get(`/dispatch?tokenId=${tokenOf(6, "Elite")}&status=lost`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { details: { field: string }[] } };
    expect(body.error.details.map((d) => d.field)).toEqual(["status"]);
  });
});

describe("missions and a sale of the token", () => {
  /** Moves `tokenId` from account `from` to account `to` on the collection chain; the service sees it at once. */
  async function transfer(tokenId: number, from: number, to: number): Promise<void> {
    const hash = await t.devnet.l1.walletClient(from).writeContract({
      address: t.devnet.deployment.addresses.collection,
      abi: agentCollectionAbi,
      functionName: "transferFrom",
      args: [account(from), account(to), BigInt(tokenId)],
    });
    await t.devnet.l1.publicClient.waitForTransactionReceipt({ hash });
    t.outlastStaleness();
  }

  it("does not hand the previous owner's missions and results to the new owner", async () => {
    // Account 9's first Elite token, used by no other test here; it goes to account 2 and comes back.
    const tokenId = tokenOf(9, "Elite");
    const queued = dispatchResponseSchema.parse(
      await (await queue(9, { tokenId, mission: { tool: "portfolio" } })).res.json(),
    );
    await until(queued.mission.id, ["done"]);
    await transfer(tokenId, 9, 2);
    try {
      const newOwner = listMissionsResponseSchema.parse(await (await list(2, `tokenId=${tokenId}`)).res.json());
      expect(newOwner.missions).toEqual([]);
      expect(newOwner.counts).toEqual({ queued: 0, running: 0, done: 0, failed: 0 });
      // The previous owner, who paid for it, still sees it, paying from the same wallet without signing in.
      const previous = listMissionsResponseSchema.parse(
        await (await list(9, `tokenId=${tokenId}`, { anonymous: true })).res.json(),
      );
      expect(previous.missions.map((m) => m.id)).toEqual([queued.mission.id]);
      expect(previous.missions[0]!.result).not.toBeNull();
    } finally {
      await transfer(tokenId, 2, 9);
    }
  });

  it("fails a mission queued by the previous owner instead of running it for them after the sale", async () => {
    const tokenId = tokenOf(9, "Elite");
    const runAt = new Date(Date.now() + 3_600_000).toISOString();
    const queued = dispatchResponseSchema.parse(
      await (await queue(9, { tokenId, runAt, mission: { tool: "portfolio" } })).res.json(),
    );
    await transfer(tokenId, 9, 2);
    try {
      // Its time comes after the sale.
      await t.db.query("UPDATE missions SET run_at = now() WHERE id = $1", [queued.mission.id]);
      await t.worker.wake();
      const failed = await until(queued.mission.id, ["done", "failed"]);
      expect(failed).toMatchObject({ status: "failed", attempts: 1, result: null });
      expect(failed.error).toMatchObject({ code: "not_token_owner" });
      expect(failed.error!.message).toMatch(/changed hands/);
    } finally {
      await transfer(tokenId, 2, 9);
    }
  });
});

describe("a mission failing on an internal error", () => {
  it("keeps a sentence of the service's own for its owner, never the library's text", async () => {
    const tokenId = tokenOf(3, "Elite");
    const { res } = await queue(3, { tokenId, mission: { tool: "offer-radar", params: { slugs: ["night-owls"] } } });
    expect(res.status).toBe(202);
    const { mission } = dispatchResponseSchema.parse(await res.json());
    const failed = await until(mission.id, ["failed"]);
    expect(failed.error).toEqual({
      code: "internal_error",
      message: "The mission failed on an internal error; it has been logged.",
    });
    const listed = await (await list(3, `tokenId=${tokenId}&status=failed`)).res.text();
    expect(listed).not.toContain(INTERNAL_SECRET);
  });
});

describe("missions that keep failing", () => {
  // Last in the file: the outage opens the market-data client's circuit breaker for 30 s.
  it("marks a mission failed with the upstream error after its last attempt", async () => {
    const tokenId = tokenOf(3, "Elite");
    t.sims.marketData.faults.set("**", { status: 503 });
    const { res } = await queue(3, { tokenId, mission: { tool: "altchain-radar", params: { limit: 5 } } });
    const { mission } = dispatchResponseSchema.parse(await res.json());
    const failed = await until(mission.id, ["done", "failed"]);
    expect(failed.status).toBe("failed");
    expect(failed.attempts).toBe(2);
    expect(failed.error?.code).toMatch(/^upstream_/);
    expect(failed.finishedAt).not.toBeNull();
    expect(failed.result).toBeNull();
  });
});

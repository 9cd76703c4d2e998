import type { Mission, MissionStatus, MissionTool } from "@agent-tools/schema";
import type { Database } from "./database.js";

export interface NewMission {
  tokenId: number;
  tool: MissionTool;
  params: Record<string, unknown>;
  /** The signed-in holder who queued it (the tool runs as this caller), or null for an anonymous payer. */
  caller: string | null;
  requestedBy: string;
  /** The payment that bought the mission; the mission runs once that payment is settled. */
  paymentKey: string;
  runAt: Date;
}

/** A mission taken by a worker for one attempt. */
export interface ClaimedMission {
  id: string;
  tokenId: number;
  tool: MissionTool;
  params: Record<string, unknown>;
  caller: string | null;
  attempt: number;
}

export interface MissionError {
  code: string;
  message: string;
}

export type MissionCounts = Record<MissionStatus, number>;

/**
 * Who a mission belongs to: the wallet that paid for it and, when it was queued signed in, that holder. A listing
 * shows the missions whose payer is `payer` or whose signed-in holder is `caller`: no one else's, and none of a
 * previous owner of the token (docs/decisions.md, "Missions").
 */
export interface MissionOwner {
  payer: string;
  caller?: string;
}

/**
 * The mission queue. Workers of any number of instances claim due missions with row locks (`FOR UPDATE SKIP
 * LOCKED`), so each attempt of a mission starts in one place only; a claim carries a lease that its worker renews
 * while the mission runs, and a mission whose worker died is taken again when its lease ends.
 */
export interface MissionQueue {
  /**
   * Queues a mission; a payment buys one mission, so adding again with the same payment (a call run again after it
   * was cut) gives back the mission it queued.
   */
  add(mission: NewMission): Promise<Mission>;
  /** Takes up to `limit` due, paid missions for `instance` until `leaseMs` from now. */
  claimDue(instance: string, limit: number, leaseMs: number): Promise<ClaimedMission[]>;
  /** Extends the lease of an attempt still held to `leaseMs` from now; false when the claim was lost. */
  renew(id: string, instance: string, attempt: number, leaseMs: number): Promise<boolean>;
  /** Records the answer of an attempt; false when the claim was lost (lease ended and taken elsewhere). */
  complete(id: string, instance: string, attempt: number, result: unknown): Promise<boolean>;
  /** Queues the mission again at `runAt` after a failed attempt. */
  retry(id: string, instance: string, attempt: number, error: MissionError, runAt: Date): Promise<boolean>;
  /** Marks the mission failed for good. */
  fail(id: string, instance: string, attempt: number, error: MissionError): Promise<boolean>;
  /** The token's missions that `owner` bought, newest first (see {@link MissionOwner}). */
  list(filter: { tokenId: number; owner: MissionOwner; status?: MissionStatus; limit: number }): Promise<Mission[]>;
  counts(filter: { tokenId: number; owner: MissionOwner }): Promise<MissionCounts>;
  /** Every mission in the queue by status, all agents and owners together (metrics). */
  depth(): Promise<MissionCounts>;
  get(id: string): Promise<Mission | undefined>;
}

interface MissionRow {
  id: string;
  token_id: number;
  tool: MissionTool;
  params: Record<string, unknown>;
  status: MissionStatus;
  requested_by: string;
  created_at: Date;
  run_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  attempts: number;
  result: Record<string, unknown> | null;
  error: MissionError | null;
}

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

function toMission(row: MissionRow): Mission {
  return {
    id: row.id,
    tokenId: row.token_id,
    tool: row.tool,
    params: row.params,
    status: row.status,
    requestedBy: row.requested_by,
    createdAt: iso(row.created_at)!,
    runAt: iso(row.run_at)!,
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
    attempts: row.attempts,
    result: row.result,
    error: row.error,
  };
}

// Missions run once their payment went through.
const PAID = "EXISTS (SELECT 1 FROM settlements s WHERE s.payment_key = m.payment_key AND s.status = 'settled')";

// Missions listed to their owner: only those whose payment went through, bought by the payer or the signed-in holder.
const OWNED_AND_PAID = `EXISTS (SELECT 1 FROM settlements s WHERE s.payment_key = m.payment_key AND s.status = 'settled'
  AND (lower(s.payer) = lower($2) OR ($3::text IS NOT NULL AND lower(m.caller) = lower($3))))`;

export function createMissionQueue(db: Database): MissionQueue {
  async function finish(
    sql: string,
    params: unknown[],
    id: string,
    instance: string,
    attempt: number,
    outcome: string,
  ): Promise<boolean> {
    return db.transaction(async (tx) => {
      const updated = await tx.query(sql, params);
      if (updated.length === 0) return false;
      await tx.query(
        "UPDATE mission_runs SET finished_at = now(), outcome = $4 WHERE mission_id = $1 AND attempt = $2 AND instance = $3",
        [id, attempt, instance, outcome],
      );
      return true;
    });
  }
  // A worker may only finish the attempt it holds.
  const held = "id = $1 AND status = 'running' AND locked_by = $2 AND attempts = $3";

  return {
    async add(m) {
      const [row] = await db.query<MissionRow>(
        `INSERT INTO missions (token_id, tool, params, status, caller, requested_by, payment_key, run_at)
         VALUES ($1, $2, $3::jsonb, 'queued', $4, $5, $6, $7)
         ON CONFLICT (payment_key) DO UPDATE SET payment_key = EXCLUDED.payment_key
         RETURNING *`,
        [m.tokenId, m.tool, JSON.stringify(m.params), m.caller, m.requestedBy, m.paymentKey, m.runAt],
      );
      return toMission(row!);
    },

    async claimDue(instance, limit, leaseMs) {
      const rows = await db.query<MissionRow & { caller: string | null }>(
        `WITH due AS (
           SELECT m.id FROM missions m
           WHERE ((m.status = 'queued' AND m.run_at <= now()) OR (m.status = 'running' AND m.lease_until < now()))
             AND ${PAID}
           ORDER BY m.run_at, m.id
           LIMIT $2
           FOR UPDATE OF m SKIP LOCKED
         ), claimed AS (
           UPDATE missions SET status = 'running', attempts = attempts + 1, started_at = now(), locked_by = $1,
             lease_until = now() + make_interval(secs => $3::double precision / 1000)
           WHERE id IN (SELECT id FROM due)
           RETURNING *
         ), runs AS (
           INSERT INTO mission_runs (mission_id, attempt, instance) SELECT id, attempts, $1 FROM claimed
         )
         SELECT * FROM claimed`,
        [instance, limit, leaseMs],
      );
      return rows.map((row) => ({
        id: row.id,
        tokenId: row.token_id,
        tool: row.tool,
        params: row.params,
        caller: row.caller,
        attempt: row.attempts,
      }));
    },

    async renew(id, instance, attempt, leaseMs) {
      const rows = await db.query(
        `UPDATE missions SET lease_until = now() + make_interval(secs => $4::double precision / 1000)
         WHERE ${held} RETURNING id`,
        [id, instance, attempt, leaseMs],
      );
      return rows.length > 0;
    },

    complete: (id, instance, attempt, result) =>
      finish(
        `UPDATE missions SET status = 'done', result = $4::jsonb, error = NULL, finished_at = now(), locked_by = NULL,
           lease_until = NULL WHERE ${held} RETURNING id`,
        [id, instance, attempt, JSON.stringify(result)],
        id,
        instance,
        attempt,
        "done",
      ),

    retry: (id, instance, attempt, error, runAt) =>
      finish(
        `UPDATE missions SET status = 'queued', error = $4::jsonb, run_at = $5, locked_by = NULL, lease_until = NULL
         WHERE ${held} RETURNING id`,
        [id, instance, attempt, JSON.stringify(error), runAt],
        id,
        instance,
        attempt,
        `retry: ${error.code}`,
      ),

    fail: (id, instance, attempt, error) =>
      finish(
        `UPDATE missions SET status = 'failed', error = $4::jsonb, finished_at = now(), locked_by = NULL,
           lease_until = NULL WHERE ${held} RETURNING id`,
        [id, instance, attempt, JSON.stringify(error)],
        id,
        instance,
        attempt,
        `failed: ${error.code}`,
      ),

    async list({ tokenId, owner, status, limit }) {
      const rows = await db.query<MissionRow>(
        `SELECT * FROM missions m
         WHERE m.token_id = $1 AND ${OWNED_AND_PAID} AND ($4::text IS NULL OR m.status = $4)
         ORDER BY m.created_at DESC, m.id LIMIT $5`,
        [tokenId, owner.payer, owner.caller ?? null, status ?? null, limit],
      );
      return rows.map(toMission);
    },

    async depth() {
      const rows = await db.query<{ status: MissionStatus; n: number }>(
        "SELECT status, count(*)::int AS n FROM missions GROUP BY status",
      );
      const counts: MissionCounts = { queued: 0, running: 0, done: 0, failed: 0 };
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    },

    async counts({ tokenId, owner }) {
      const rows = await db.query<{ status: MissionStatus; n: number }>(
        `SELECT m.status, count(*)::int AS n FROM missions m
         WHERE m.token_id = $1 AND ${OWNED_AND_PAID}
         GROUP BY m.status`,
        [tokenId, owner.payer, owner.caller ?? null],
      );
      const counts: MissionCounts = { queued: 0, running: 0, done: 0, failed: 0 };
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    },

    async get(id) {
      const [row] = await db.query<MissionRow>("SELECT * FROM missions WHERE id = $1", [id]);
      return row ? toMission(row) : undefined;
    },
  };
}

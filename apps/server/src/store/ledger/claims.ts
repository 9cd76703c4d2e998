/** The ledger's claims: a paid call's payment claimed, settled or given back, and what is still pending. */
import { workCsvText } from "@agent-tools/schema";
import type { Database, Queryable } from "../database.js";
import type {
  ClaimResult,
  IdentifiedPayment,
  KeptAnswer,
  PendingOptions,
  PendingSettlement,
  SettledCharge,
  SettledPayment,
  SettlementClaim,
} from "./types.js";

/** Claims a payment: its row `pending`, and the sum of the payer's other claims in flight (`SettlementLedger.claim`). */
export async function claimPayment(db: Database, c: SettlementClaim): Promise<ClaimResult> {
  const params = [
    c.paymentKey,
    c.route,
    c.method,
    c.tokenId,
    c.payer,
    c.nonce,
    c.caller,
    c.pricePoint,
    c.amount,
    c.asset,
    c.network,
    c.payTo,
    c.validBefore,
    c.requestId,
    c.identifier?.paymentId ?? null,
    c.identifier?.requestHash ?? null,
    c.channel?.id ?? null,
    c.channel?.cumulative ?? null,
  ];
  // The claim and the sum of the payer's other claims in flight, in one statement (the sum does not see the row
  // it inserts, which it leaves out anyway).
  const claim = async (q: Queryable): Promise<bigint | undefined> => {
    const [row] = await q.query<{ claimed: number; in_flight: string }>(
      `WITH claimed AS (
           INSERT INTO settlements (payment_key, status, route, method, token_id, payer, nonce, caller, price_point,
             amount, asset, network, pay_to, valid_before, request_id, payment_id, request_hash, channel_id, cumulative,
             ceiling)
           VALUES ($1, 'pending', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $9)
           ON CONFLICT DO NOTHING
           RETURNING payment_key)
         SELECT (SELECT count(*) FROM claimed)::int AS claimed,
           (SELECT coalesce(sum(amount), 0) FROM settlements
            WHERE status = 'pending' AND payer = $5 AND lower(asset) = lower($10) AND network = $11
              AND payment_key <> $1 AND valid_before > now() AND channel_id IS NULL)::text AS in_flight`,
      params,
    );
    return row && row.claimed > 0 ? BigInt(row.in_flight) : undefined;
  };
  // One claim of a payer at a time, so that the sum sees every claim made before. PGlite runs one statement at
  // a time for its one process: the statement alone is that. On Postgres, instances claim at once: a lock per
  // payer, taken before the statement, whose snapshot then holds every claim committed before it.
  const inserted =
    db.kind === "pglite"
      ? await claim(db)
      : await db.transaction(async (tx) => {
          await tx.query("SELECT pg_advisory_xact_lock(72610002, hashtext($1))", [c.payer.toLowerCase()]);
          return claim(tx);
        });
  if (inserted !== undefined) return { outcome: "claimed", inFlight: inserted };
  const [existing] = await db.query<{ status: string }>("SELECT status FROM settlements WHERE payment_key = $1", [
    c.paymentKey,
  ]);
  if (!existing) {
    // Not this payment's row: the payer's identifier is taken by another payment; or the row was released
    // between the insert and this read, and the caller may simply try again.
    if (c.identifier && (await identifiedPayment(db, c.payer, c.identifier.paymentId))) {
      return { outcome: "identifier_taken" };
    }
    return { outcome: "in_use" };
  }
  return { outcome: existing.status === "settled" ? "used" : "in_use" };
}

/** Gives a pending claim back. */
export async function releaseClaim(db: Database, paymentKey: string): Promise<void> {
  await db.query("DELETE FROM settlements WHERE payment_key = $1 AND status = 'pending'", [paymentKey]);
}

/**
 * Records a pending claim settled, with the answer kept for its payment identifier; a charge below what the claim
 * signed (`upto`) becomes its amount, the claim's amount staying its ceiling.
 */
export async function markSettled(
  db: Database,
  paymentKey: string,
  transaction: string,
  settledAt: Date,
  answer?: KeptAnswer,
  charge?: SettledCharge,
): Promise<void> {
  await db.query(
    `UPDATE settlements SET status = 'settled', transaction = $2, settled_at = $3::timestamptz,
         answer = $4::jsonb, answered_at = CASE WHEN $4::jsonb IS NULL THEN NULL ELSE $3::timestamptz END,
         amount = coalesce($5::numeric, amount), ceiling = coalesce(ceiling, amount), work = coalesce($6::text, work)
       WHERE payment_key = $1 AND status = 'pending'`,
    [
      paymentKey,
      transaction,
      settledAt,
      answer ? JSON.stringify(answer) : null,
      charge?.amount ?? null,
      charge?.work ? workCsvText(charge.work) : null,
    ],
  );
}

/** The payment a payer named `paymentId`, as the ledger knows it. */
export async function identifiedPayment(
  db: Database,
  payer: string,
  paymentId: string,
): Promise<IdentifiedPayment | undefined> {
  const [row] = await db.query<{
    payment_key: string;
    request_hash: string;
    status: "pending" | "settled";
    transaction: string | null;
    network: string;
    amount: string;
    answer: KeptAnswer | null;
    answered_at: Date | null;
  }>(
    `SELECT payment_key, request_hash, status, transaction, network, amount::text AS amount, answer, answered_at
       FROM settlements WHERE payer = $1 AND payment_id = $2`,
    [payer, paymentId],
  );
  if (!row) return undefined;
  return {
    paymentKey: row.payment_key,
    requestHash: row.request_hash,
    status: row.status,
    transaction: row.transaction,
    network: row.network,
    amount: row.amount,
    answer: row.answer,
    answeredAt: row.answered_at ? new Date(row.answered_at) : null,
  };
}

/** Keeps the answer of a settled call run again (its answer was not kept the first time). */
export async function keepAnswer(db: Database, paymentKey: string, answer: KeptAnswer, at: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE settlements SET answer = $2::jsonb, answered_at = $3
       WHERE payment_key = $1 AND status = 'settled' AND answered_at IS NULL RETURNING payment_key`,
    [paymentKey, JSON.stringify(answer), at],
  );
  return rows.length > 0;
}

/** Forgets the answers kept before `before`. */
export async function forgetAnswers(db: Database, before: Date): Promise<number> {
  const rows = await db.query(
    "UPDATE settlements SET answer = NULL WHERE answer IS NOT NULL AND answered_at < $1 RETURNING payment_key",
    [before],
  );
  return rows.length;
}

/** Pending claims in key order, a page at a time (the reconciler's). */
export async function pendingClaims(
  db: Database,
  { olderThan, after, limit = 100 }: PendingOptions = {},
): Promise<PendingSettlement[]> {
  const rows = await db.query<{
    payment_key: string;
    payer: string;
    nonce: string;
    asset: string;
    network: string;
    pay_to: string;
    amount: string;
    valid_before: Date;
    claimed_at: Date;
  }>(
    `SELECT payment_key, payer, nonce, asset, network, pay_to, amount::text AS amount, valid_before, claimed_at
       FROM settlements
       WHERE status = 'pending' AND channel_id IS NULL AND ($1::timestamptz IS NULL OR claimed_at < $1)
         AND payment_key > $2
       ORDER BY payment_key LIMIT $3`,
    [olderThan ?? null, after ?? "", limit],
  );
  return rows.map((row) => ({
    paymentKey: row.payment_key,
    payer: row.payer,
    nonce: row.nonce,
    asset: row.asset,
    network: row.network,
    payTo: row.pay_to,
    amount: row.amount,
    validBefore: new Date(row.valid_before),
    claimedAt: new Date(row.claimed_at),
  }));
}

/** Pending claims made since `since`, and those older. */
export async function pendingByAge(db: Database, since: Date): Promise<{ recent: number; older: number }> {
  const [row] = await db.query<{ recent: number; older: number }>(
    `SELECT count(*) FILTER (WHERE claimed_at >= $1)::int AS recent, count(*) FILTER (WHERE claimed_at < $1)::int AS older
       FROM settlements WHERE status = 'pending'`,
    [since],
  );
  return { recent: row?.recent ?? 0, older: row?.older ?? 0 };
}

/** How many claims are pending. */
export async function pendingCount(db: Database): Promise<number> {
  const [row] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM settlements WHERE status = 'pending'");
  return row?.n ?? 0;
}

/** A settled payment, as a refund of it is checked against. */
export async function settledPayment(db: Database, paymentKey: string): Promise<SettledPayment | undefined> {
  const [row] = await db.query<{
    payer: string;
    pay_to: string;
    asset: string;
    network: string;
    amount: string;
    transaction: string;
  }>(
    `SELECT payer, pay_to, asset, network, amount::text AS amount, transaction FROM settlements
       WHERE payment_key = $1 AND status = 'settled'`,
    [paymentKey],
  );
  if (!row) return undefined;
  return {
    paymentKey,
    payer: row.payer,
    payTo: row.pay_to,
    asset: row.asset,
    network: row.network,
    amount: row.amount,
    transaction: row.transaction,
  };
}

/**
 * The service's side of its payers' `batch-settlement` channels, shared by every instance and kept across restarts:
 * each channel's terms, what the chain said of it, what was charged on it with the payer's latest voucher, and a
 * refund holding it. A call's charge is written only when the call answered, if the channel is still as the call
 * found it (docs/channels.md).
 */

import { type CountedWork, workCsvText } from "@agent-tools/schema";
import type { Database, Queryable } from "./database.js";
import { groupWrites } from "./group-writes.js";
import type { SettlementClaim } from "./ledger/types.js";

/** A channel as the service keeps it; amounts in the asset's base units. */
export interface ChannelRecord {
  channelId: string;
  /** The channel's terms, as x402's `channelConfig` (addresses checksummed, `withdrawDelay` in seconds). */
  config: Record<string, unknown>;
  payer: string;
  /** The channel's balance on chain, as last read or as the service's own deposits left it. */
  balance: bigint;
  /** What the contract records as claimed. */
  totalClaimed: bigint;
  /** What the service charged on the channel, all calls together (x402's `chargedCumulativeAmount`). */
  charged: bigint;
  /** The payer's latest voucher: its ceiling and signature (none before the first call). */
  signedMax: bigint;
  signature: string | undefined;
  refundNonce: bigint;
  /** When the payer started a timed withdrawal (Unix seconds), 0 when none is under way. */
  withdrawRequestedAt: number;
}

/** The charge of one call that answered (`ChannelStore.charge`). */
export interface ChannelCharge {
  channelId: string;
  /** The channel's charged total the call's voucher was checked against. */
  expected: bigint;
  /** The channel's charged total once the call is charged: `expected` and the call's charge. */
  charged: bigint;
  /** The voucher's cumulative amount, which `signature` signs: `expected` and the ceiling of the call's price. */
  signedMax: bigint;
  signature: string;
  /** The channel's balance after a deposit the call came with. */
  balance?: bigint;
  /**
   * The call's ledger entry, written settled with the charge (its transaction the deposit's, or ''); `work` is what
   * a charge by the work done was computed from (docs/api.md, "Prices by the work done").
   */
  booking?: { claim: SettlementClaim; transaction: string; work?: CountedWork };
  /**
   * A call whose entry was claimed, pending, before its tool ran (it named a payment identifier, or queues a mission):
   * the entry takes the charge, its work and the channel's charged total in the same statement, and stays pending
   * until the call's answer is kept with it; a stop in between leaves it for `settleLeftovers`, with its charge.
   */
  pending?: { paymentKey: string; work?: CountedWork };
}

/** What the chain says of a channel (x402's `channelState`, as a facilitator answers it). */
export interface ChainChannelState {
  balance: bigint;
  totalClaimed: bigint;
  refundNonce: bigint;
  withdrawRequestedAt: number;
}

/** A deposit, claim, sweep or refund seen through on chain. */
export interface ChannelEvent {
  transaction: string;
  kind: "deposit" | "claim" | "sweep" | "refund";
  /** '' for a sweep, which moves the claimed money of every channel of the payee and asset. */
  channelId: string;
  amount: bigint;
  asset: string;
  network: string;
}

export interface ChannelStore {
  get(channelId: string): Promise<ChannelRecord | undefined>;
  /** Records a channel first seen, its charged total starting at what the chain says was claimed; a known one is kept. */
  open(
    channel: { channelId: string; config: Record<string, unknown>; payer: string } & ChainChannelState,
  ): Promise<void>;
  /** Mirrors what the chain says of a channel (after a deposit, a claim, a refund or a read). */
  mirror(channelId: string, state: ChainChannelState): Promise<void>;
  /**
   * Holds the channel for a cooperative refund, on every instance, while its charged total is `charged`, until
   * `until` at the latest: no call is charged on it meanwhile (`charge` refuses a held channel). False when the
   * charged total moved or another refund holds it.
   */
  hold(channelId: string, charged: bigint, holder: string, until: Date): Promise<boolean>;
  /** Ends a hold. */
  release(channelId: string, holder: string): Promise<void>;
  /**
   * Charges a call that answered, when the channel is as the call found it: its charged total still `expected`, no
   * withdrawal under way, no refund holding it, and the balance covering the new total. The charged total becomes the
   * voucher's cumulative amount and the voucher is kept for the claim; with `booking`, the call's ledger entry is
   * written settled in the same statement. The channel as it is now, or undefined when it was not as found (nothing
   * is charged then). Calls that come while a charge is being written are written together (./group-writes.ts).
   */
  charge(request: ChannelCharge): Promise<ChannelRecord | undefined>;
  /**
   * Channels with charges not claimed yet and balance left to claim them from, the oldest first, with their latest
   * voucher; those of `except` left out.
   */
  unclaimed(limit: number, except?: string[]): Promise<ChannelRecord[]>;
  /** Channels whose payer started a timed withdrawal, as last known. */
  withdrawing(): Promise<ChannelRecord[]>;
  /**
   * Records that a claim took the channels up to these totals, and books the calls whose money it took under its
   * transaction (a call's entry names '' or its deposit's transaction until then).
   */
  claimed(
    event: Omit<ChannelEvent, "kind" | "channelId" | "amount">,
    claims: { channelId: string; totalClaimed: bigint }[],
  ): Promise<void>;
  /** Records a deposit, sweep or refund seen through. */
  record(event: ChannelEvent): Promise<void>;
  /** Takes or keeps the claimer's lease for `ms`; false when another instance holds it. */
  lease(holder: string, ms: number): Promise<boolean>;
  /** Gives the lease up, if `holder` has it: an instance stopping leaves the next pass to another at once. */
  releaseLease(holder: string): Promise<void>;
  /** The last payment-chain block whose withdrawals were read, and its update. */
  scannedBlock(): Promise<bigint>;
  setScannedBlock(block: bigint): Promise<void>;
  /** Totals for the report, console and metrics (docs/channels.md, "What the operator sees"). */
  totals(): Promise<ChannelTotals>;
  /**
   * Ledger entries of channel calls cut short (an instance stopped between the hold and the answer): an entry whose
   * charge the channel holds is settled, any other is given back. Returns how many of each.
   */
  settleLeftovers(olderThan: Date): Promise<{ settled: number; released: number }>;
}

/** Money on the service's channels, in the asset's base units. */
export interface ChannelTotals {
  channels: number;
  deposited: bigint;
  charged: bigint;
  claimed: bigint;
  swept: bigint;
  refunded: bigint;
  /** Charged and not claimed yet: what the service must claim before its payers' withdrawals end. */
  unclaimed: bigint;
}

interface ChannelRow {
  channel_id: string;
  config: Record<string, unknown> | string;
  payer: string;
  balance: string;
  total_claimed: string;
  charged: string;
  signed_max: string;
  signature: string | null;
  refund_nonce: string;
  withdraw_requested_at: string | number;
}

const CHANNEL_COLUMNS = `channel_id, config, payer, balance::text AS balance, total_claimed::text AS total_claimed,
  charged::text AS charged, signed_max::text AS signed_max, signature, refund_nonce::text AS refund_nonce,
  withdraw_requested_at`;

function recordOf(row: ChannelRow): ChannelRecord {
  return {
    channelId: row.channel_id,
    config: typeof row.config === "string" ? JSON.parse(row.config) : row.config,
    payer: row.payer,
    balance: BigInt(row.balance),
    totalClaimed: BigInt(row.total_claimed),
    charged: BigInt(row.charged),
    signedMax: BigInt(row.signed_max),
    signature: row.signature ?? undefined,
    refundNonce: BigInt(row.refund_nonce),
    withdrawRequestedAt: Number(row.withdraw_requested_at),
  };
}

export function createChannelStore(db: Database): ChannelStore {
  const get = async (q: Queryable, channelId: string) => {
    const [row] = await q.query<ChannelRow>(`SELECT ${CHANNEL_COLUMNS} FROM channels WHERE channel_id = $1`, [
      channelId,
    ]);
    return row ? recordOf(row) : undefined;
  };
  return {
    get: (channelId) => get(db, channelId),
    async open(channel) {
      await db.query(
        `INSERT INTO channels (channel_id, config, payer, balance, total_claimed, charged, signed_max, refund_nonce,
           withdraw_requested_at)
         VALUES ($1, $2, $3, $4, $5, $5, $5, $6, $7) ON CONFLICT (channel_id) DO NOTHING`,
        [
          channel.channelId,
          JSON.stringify(channel.config),
          channel.payer.toLowerCase(),
          channel.balance.toString(),
          channel.totalClaimed.toString(),
          channel.refundNonce.toString(),
          channel.withdrawRequestedAt,
        ],
      );
    },
    async mirror(channelId, state) {
      // What was charged never falls below what the chain says was claimed (a claim of a voucher this store lost).
      await db.query(
        `UPDATE channels SET balance = $2, total_claimed = GREATEST(total_claimed, $3), refund_nonce = $4,
           withdraw_requested_at = $5, charged = GREATEST(charged, $3), signed_max = GREATEST(signed_max, $3),
           synced_at = now(), updated_at = now()
         WHERE channel_id = $1`,
        [
          channelId,
          state.balance.toString(),
          state.totalClaimed.toString(),
          state.refundNonce.toString(),
          state.withdrawRequestedAt,
        ],
      );
    },
    async hold(channelId, charged, holder, until) {
      const [row] = await db.query(
        `UPDATE channels SET held_by = $3, held_until = $4, updated_at = now()
         WHERE channel_id = $1 AND charged = $2 AND (held_by IS NULL OR held_until < now())
         RETURNING channel_id`,
        [channelId, charged.toString(), holder, until],
      );
      return row !== undefined;
    },
    charge: groupWrites({ write: (group) => chargeGroup(db, group), keyOf: (c) => c.channelId, maxGroup: 500 }),
    async release(channelId, holder) {
      await db.query("UPDATE channels SET held_by = NULL, held_until = NULL WHERE channel_id = $1 AND held_by = $2", [
        channelId,
        holder,
      ]);
    },
    async unclaimed(limit, except = []) {
      // A channel with a withdrawal under way first: its vouchers must be claimed before the withdrawal ends.
      const rows = await db.query<ChannelRow>(
        `SELECT ${CHANNEL_COLUMNS} FROM channels
         WHERE charged > total_claimed AND balance > total_claimed AND signature IS NOT NULL
           AND NOT (channel_id = ANY($2::text[]))
         ORDER BY (withdraw_requested_at > 0) DESC, updated_at LIMIT $1`,
        [limit, except],
      );
      return rows.map(recordOf);
    },
    async withdrawing() {
      const rows = await db.query<ChannelRow>(
        `SELECT ${CHANNEL_COLUMNS} FROM channels WHERE withdraw_requested_at > 0 ORDER BY channel_id`,
      );
      return rows.map(recordOf);
    },
    async claimed(event, claims) {
      await db.transaction(async (tx) => {
        for (const claim of claims) {
          await tx.query(
            `UPDATE channels SET total_claimed = GREATEST(total_claimed, $2), updated_at = now() WHERE channel_id = $1`,
            [claim.channelId, claim.totalClaimed.toString()],
          );
          // The calls this claim took the money of are booked under its transaction: those above the channel's last
          // call already booked under a claim (claims take a channel's calls in the order of their cumulative
          // amounts), so a claim reads the calls since the last one, not the channel's whole history.
          await tx.query(
            `WITH floor AS (
               SELECT coalesce((
                 SELECT s.cumulative FROM settlements s
                 WHERE s.channel_id = $1 AND s.cumulative <= $2 AND s.status = 'settled' AND EXISTS
                   (SELECT 1 FROM channel_events e WHERE e.kind = 'claim' AND e.transaction = s.transaction)
                 ORDER BY s.cumulative DESC LIMIT 1), -1) AS cumulative
             ), booked AS (
               UPDATE settlements s SET transaction = $3 FROM floor
               WHERE s.channel_id = $1 AND s.status = 'settled' AND s.cumulative > floor.cumulative
                 AND s.cumulative <= $2
               RETURNING s.amount
             )
             INSERT INTO channel_events (transaction, kind, channel_id, amount, asset, network)
             SELECT $3, 'claim', $1, coalesce(sum(amount), 0), $4, $5 FROM booked ON CONFLICT DO NOTHING`,
            [claim.channelId, claim.totalClaimed.toString(), event.transaction, event.asset, event.network],
          );
        }
      });
    },
    async record(event) {
      await db.query(
        `INSERT INTO channel_events (transaction, kind, channel_id, amount, asset, network)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
        [event.transaction, event.kind, event.channelId, event.amount.toString(), event.asset, event.network],
      );
    },
    async lease(holder, ms) {
      const rows = await db.query(
        `UPDATE channel_claimer SET holder = $1, held_until = now() + ($2 || ' milliseconds')::interval
         WHERE id = 1 AND (holder IS NULL OR holder = $1 OR held_until < now()) RETURNING id`,
        [holder, String(ms)],
      );
      return rows.length === 1;
    },
    async releaseLease(holder) {
      await db.query("UPDATE channel_claimer SET holder = NULL, held_until = NULL WHERE id = 1 AND holder = $1", [
        holder,
      ]);
    },
    async scannedBlock() {
      const [row] = await db.query<{ scanned_block: string | number }>(
        "SELECT scanned_block FROM channel_claimer WHERE id = 1",
      );
      return BigInt(row?.scanned_block ?? 0);
    },
    async setScannedBlock(block) {
      await db.query("UPDATE channel_claimer SET scanned_block = GREATEST(scanned_block, $1) WHERE id = 1", [
        block.toString(),
      ]);
    },
    async totals() {
      const [row] = await db.query<Record<string, string | number>>(
        `SELECT (SELECT count(*) FROM channels)::int AS channels,
           (SELECT coalesce(sum(charged), 0) FROM channels)::text AS charged,
           (SELECT coalesce(sum(charged - total_claimed), 0) FROM channels WHERE charged > total_claimed)::text AS unclaimed,
           (SELECT coalesce(sum(amount), 0) FROM channel_event_totals WHERE kind = 'deposit')::text AS deposited,
           (SELECT coalesce(sum(total_claimed), 0) FROM channels)::text AS claimed,
           (SELECT coalesce(sum(amount), 0) FROM channel_event_totals WHERE kind = 'sweep')::text AS swept,
           (SELECT coalesce(sum(amount), 0) FROM channel_event_totals WHERE kind = 'refund')::text AS refunded`,
      );
      return {
        channels: Number(row?.channels ?? 0),
        deposited: BigInt(row?.deposited ?? 0),
        charged: BigInt(row?.charged ?? 0),
        claimed: BigInt(row?.claimed ?? 0),
        swept: BigInt(row?.swept ?? 0),
        refunded: BigInt(row?.refunded ?? 0),
        unclaimed: BigInt(row?.unclaimed ?? 0),
      };
    },
    async settleLeftovers(olderThan) {
      const settled = await db.query(
        // A call above it already booked under a claim was claimed with it (claims take whole cumulative totals).
        `UPDATE settlements s SET status = 'settled', settled_at = now(), transaction = coalesce((
           SELECT n.transaction FROM settlements n
           WHERE n.channel_id = s.channel_id AND n.cumulative > s.cumulative AND n.status = 'settled' AND EXISTS
             (SELECT 1 FROM channel_events e WHERE e.kind = 'claim' AND e.transaction = n.transaction)
           ORDER BY n.cumulative LIMIT 1), '')
         FROM channels c
         WHERE s.status = 'pending' AND s.channel_id = c.channel_id AND s.cumulative <= c.charged
           AND s.claimed_at < $1 RETURNING s.payment_key`,
        [olderThan],
      );
      const released = await db.query(
        `DELETE FROM settlements s WHERE s.status = 'pending' AND s.channel_id IS NOT NULL AND s.claimed_at < $1
           AND NOT EXISTS (SELECT 1 FROM channels c WHERE c.channel_id = s.channel_id AND s.cumulative <= c.charged)
         RETURNING s.payment_key`,
        [olderThan],
      );
      return { settled: settled.length, released: released.length };
    },
  };
}

/**
 * Charges a group of calls on distinct channels in one statement: each channel whose state is still the one its call
 * was checked against takes its voucher, and the calls that had a booking get their ledger entries, settled. A call's
 * entry left pending by a call of the same voucher that named a payment identifier becomes this one's.
 */
async function chargeGroup(db: Database, group: ChannelCharge[]): Promise<(ChannelRecord | undefined)[]> {
  const rows = group.map((c) => ({
    channel_id: c.channelId,
    expected: c.expected.toString(),
    charged: c.charged.toString(),
    signed_max: c.signedMax.toString(),
    signature: c.signature,
    balance: c.balance?.toString() ?? null,
    ...(c.booking
      ? {
          ...bookingRow(c.booking.claim, c.booking.transaction),
          amount: (c.charged - c.expected).toString(),
          ceiling: c.booking.claim.amount,
          work: c.booking.work ? workCsvText(c.booking.work) : null,
        }
      : {}),
    ...(c.pending
      ? { pending_key: c.pending.paymentKey, pending_work: c.pending.work ? workCsvText(c.pending.work) : null }
      : {}),
  }));
  const charged = await db.query<ChannelRow>(
    `WITH v AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(channel_id text, expected numeric, charged numeric,
         signed_max numeric, signature text, balance numeric, payment_key text, route text, method text, token_id integer, payer text,
         caller text, price_point text, amount numeric, asset text, network text, pay_to text,
         valid_before timestamptz, request_id text, transaction text, ceiling numeric, work text, pending_key text,
         pending_work text)
     ), charged AS (
       UPDATE channels c SET charged = v.charged, signed_max = v.signed_max, signature = v.signature,
         balance = COALESCE(v.balance, c.balance), updated_at = now()
       FROM v
       WHERE c.channel_id = v.channel_id AND c.charged = v.expected AND c.withdraw_requested_at = 0
         AND COALESCE(v.balance, c.balance) >= v.charged AND (c.held_by IS NULL OR c.held_until < now())
       RETURNING c.*
     ), booked AS (
       INSERT INTO settlements AS s (payment_key, status, route, method, token_id, payer, nonce, caller, price_point,
         amount, asset, network, pay_to, valid_before, request_id, transaction, settled_at, channel_id, cumulative,
         ceiling, work)
       SELECT v.payment_key, 'settled', v.route, v.method, v.token_id, v.payer, v.channel_id, v.caller, v.price_point,
         v.amount, v.asset, v.network, v.pay_to, v.valid_before, v.request_id, v.transaction, now(), v.channel_id,
         v.charged, v.ceiling, v.work
       FROM v JOIN charged USING (channel_id) WHERE v.payment_key IS NOT NULL
       ON CONFLICT (payment_key) DO UPDATE SET status = 'settled', transaction = excluded.transaction,
         settled_at = excluded.settled_at, amount = excluded.amount, cumulative = excluded.cumulative,
         ceiling = excluded.ceiling, work = excluded.work
       WHERE s.status = 'pending'
     ), priced AS (
       UPDATE settlements s SET amount = v.charged - v.expected, work = v.pending_work, cumulative = v.charged
       FROM v JOIN charged USING (channel_id)
       WHERE v.pending_key IS NOT NULL AND s.payment_key = v.pending_key AND s.status = 'pending'
     )
     SELECT ${CHANNEL_COLUMNS} FROM charged`,
    [JSON.stringify(rows)],
  );
  const byId = new Map(charged.map((row) => [row.channel_id, recordOf(row)]));
  return group.map((c) => byId.get(c.channelId));
}

/** A call's ledger entry as `chargeGroup` reads it. */
function bookingRow(claim: SettlementClaim, transaction: string) {
  return {
    payment_key: claim.paymentKey,
    route: claim.route,
    method: claim.method,
    token_id: claim.tokenId,
    payer: claim.payer,
    caller: claim.caller,
    price_point: claim.pricePoint,
    amount: claim.amount,
    asset: claim.asset,
    network: claim.network,
    pay_to: claim.payTo,
    valid_before: claim.validBefore.toISOString(),
    request_id: claim.requestId,
    transaction,
  };
}

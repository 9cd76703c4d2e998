/**
 * The operator's ledger as the book grows: our server as built (`node dist/main.js`) on Postgres (a throwaway
 * cluster, DATABASE_URL) and on PGlite (DATA_DIR, the embedded default), read through the SDK signed in as the
 * operator. The book is grown to each size with synthetic settled payments shaped like the server's own rows (and
 * one refund per 1,000 payments), inserted through the migrated schema with `INSERT ... SELECT ... generate_series`,
 * then vacuumed and analyzed, as autovacuum keeps a book that grows over days; at each size, medians of five:
 * - the report of a 90-day window and of the default window (`ledger()`);
 * - the first page of the book's 90-day window, and the page after a position in its middle (`ledgerEntries()`);
 * - the CSV export of the 90-day window streamed to its end (`exportLedger()`), with the server's resident memory
 *   before and at most during it, and this process's;
 * - and what one paid call's ledger write costs (`claim`, then `markSettled`), 2,000 of them, 8 at once.
 * PGlite serves one process: its book is grown with the server stopped, on the same data directory.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnDevnetProcess } from "@agent-tools/devnet";
import { type PricePoint, paidRoutes, pricePoints } from "@agent-tools/schema";
import { getAddress } from "viem";
import { accountFromPrivateKey, createAgentToolsClient } from "../../../packages/sdk/src/index.js";
import { channelPaymentKey } from "../src/schemes/batch-settlement/channel-scheme.js";
import { createChannelStore } from "../src/store/channels.js";
import type { Database } from "../src/store/database.js";
import { openDatabase } from "../src/store/open-database.js";
import { createSettlementLedger, type SettlementClaim } from "../src/store/settlement-ledger.js";
import { deploymentEnv } from "../test/helpers/deployment-env.js";
import { startTestPostgres } from "../test/helpers/test-postgres.js";
import { type OurServer, startOurServer } from "./processes.js";
import { fmt, table } from "./table.js";

/** Book sizes (settled payments) of the Postgres line, grown one from the next. */
export const LEDGER_SIZES = [10_000, 1_000_000, 10_000_000];
/** Book sizes of the PGlite line; a size whose growth would take longer than PGLITE_MAX_GROW_S is left out. */
export const PGLITE_SIZES = [10_000, 100_000, 1_000_000];
const PGLITE_MAX_GROW_S = 300;
/** Rows per INSERT statement. */
const CHUNK_ROWS = 250_000;
const PAYERS = 5_000;
/** One refund per this many payments. */
const REFUND_EVERY = 1_000;
const DAY_MS = 86_400_000;
/** The synthetic book spreads its settlements over the last 90 days. */
const SPREAD_MS = 90 * DAY_MS;
const RUNS = 5;
/** An export that takes longer than this is timed once. */
const LONG_EXPORT_S = 120;
/** An export still running after this long is cut: its rate so far, and the time the whole window would take at it. */
const EXPORT_CUT_S = 600;
const WRITES = 2_000;
const WRITERS = 8;
/** Disk a settled payment takes on Postgres, row and indexes, with room to spare: the growth stops before the disk is full. */
const BYTES_PER_ROW = 1_200;
const METHODS = ["GET", "POST", "MCP", "A2A"] as const;
/** The paid routes' paths (the tools and `/dispatch`). */
const PAID_PATHS = [...new Set(Object.values(paidRoutes).map((route) => route.path))];
/** Entries over a channel left unclaimed at the end of each growth (the claimer's next pass would take them). */
const CHANNEL_UNCLAIMED = 2_000;
/**
 * A channel entry's cumulative is its number times this: increasing along each channel, with room between two
 * entries for the charges the write measurements add at a size before the next growth.
 */
const CUMULATIVE_STEP = 1_000_000_000;
/** Claims booked at each size, one channel each, after the channel writes. */
const CLAIM_BOOKINGS = 50;

/** The channel of payer number `n` (payers of odd number pay over one), as the service names it: 32 bytes in hex. */
const channelIdOf = (n: number) => `0x${createHash("sha256").update(`channel ${n}`).digest("hex")}`;

export interface LedgerRow {
  store: "Postgres" | "PGlite";
  /** Settled payments in the book (generated, and written by the earlier write measurements). */
  payments: number;
  refunds: number;
  /** Seconds the growth to this size took, and its rows per second; undefined for the empty book. */
  grow?: { seconds: number; rowsPerSecond: number };
  /** The 90-day report's totals, and the book's own count of the window: they agree when the kept totals are right. */
  totals?: { payments: number; refunds: number };
  book?: { payments: number; refunds: number };
  report90?: number;
  reportDefault?: number;
  firstPage?: number;
  middlePage?: number;
  exported?: {
    seconds: number;
    /** Entries read: the whole window's, or as many as came before the export was cut. */
    entries: number;
    /** Cut after EXPORT_CUT_S: `seconds` and `entries` are the part read, `expected` the window's entries. */
    cut?: { expected: number };
    runs: number;
    /** Resident memory in MB: the server's before the first export and at most during any; this process's growth. */
    serverBefore: number;
    serverMax: number;
    benchGrowth: number;
  };
  write: { p50: number; p99: number; failed: number };
  /** A paid call's write over a channel (the charge and its entry), and a claim's booking of one channel. */
  channelWrite: { p50: number; p99: number; failed: number };
  claimBooking: { p50: number; p99: number };
  /** The database's size on disk, MB. */
  diskMb?: number;
}

export interface LedgerLine {
  rows: LedgerRow[];
  notes: string[];
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const utcDay = (date: Date) => date.toISOString().slice(0, 10);
const mb = (bytes: number) => bytes / 1024 / 1024;

/** Resident memory of process `pid`, bytes (Linux /proc). */
function residentBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) * 1024;
}

async function medianMs(run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  return median(times);
}

interface Terms {
  asset: string;
  network: string;
  payTo: string;
}

/**
 * The synthetic book's rows for the numbers `series` names (a FROM item giving `i`), shaped like the server's: the
 * key of an EIP-3009 authorization (network, asset, payer, nonce, lowercased), one of 5,000 payers (checksummed, as
 * a payment names them), a quarter of them at the discounted price (signed in: the caller is the payer). A growth
 * from `stage.from` to `stage.to` payments spreads its rows over the 90 days before `$1` in the order of `i`: a server
 * writes its book in time order, so the table's rows lie in the order of their settlement (docs/testing.md, "The
 * ledger at ten million entries").
 */
function bookRows(series: string, terms: Terms, payers: string[], stage: { from: number; to: number }): string {
  const text = (value: string) => `'${value.replaceAll("'", "''")}'`;
  const list = (values: readonly string[]) => `(ARRAY[${values.map(text).join(",")}])`;
  // A payer of odd number pays over its channel (one each): the entry's nonce is the channel's id, its cumulative
  // grows with the book's order, and its transaction is the claim of the minute it was charged in (one pass a
  // minute, CHANNEL_DEFAULTS.claimIntervalMs), '' for the growth's last CHANNEL_UNCLAIMED entries.
  return `SELECT i, payer, nonce, at, discounted, route, method, channel_id,
      CASE WHEN channel_id IS NULL THEN NULL ELSE i::numeric * ${CUMULATIVE_STEP} END AS cumulative,
      CASE WHEN channel_id IS NULL
        THEN lower('eip3009:' || ${text(terms.network)} || ':' || ${text(terms.asset)} || ':' || payer || ':' || nonce)
        ELSE 'channel:' || channel_id || ':' || (i::numeric * ${CUMULATIVE_STEP})::text END AS key,
      CASE WHEN channel_id IS NULL THEN '0x' || md5('transaction' || i) || md5('transaction.' || i)
        WHEN i > ${stage.to - CHANNEL_UNCLAIMED} THEN ''
        ELSE '0x' || md5('claim' || claim_minute) || md5('claim.' || claim_minute) END AS transaction
    FROM (
      SELECT i, p.address AS payer, coalesce(p.channel, '0x' || md5('nonce' || i) || md5('nonce.' || i)) AS nonce,
        p.channel AS channel_id, i % 4 = 0 AS discounted,
        date_trunc('milliseconds', $1::timestamptz - interval '${SPREAD_MS} milliseconds'
          + ((i - ${stage.from}) * ${SPREAD_MS}::float8 / ${stage.to - stage.from}) * interval '1 millisecond') AS at,
        ${list(PAID_PATHS)}[1 + ((i * 7) % ${PAID_PATHS.length})::int] AS route,
        ${list(METHODS)}[1 + ((i / 3) % ${METHODS.length})::int] AS method
      FROM ${series}
      JOIN (VALUES ${payers
        .map((address, n) => `(${n}, ${text(address)}, ${n % 2 === 1 ? text(channelIdOf(n)) : "NULL"})`)
        .join(",")}) AS p (n, address, channel)
        ON p.n = (i * 40503) % ${PAYERS}
    ) numbered
    CROSS JOIN LATERAL (SELECT floor(extract(epoch FROM at) / 60)::bigint AS claim_minute) claims`;
}

/** Grows the book from `from` to `to` payments, CHUNK_ROWS per statement; seconds it took. */
async function grow(
  db: Database,
  terms: Terms,
  payers: string[],
  range: { from: number; to: number },
  now: Date,
  progress: (line: string) => void,
  label: string,
): Promise<number> {
  const rows = (series: string) => bookRows(series, terms, payers, range);
  const start = performance.now();
  for (let first = range.from + 1; first <= range.to; first += CHUNK_ROWS) {
    const last = Math.min(range.to, first + CHUNK_ROWS - 1);
    const chunkStart = performance.now();
    await db.query(
      `INSERT INTO settlements (payment_key, status, route, method, token_id, payer, nonce, caller, price_point, amount,
         asset, network, pay_to, valid_before, request_id, transaction, claimed_at, settled_at, channel_id, cumulative)
       SELECT key, 'settled', route, method, 1 + i % 10, payer, nonce, CASE WHEN discounted THEN payer END,
         CASE WHEN discounted THEN 'discounted' ELSE 'standard' END,
         CASE WHEN discounted THEN ${pricePoints.discounted} ELSE ${pricePoints.standard} END,
         $2, $3, $4, at + interval '118 seconds', md5('request' || i)::uuid::text,
         transaction, at - interval '2 seconds', at, channel_id, cumulative
       FROM (${rows("generate_series($5::bigint, $6::bigint) AS i")}) book`,
      [now, terms.asset, terms.network, terms.payTo, first, last],
    );
    // The claims of the chunk's channel entries, one row per claim and channel as the claimer records them, and the
    // channels as their charges and claims left them.
    await db.query(
      `INSERT INTO channel_events AS e (transaction, kind, channel_id, amount, asset, network, at)
       SELECT transaction, 'claim', channel_id,
         sum(CASE WHEN discounted THEN ${pricePoints.discounted} ELSE ${pricePoints.standard} END), $2, $3, max(at)
       FROM (${rows("generate_series($4::bigint, $5::bigint) AS i")}) book
       WHERE channel_id IS NOT NULL AND transaction <> ''
       GROUP BY transaction, channel_id
       ON CONFLICT (transaction, kind, channel_id) DO UPDATE SET amount = e.amount + excluded.amount`,
      [now, terms.asset, terms.network, first, last],
    );
    await db.query(
      `INSERT INTO channels AS c (channel_id, config, payer, balance, total_claimed, charged, signed_max, signature)
       SELECT channel_id, '{}'::jsonb, payer, max(cumulative) * 2,
         coalesce(max(cumulative) FILTER (WHERE transaction <> ''), 0), max(cumulative), max(cumulative), '0x'
       FROM (${rows("generate_series($2::bigint, $3::bigint) AS i")}) book
       WHERE channel_id IS NOT NULL
       GROUP BY channel_id, payer
       ON CONFLICT (channel_id) DO UPDATE SET balance = GREATEST(c.balance, excluded.balance),
         total_claimed = GREATEST(c.total_claimed, excluded.total_claimed),
         charged = GREATEST(c.charged, excluded.charged), signed_max = GREATEST(c.signed_max, excluded.signed_max)`,
      [now, first, last],
    );
    // Refunds of every REFUND_EVERY-th payment, whole, mined some minutes after it (block times: seconds).
    await db.query(
      `INSERT INTO refunds (transaction, log_index, payment_key, amount, refunded_at, book_key, note)
       SELECT '0x' || md5('refund' || i) || md5('refund.' || i), 0, key,
         CASE WHEN discounted THEN ${pricePoints.discounted} ELSE ${pricePoints.standard} END,
         date_trunc('second', least(at + interval '7 minutes', $1::timestamptz)),
         'refund:0x' || md5('refund' || i) || md5('refund.' || i) || ':0', NULL
       FROM (${rows(
         `(SELECT j * ${REFUND_EVERY} AS i FROM generate_series(ceil($2::numeric / ${REFUND_EVERY})::bigint,
           floor($3::numeric / ${REFUND_EVERY})::bigint) AS j) AS refunded`,
       )}) book`,
      [now, first, last],
    );
    const seconds = (performance.now() - chunkStart) / 1000;
    progress(
      `${label}: ${fmt(last)} of ${fmt(range.to)} payments, ${fmt((last - first + 1) / seconds)} rows/s ` +
        `(${fmt((performance.now() - start) / 1000, 1)} s)`,
    );
  }
  const seconds = (performance.now() - start) / 1000;
  // A book that grows over days is vacuumed as it grows: Postgres' autovacuum visits a table each time a fifth more
  // rows came in, marking its pages all-visible and its rows' commit status known. A book grown in minutes has had no
  // such pass, and autovacuum's first one over millions of fresh rows would run during the measurements, as would the
  // writes that a first read of each fresh row makes (docs/testing.md, "The ledger at ten million entries").
  const [{ workers } = { workers: 0 }] = await db.query<{ workers: number }>(
    "SELECT count(*)::int AS workers FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'",
  );
  const vacuumStart = performance.now();
  await db.query("VACUUM (ANALYZE)");
  progress(
    `${label}: vacuumed in ${fmt((performance.now() - vacuumStart) / 1000, 1)} s ` +
      `(autovacuum workers at work when the growth ended: ${workers})`,
  );
  return seconds;
}

/** A paid call's entry of a random route, method and token, with the given payment and price point. */
function randomCall(
  terms: Terms,
  call: { paymentKey: string; payer: string; nonce: string; point: PricePoint; channel?: SettlementClaim["channel"] },
): SettlementClaim {
  return {
    paymentKey: call.paymentKey,
    route: PAID_PATHS[Math.floor(Math.random() * PAID_PATHS.length)]!,
    method: METHODS[Math.floor(Math.random() * METHODS.length)]!,
    tokenId: 1 + Math.floor(Math.random() * 10),
    payer: call.payer,
    nonce: call.nonce,
    caller: call.point === "discounted" ? call.payer : null,
    pricePoint: call.point,
    amount: pricePoints[call.point],
    asset: terms.asset,
    network: terms.network,
    payTo: terms.payTo,
    validBefore: new Date(Date.now() + 120_000),
    requestId: randomUUID(),
    ...(call.channel ? { channel: call.channel } : {}),
  };
}

/** One paid call's ledger write (claim, then markSettled), WRITES of them, WRITERS at once: p50 and p99, ms. */
async function writeCost(db: Database, terms: Terms, payers: string[]): Promise<LedgerRow["write"]> {
  const ledger = createSettlementLedger(db);
  const times: number[] = [];
  let failed = 0;
  let next = 0;
  const writer = async () => {
    while (next < WRITES) {
      next += 1;
      const payer = payers[Math.floor(Math.random() * payers.length)]!;
      const nonce = `0x${randomBytes(32).toString("hex")}`;
      const point: PricePoint = Math.random() < 0.25 ? "discounted" : "standard";
      const claim = randomCall(terms, {
        paymentKey: `eip3009:${terms.network}:${terms.asset}:${payer}:${nonce}`.toLowerCase(),
        payer,
        nonce,
        point,
      });
      const start = performance.now();
      const claimed = await ledger.claim(claim);
      if (claimed.outcome !== "claimed") {
        failed += 1;
        continue;
      }
      await ledger.markSettled(claim.paymentKey, `0x${randomBytes(32).toString("hex")}`, new Date());
      times.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  return { p50: percentile(times, 50), p99: percentile(times, 99), failed };
}

/**
 * One paid call's write over a channel (ChannelStore.charge with its entry, the server's one statement per call),
 * WRITES of them, WRITERS at once, each writer on channels of its own: p50 and p99, ms. Then CLAIM_BOOKINGS claims,
 * each of one of those channels up to what it was charged (ChannelStore.claimed, as the claimer books a claim): p50
 * and p99, ms.
 */
async function channelWriteCost(
  db: Database,
  terms: Terms,
): Promise<{ write: LedgerRow["write"]; claimBooking: { p50: number; p99: number } }> {
  const store = createChannelStore(db);
  const channels = await db.query<{ channel_id: string; payer: string; charged: string }>(
    `SELECT channel_id, payer, charged::text AS charged FROM channels ORDER BY channel_id LIMIT ${WRITERS * 8}`,
  );
  if (channels.length < WRITERS) throw new Error("the book has too few channels to write to");
  const state = new Map(channels.map((c) => [c.channel_id, BigInt(c.charged)]));
  const times: number[] = [];
  let failed = 0;
  let next = 0;
  const writer = async (w: number) => {
    const own = channels.filter((_, n) => n % WRITERS === w);
    let turn = 0;
    while (next < WRITES) {
      next += 1;
      const channel = own[turn++ % own.length]!;
      const expected = state.get(channel.channel_id)!;
      const point: PricePoint = Math.random() < 0.25 ? "discounted" : "standard";
      const charged = expected + BigInt(pricePoints[point]);
      const claim = randomCall(terms, {
        paymentKey: channelPaymentKey(channel.channel_id, charged),
        payer: channel.payer,
        nonce: channel.channel_id,
        point,
        channel: { id: channel.channel_id, cumulative: charged.toString() },
      });
      const start = performance.now();
      const written = await store.charge({
        channelId: channel.channel_id,
        expected,
        charged,
        signedMax: charged,
        signature: `0x${randomBytes(65).toString("hex")}`,
        booking: { claim, transaction: "" },
      });
      if (!written) {
        failed += 1;
        continue;
      }
      times.push(performance.now() - start);
      state.set(channel.channel_id, charged);
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
  const bookings: number[] = [];
  for (const channel of channels.slice(0, CLAIM_BOOKINGS)) {
    const start = performance.now();
    await store.claimed(
      { transaction: `0x${randomBytes(32).toString("hex")}`, asset: terms.asset, network: terms.network },
      [{ channelId: channel.channel_id, totalClaimed: state.get(channel.channel_id)! }],
    );
    bookings.push(performance.now() - start);
  }
  return {
    write: { p50: percentile(times, 50), p99: percentile(times, 99), failed },
    claimBooking: { p50: percentile(bookings, 50), p99: percentile(bookings, 99) },
  };
}

/** The channel writes on an empty book: its payers' channels opened first, as their deposits open them. */
async function emptyChannelWrites(db: Database, terms: Terms, payers: string[]) {
  await db.query(
    `INSERT INTO channels (channel_id, config, payer, balance) SELECT * FROM
       (VALUES ${payers
         .slice(0, WRITERS * 16)
         .map((payer, n) => (n % 2 === 1 ? `('${channelIdOf(n)}', '{}'::jsonb, '${payer}', 1000000000000)` : ""))
         .filter(Boolean)
         .join(",")}) AS v ON CONFLICT DO NOTHING`,
  );
  const { write: channelWrite, claimBooking } = await channelWriteCost(db, terms);
  return { channelWrite, claimBooking };
}

/** The book's size in rows, and the 90-day window's middle position as a client that paged there holds it. */
async function bookFacts(db: Database, terms: Terms, window: { from: string; to: string }) {
  const range = [
    new Date(`${window.from}T00:00:00Z`),
    new Date(Date.parse(`${window.to}T00:00:00Z`) + DAY_MS),
    terms.asset,
    terms.network,
  ];
  const where = `status = 'settled' AND settled_at >= $1 AND settled_at < $2 AND lower(asset) = lower($3) AND network = $4`;
  const [counts] = await db.query<{
    payments: number;
    refunds: number;
    in_window: number;
    refunds_in_window: number;
    disk: string;
  }>(
    `SELECT (SELECT count(*) FROM settlements WHERE status = 'settled')::int AS payments,
       (SELECT count(*) FROM refunds)::int AS refunds,
       (SELECT count(*) FROM settlements WHERE ${where})::int AS in_window,
       (SELECT count(*) FROM refunds WHERE refunded_at >= $1 AND refunded_at < $2)::int AS refunds_in_window,
       pg_database_size(current_database())::text AS disk`,
    range,
  );
  const [middle] = await db.query<{ settled_at: Date; payment_key: string }>(
    `SELECT settled_at, payment_key FROM settlements WHERE ${where}
     ORDER BY settled_at, payment_key OFFSET $5 LIMIT 1`,
    [...range, Math.floor(counts!.in_window / 2)],
  );
  // transports/http/routes/ledger-book.ts `cursorOf`: opaque to a client, the position's time and key.
  const cursor = Buffer.from(`${new Date(middle!.settled_at).toISOString()}|${middle!.payment_key}`).toString(
    "base64url",
  );
  return {
    payments: counts!.payments,
    refunds: counts!.refunds,
    diskMb: mb(Number(counts!.disk)),
    cursor,
    inWindow: counts!.in_window + counts!.refunds_in_window,
    window: { payments: counts!.in_window, refunds: counts!.refunds_in_window },
  };
}

/** The SDK's reads of the book at one size, signed in as the operator. */
async function measureReads(
  server: OurServer,
  operatorKey: `0x${string}`,
  window: { from: string; to: string },
  book: { cursor: string; inWindow: number },
  progress: (line: string) => void,
  label: string,
): Promise<Pick<LedgerRow, "totals" | "report90" | "reportDefault" | "firstPage" | "middlePage" | "exported">> {
  const { cursor, inWindow: expectedEntries } = book;
  const client = createAgentToolsClient({ baseUrl: server.url, account: accountFromPrivateKey(operatorKey) });
  // The first request learns the chain to sign in on (a 401): not one of the timed ones.
  await client.ledger({ limit: 0 });
  progress(`${label}: reports, pages`);
  const report90 = await medianMs(() => client.ledger({ ...window, limit: 20 }));
  // The report's totals (kept by the schema) next to the book's own count, for the notes.
  const { total } = await client.ledger({ ...window, limit: 0 });
  const totals = { payments: total.payments, refunds: total.refunds };
  const reportDefault = await medianMs(() => client.ledger());
  const firstPage = await medianMs(() => client.ledgerEntries(window));
  const middle = await client.ledgerEntries({ ...window, after: cursor });
  if (middle.entries.length === 0) throw new Error("the page after the middle of the book is empty");
  const middlePage = await medianMs(() => client.ledgerEntries({ ...window, after: cursor }));

  const serverBefore = residentBytes(server.pid);
  let serverMax = serverBefore;
  const benchBefore = process.memoryUsage.rss();
  let benchMax = benchBefore;
  const sampler = setInterval(() => {
    serverMax = Math.max(serverMax, residentBytes(server.pid));
    benchMax = Math.max(benchMax, process.memoryUsage.rss());
  }, 250);
  const times: number[] = [];
  let entries = 0;
  let cut = false;
  try {
    for (let run = 0; run < RUNS && !cut; run++) {
      const start = performance.now();
      const stream = await client.exportLedger({ ...window, format: "csv" });
      let lines = 0;
      let shown = start;
      for await (const chunk of stream) {
        // Lines counted through a Buffer's view, whose indexOf is several times a Uint8Array's: the count is the
        // bench's own work, not the SDK's, and shares the machine with the server and the database.
        const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) lines += 1;
        const now = performance.now();
        if (now - shown > 30_000) {
          shown = now;
          progress(`${label}: CSV export ${run + 1}: ${fmt(lines - 1)} entries so far`);
        }
        if (now - start > EXPORT_CUT_S * 1000) {
          cut = true;
          break; // cancels the stream: the server stops reading the book
        }
      }
      const seconds = (performance.now() - start) / 1000;
      times.push(seconds);
      entries = lines - 1; // the header line
      progress(
        `${label}: CSV export ${run + 1}: ${fmt(entries)} entries in ${fmt(seconds, 1)} s${cut ? " (cut)" : ""}`,
      );
      if (seconds > LONG_EXPORT_S) break;
    }
  } finally {
    clearInterval(sampler);
  }
  return {
    totals,
    report90,
    reportDefault,
    firstPage,
    middlePage,
    exported: {
      seconds: median(times),
      entries,
      ...(cut ? { cut: { expected: expectedEntries } } : {}),
      runs: times.length,
      serverBefore: mb(serverBefore),
      serverMax: mb(serverMax),
      benchGrowth: mb(benchMax - benchBefore),
    },
  };
}

/** Free bytes where the temp directories are. */
function freeBytes(): number {
  const stats = statfsSync(tmpdir());
  return stats.bavail * stats.bsize;
}

export async function benchLedger(
  progress: (line: string) => void,
  options: { sizes?: number[]; pgliteSizes?: number[] } = {},
): Promise<LedgerLine> {
  const sizes = options.sizes ?? LEDGER_SIZES;
  const pgliteSizes = options.pgliteSizes ?? PGLITE_SIZES;
  const rows: LedgerRow[] = [];
  const notes: string[] = [];
  const temp = mkdtempSync(join(tmpdir(), "agent-tools-bench-ledger-"));
  progress("ledger: starting the devnet and a Postgres cluster");
  const devnet = await spawnDevnetProcess({ l1Port: 0, l2Port: 0 });
  const postgres = await startTestPostgres();
  let server: OurServer | undefined;
  let db: Database | undefined;
  try {
    const { deployment } = devnet;
    const operator = deployment.accounts[0]!;
    const env = deploymentEnv(deployment);
    const terms: Terms = { asset: env.PAYMENT_ASSET!, network: env.PAYMENT_NETWORK!, payTo: env.PAY_TO! };
    const serverEnv = { ...env, FACILITATOR_PRIVATE_KEY: operator.privateKey };
    const payers = Array.from({ length: PAYERS }, (_, n) =>
      getAddress(`0x${createHash("sha256").update(`payer ${n}`).digest("hex").slice(0, 40)}`),
    );
    const now = new Date();
    const window = { from: utcDay(new Date(now.getTime() - 89 * DAY_MS)), to: utcDay(now) };

    if (sizes.length > 0) {
      if (!postgres) throw new Error("the ledger line needs a Postgres server (Debian's postgresql package)");
      const url = await postgres.createDatabase();
      // Opened and migrated as the server opens it, before any row is written: the schema's own triggers count them.
      db = await openDatabase({ kind: "postgres", url });
      const [version] = await db.query<{ server_version: string; shared_buffers: string }>(
        "SELECT current_setting('server_version') AS server_version, current_setting('shared_buffers') AS shared_buffers",
      );
      notes.push(
        `Postgres ${version!.server_version} (shared_buffers ${version!.shared_buffers}, fsync off), a cluster of its own on 127.0.0.1.`,
      );
      server = await startOurServer(
        { ...serverEnv, DATABASE_URL: url, DATA_DIR: join(temp, "pg-data") },
        join(temp, "postgres.log"),
      );
      progress("ledger, Postgres: write cost on the empty book");
      rows.push({
        store: "Postgres",
        payments: 0,
        refunds: 0,
        write: await writeCost(db, terms, payers),
        ...(await emptyChannelWrites(db, terms, payers)),
      });
      let generated = 0;
      for (const size of sizes) {
        if (size <= generated) continue;
        const needed = (size - generated) * BYTES_PER_ROW;
        if (needed > freeBytes()) {
          notes.push(`Postgres at ${fmt(size)}: left out, ${fmt(mb(needed) / 1024, 1)} GB would not fit on the disk.`);
          break;
        }
        const label = `ledger, Postgres, ${fmt(size)}`;
        const seconds = await grow(db, terms, payers, { from: generated, to: size }, now, progress, label);
        const facts = await bookFacts(db, terms, window);
        const reads = await measureReads(server, operator.privateKey, window, facts, progress, label);
        progress(`${label}: write cost`);
        const write = await writeCost(db, terms, payers);
        const { write: channelWrite, claimBooking } = await channelWriteCost(db, terms);
        rows.push({
          store: "Postgres",
          payments: facts.payments,
          refunds: facts.refunds,
          grow: { seconds, rowsPerSecond: (size - generated) / seconds },
          book: facts.window,
          ...reads,
          write,
          channelWrite,
          claimBooking,
          diskMb: facts.diskMb,
        });
        generated = size;
      }
      await server.stop();
      server = undefined;
      await db.close();
      db = undefined;
    }

    if (pgliteSizes.length > 0) {
      const dataDir = join(temp, "pglite-data");
      const pgliteEnv = { ...serverEnv, DATA_DIR: dataDir };
      db = await openDatabase({ kind: "pglite", dataDir });
      progress("ledger, PGlite: write cost on the empty book");
      rows.push({
        store: "PGlite",
        payments: 0,
        refunds: 0,
        write: await writeCost(db, terms, payers),
        ...(await emptyChannelWrites(db, terms, payers)),
      });
      let generated = 0;
      let rate = Number.POSITIVE_INFINITY;
      for (const size of pgliteSizes) {
        if (size <= generated) continue;
        const estimate = (size - generated) / rate;
        if (estimate > PGLITE_MAX_GROW_S) {
          notes.push(
            `PGlite at ${fmt(size)}: left out, its growth would take about ${fmt(estimate / 60, 0)} min at ` +
              `${fmt(rate)} rows/s.`,
          );
          break;
        }
        const label = `ledger, PGlite, ${fmt(size)}`;
        db ??= await openDatabase({ kind: "pglite", dataDir });
        const seconds = await grow(db, terms, payers, { from: generated, to: size }, now, progress, label);
        rate = (size - generated) / seconds;
        progress(`${label}: write cost`);
        const write = await writeCost(db, terms, payers);
        const { write: channelWrite, claimBooking } = await channelWriteCost(db, terms);
        const facts = await bookFacts(db, terms, window);
        await db.close();
        db = undefined;
        server = await startOurServer(pgliteEnv, join(temp, "pglite.log"));
        const reads = await measureReads(server, operator.privateKey, window, facts, progress, label);
        await server.stop();
        server = undefined;
        rows.push({
          store: "PGlite",
          payments: facts.payments,
          refunds: facts.refunds,
          grow: { seconds, rowsPerSecond: rate },
          book: facts.window,
          ...reads,
          write,
          channelWrite,
          claimBooking,
          diskMb: facts.diskMb,
        });
        generated = size;
      }
    }
    notes.push(
      `Windows: 90 days ${window.from} to ${window.to}; the default window is the 30 days up to today. Pages: ` +
        "the default limit, 500 entries; the first page and the page after the 90-day window's middle position. " +
        `Medians of ${RUNS}; an export over ${LONG_EXPORT_S} s is timed once. Writes: ${fmt(WRITES)} claims and ` +
        `settlements, ${WRITERS} at once, into the same book. The book: ${fmt(PAYERS)} payers, ` +
        `${PAID_PATHS.length} routes, a quarter discounted, ` +
        `settled over the last 90 days, one refund per ${fmt(REFUND_EVERY)} payments; the write rows included.`,
    );
    return { rows, notes };
  } finally {
    await server?.stop();
    await db?.close().catch(() => undefined);
    await postgres?.stop();
    await devnet.close();
    rmSync(temp, { recursive: true, force: true });
  }
}

const ms = (value: number | undefined) => (value === undefined ? "" : fmt(value, value < 100 ? 1 : 0));

/** An export's time: the median, "(1×)" when timed once, and for one cut, what the whole window would take at its rate. */
function exportTime(exported: NonNullable<LedgerRow["exported"]>): string {
  if (exported.cut) {
    const whole = (exported.cut.expected / exported.entries) * exported.seconds;
    return `~${fmt(whole)} (cut at ${fmt(exported.seconds)}, ${fmt(exported.entries)} read)`;
  }
  return `${fmt(exported.seconds, 1)}${exported.runs < RUNS ? ` (${exported.runs}×)` : ""}`;
}

/** The ledger line: one row per store and book size. */
export function printLedger(line: LedgerLine): void {
  const header = [
    "store",
    "payments",
    "grown in s",
    "rows/s",
    "report 90 d ms",
    "default window ms",
    "first page ms",
    "middle page ms",
    "CSV export s",
    "entries",
    "entries/s",
    "write p50 ms",
    "write p99 ms",
    "channel write p50 / p99 ms",
    "claim booking p50 / p99 ms",
    "server RSS MB",
    "bench RSS +MB",
    "disk MB",
  ];
  const cells = line.rows.map((row) => {
    const exported = row.exported;
    return [
      row.store,
      fmt(row.payments),
      row.grow ? fmt(row.grow.seconds, 1) : "",
      row.grow ? fmt(row.grow.rowsPerSecond) : "",
      ms(row.report90),
      ms(row.reportDefault),
      ms(row.firstPage),
      ms(row.middlePage),
      exported ? exportTime(exported) : "",
      exported ? fmt(exported.cut?.expected ?? exported.entries) : "",
      exported ? fmt(exported.entries / exported.seconds) : "",
      fmt(row.write.p50, 2) + (row.write.failed ? ` (${row.write.failed} failed)` : ""),
      fmt(row.write.p99, 2),
      `${fmt(row.channelWrite.p50, 2)} / ${fmt(row.channelWrite.p99, 2)}` +
        (row.channelWrite.failed ? ` (${row.channelWrite.failed} failed)` : ""),
      `${fmt(row.claimBooking.p50, 2)} / ${fmt(row.claimBooking.p99, 2)}`,
      exported ? `${fmt(exported.serverBefore)} → ${fmt(exported.serverMax)}` : "",
      exported ? fmt(exported.benchGrowth) : "",
      row.diskMb === undefined ? "" : fmt(row.diskMb),
    ];
  });
  const out = [
    "",
    "Operator's ledger as the book grows: our server as built, read through the SDK as the operator:",
    table(header, cells, 1),
    ...line.notes,
    ...line.rows
      .filter((row) => row.totals && row.book)
      .map(
        (row) =>
          `${row.store} at ${fmt(row.payments)}: the 90-day report counts ${fmt(row.totals!.payments)} payments and ` +
          `${fmt(row.totals!.refunds)} refunds; the book's window holds ${fmt(row.book!.payments)} and ` +
          `${fmt(row.book!.refunds)}.`,
      ),
  ];
  process.stdout.write(`${out.join("\n")}\n`);
}

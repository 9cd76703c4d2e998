/**
 * The ledger's book as it grows: pages that seek along an index, and totals the store keeps per day (migrations.ts,
 * version 11) that stay equal to the entries while payments and refunds are written from several instances at once.
 * On PGlite and on Postgres.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { ledgerCsvLine } from "@agent-tools/schema";
import fc from "fast-check";
import { type Address, getAddress, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../src/store/database.js";
import { migrate, migrations } from "../src/store/migrations.js";
import { openMemoryPglite } from "../src/store/pglite.js";
import { openPostgres } from "../src/store/postgres.js";
import {
  type BookPosition,
  type BookRow,
  createSettlementLedger,
  type LedgerRange,
  type LedgerTotals,
  type SettlementLedger,
} from "../src/store/settlement-ledger.js";
import { csvLinesOf, csvPositionOf, ledgerEntryOf } from "../src/transports/http/routes/ledger-book.js";
import { CsvLinesFromCopy } from "../src/transports/http/routes/ledger-csv-copy.js";
import { csvText } from "./helpers/csv-text.js";
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

const ASSET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const NETWORK = "eip155:31338";
const PAY_TO = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const ROUTES = [
  "/intel",
  "/drop-radar",
  "/b20-radar",
  "/altchain-radar",
  "/portfolio",
  "/allowlist-scan",
  "/offer-radar",
];
const DAY_MS = 86_400_000;
/** Three UTC days; the window of every read below. */
const FIRST_DAY = Date.parse("2026-03-01T00:00:00Z");
const RANGE: LedgerRange = {
  from: new Date(FIRST_DAY),
  to: new Date(FIRST_DAY + 3 * DAY_MS),
  asset: ASSET,
  network: NETWORK,
};
const hex32 = () => `0x${randomBytes(32).toString("hex")}`;

/** Each backend the store runs on, with a second instance on the same database where it has one. */
const backends: [string, () => Promise<{ db: Database; other: Database }>][] = [
  [
    "PGlite",
    async () => {
      // PGlite is one process's database: its instances are that process's callers.
      const db = await openTestDatabase();
      return { db, other: db };
    },
  ],
  [
    "Postgres",
    async () => {
      const url = await postgres!.createDatabase();
      const db = await openPostgres(url);
      await migrate(db);
      return { db, other: await openPostgres(url) };
    },
  ],
];

/** `count` settled payments written straight into the table, spread over the window's three days. */
async function insertSettled(db: Database, count: number, prefix: string): Promise<void> {
  await db.query(
    `INSERT INTO settlements (payment_key, payer, nonce, asset, network, pay_to, amount, valid_before, claimed_at,
       status, route, method, token_id, caller, price_point, transaction, settled_at, request_id)
     SELECT $1 || i, $2, '0x' || lpad(to_hex(i), 64, '0'), $3, $4, $5, CASE WHEN i % 2 = 0 THEN 10000 ELSE 8000 END,
       now(), now(), 'settled', ($6::text[])[1 + i % 7], (ARRAY['GET', 'POST', 'MCP', 'A2A'])[1 + i % 4], 1, $2,
       CASE WHEN i % 2 = 0 THEN 'standard' ELSE 'discounted' END, '0x' || lpad(to_hex(i), 64, '0'),
       $7::timestamptz + (i * 25) * interval '1 millisecond', $1 || i
     FROM generate_series(1, $8::int) AS i`,
    [prefix, PAY_TO.toLowerCase(), ASSET, NETWORK, PAY_TO, ROUTES, RANGE.from, count],
  );
}

/** A paid call's ledger write as the service makes it: the claim, then the settlement. */
async function settle(ledger: SettlementLedger, settledAt: Date, n: number): Promise<string> {
  const nonce = hex32();
  const paymentKey = `eip3009:${NETWORK}:${ASSET.toLowerCase()}:${PAY_TO.toLowerCase()}:${nonce}`;
  const claim = await ledger.claim({
    paymentKey,
    route: ROUTES[n % ROUTES.length]!,
    method: "MCP",
    tokenId: 2,
    payer: PAY_TO,
    nonce,
    caller: null,
    pricePoint: n % 2 === 0 ? "standard" : "discounted",
    amount: n % 2 === 0 ? "10000" : "8000",
    asset: ASSET,
    network: NETWORK,
    payTo: PAY_TO,
    validBefore: new Date(Date.now() + 60_000),
    requestId: `live-${n}`,
  });
  expect(claim.outcome).toBe("claimed");
  await ledger.markSettled(paymentKey, hex32(), settledAt);
  return paymentKey;
}

/**
 * A paid call as the CSV export must write it, whatever a caller or an operator put in its texts: its payer and caller
 * in any case, paid over a channel (its voucher's cumulative amount, its claim sent or not yet) or not, and a refund of
 * part of it (with a note) or none.
 */
const csvCall = fc.record({
  route: csvText,
  method: fc.constantFrom("GET", "POST", "MCP", "A2A" as const),
  tokenId: fc.integer({ min: 1, max: 6666 }),
  payer: fc.uint8Array({ minLength: 20, maxLength: 20 }).chain((bytes) => {
    const address = toHex(bytes);
    return fc.constantFrom(address, address.toUpperCase().replace("0X", "0x"), getAddress(address) as Address);
  }),
  caller: fc.option(
    fc.uint8Array({ minLength: 20, maxLength: 20 }).map((bytes) => toHex(bytes)),
    { nil: null },
  ),
  pricePoint: fc.constantFrom("standard", "discounted" as const),
  amount: fc.bigInt({ min: 0n, max: 10n ** 30n }),
  settledAt: fc.integer({ min: FIRST_DAY, max: FIRST_DAY + 3 * DAY_MS - 1 }),
  requestId: csvText,
  channel: fc.option(fc.record({ cumulative: fc.bigInt({ min: 0n, max: 10n ** 30n }), claimed: fc.boolean() }), {
    nil: null,
  }),
  refund: fc.option(
    fc.record({
      share: fc.integer({ min: 1, max: 100 }),
      at: fc.integer({ min: FIRST_DAY, max: FIRST_DAY + 3 * DAY_MS - 1000 }),
      note: fc.option(csvText, { nil: null }),
    }),
    { nil: null },
  ),
});

/** Where a COPY's bytes are cut into chunks: fractions of their length. */
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 });

/** The export's lines that CsvLinesFromCopy makes of `copied`, given to it in chunks cut at `cutAt`. */
async function finishCopy(copied: Buffer, cutAt: number[]): Promise<string> {
  const at = [...new Set(cutAt.map((share) => Math.floor(share * copied.length)))].sort((a, b) => a - b);
  const chunks = [0, ...at].map((start, i) => copied.subarray(start, [...at, copied.length][i]));
  const lines = new CsvLinesFromCopy();
  const done = lines.toArray();
  for (const chunk of chunks) lines.write(chunk);
  lines.end();
  return Buffer.concat(await done).toString("utf8");
}

/** Every row of the window, page after page of `limit`, each next page read after the last row's position. */
async function readPages<Row>(
  read: (after: BookPosition | undefined, limit: number) => Promise<Row[]>,
  positionOf: (row: Row) => BookPosition,
  limit: number,
): Promise<Row[]> {
  const rows: Row[] = [];
  let after: BookPosition | undefined;
  for (;;) {
    const page = await read(after, limit);
    rows.push(...page);
    if (page.length < limit) return rows;
    after = positionOf(page.at(-1)!);
  }
}

/** Every page of the window, `between` awaited after each. */
async function readBook(ledger: SettlementLedger, between: (page: number) => Promise<void> = async () => {}) {
  const rows: BookRow[] = [];
  let after: BookPosition | undefined;
  for (let page = 1; ; page += 1) {
    const rowsOfPage = await ledger.page(RANGE, after, 1000);
    rows.push(...rowsOfPage);
    await between(page);
    if (rowsOfPage.length < 1000) return rows;
    after = rowsOfPage.at(-1);
  }
}

/** A node of a plan as EXPLAIN (FORMAT JSON) writes it. */
interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

/** The totals an accountant would add up from the entries themselves, in the store's order. */
function totalsOfEntries(rows: BookRow[]): LedgerTotals[] {
  const totals = new Map<string, LedgerTotals>();
  for (const row of rows) {
    const day = row.settledAt.slice(0, 10);
    const id = `${day} ${row.route} ${row.pricePoint}`;
    const t = totals.get(id) ?? {
      day,
      route: row.route,
      pricePoint: row.pricePoint,
      payments: 0,
      amount: "0",
      refunds: 0,
      refunded: "0",
    };
    if (row.kind === "payment") {
      t.payments += 1;
      t.amount = (BigInt(t.amount) + BigInt(row.amount)).toString();
    } else {
      t.refunds += 1;
      t.refunded = (BigInt(t.refunded) + BigInt(row.amount)).toString();
    }
    totals.set(id, t);
  }
  const order = (t: LedgerTotals) => `${t.day} ${t.route} ${t.pricePoint}`;
  return [...totals.values()].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}

describe.each(backends.filter(([name]) => name !== "Postgres" || !withoutPostgres))("the book on %s", (_, setUp) => {
  let db: Database;
  let other: Database;
  let ledger: SettlementLedger;
  let ledgerB: SettlementLedger;
  beforeAll(async () => {
    ({ db, other } = await setUp());
    ledger = createSettlementLedger(db);
    ledgerB = createSettlementLedger(other);
  }, 60_000);
  afterAll(async () => {
    if (other !== db) await other?.close();
    await db?.close();
  });

  it("pages 10,000 entries whole while two instances add payments and refunds, and keeps totals equal to the entries", async () => {
    await insertSettled(db, 10_000, "book-");
    const before = await readBook(ledger);
    expect(before).toHaveLength(10_000);
    expect(await ledger.totals(RANGE)).toEqual(totalsOfEntries(before));

    // While the operator pages, each instance settles payments (through the paid call's own writes) and books
    // refunds, some of the same payment at once.
    const refundOutcomes: string[] = [];
    let live = 0;
    const refund = async (onto: SettlementLedger, paymentKey: string, amount: bigint) => {
      const result = await onto.recordRefund({
        paymentKey,
        paid: 8000n,
        transaction: hex32(),
        transfers: [{ logIndex: 0, amount }],
        refundedAt: new Date(FIRST_DAY + 2 * DAY_MS + live * 1000),
        note: null,
      });
      refundOutcomes.push(result.outcome);
    };
    const paged = await readBook(ledger, async (page) => {
      const writes: Promise<unknown>[] = [];
      for (const onto of [ledger, ledgerB]) {
        for (let i = 0; i < 20; i += 1) {
          live += 1;
          // Some before the pages read so far (the pager has passed them), most after.
          const at = i % 5 === 0 ? FIRST_DAY + page * 1000 : FIRST_DAY + DAY_MS + live * 997;
          writes.push(settle(onto, new Date(at), live));
        }
      }
      // Two refunds of 5,000 of the same discounted payment (8,000) from the two instances: one is booked, the
      // other exceeds what is left.
      const paymentKey = `book-${page * 2 - 1}`;
      writes.push(refund(ledger, paymentKey, 5000n), refund(ledgerB, paymentKey, 5000n));
      await Promise.all(writes);
    });
    // Every entry written before the paging began was listed once; none twice.
    const keys = paged.map((row) => row.key);
    expect(new Set(keys).size).toBe(keys.length);
    const listed = new Set(keys);
    for (const row of before) if (!listed.has(row.key)) expect.fail(`${row.key} is missing`);

    expect(refundOutcomes.filter((o) => o === "recorded")).toHaveLength(refundOutcomes.length / 2);
    expect(refundOutcomes.filter((o) => o === "exceeds")).toHaveLength(refundOutcomes.length / 2);
    const after = await readBook(ledger);
    expect(after.filter((row) => row.kind === "payment")).toHaveLength(10_000 + live);
    expect(after.filter((row) => row.kind === "refund")).toHaveLength(refundOutcomes.length / 2);
    expect(await ledger.totals(RANGE)).toEqual(totalsOfEntries(after));
    expect(await ledgerB.totals(RANGE)).toEqual(totalsOfEntries(after));
  }, 120_000);

  it("keeps the totals through writes that are not payments settled: a claim, its release, answers forgotten", async () => {
    const totals = await ledger.totals(RANGE);
    const nonce = hex32();
    const claim = await ledger.claim({
      paymentKey: `pending-${nonce}`,
      route: "/intel",
      method: "POST",
      tokenId: 1,
      payer: PAY_TO,
      nonce,
      caller: null,
      pricePoint: "standard",
      amount: "10000",
      asset: ASSET,
      network: NETWORK,
      payTo: PAY_TO,
      validBefore: new Date(Date.now() + 60_000),
      requestId: "pending",
    });
    expect(claim.outcome).toBe("claimed");
    expect(await ledger.totals(RANGE)).toEqual(totals);
    await ledger.release(`pending-${nonce}`);
    // Every settled row rewritten at once, none of what the totals count changed.
    const settled = await db.query(
      "UPDATE settlements SET answer = '{}', answered_at = now() WHERE status = 'settled' RETURNING 1",
    );
    expect(await ledger.forgetAnswers(new Date(Date.now() + 60_000))).toBe(settled.length);
    expect(await ledger.totals(RANGE)).toEqual(totals);
    expect(totals).toEqual(totalsOfEntries(await readBook(ledger)));
  });

  it.each([
    ["a page", (onto: SettlementLedger, at: BookPosition) => onto.page(RANGE, at, 100)],
    ["a page of the CSV export", (onto: SettlementLedger, at: BookPosition) => onto.csvPage(RANGE, at, 100)],
  ])(
    "reads %s deep in the book as one range of the book's index, no row read that the page does not list",
    async (_, read) => {
      await db.query("ANALYZE");
      // The page's own statement, as the ledger sends it, run again under EXPLAIN ANALYZE.
      const sent: [string, unknown[]][] = [];
      const watched = createSettlementLedger({
        ...db,
        queryArrays: (sql: string, params?: unknown[]) => {
          sent.push([sql, params ?? []]);
          return db.queryArrays(sql, params);
        },
      } as Database);
      const book = await readBook(ledger);
      const middle = book[Math.floor(book.length / 2)]!;
      await read(watched, middle);
      const [sql, params] = sent.at(-1)!;
      const [explained] = await db.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
        params,
      );
      const nodes: PlanNode[] = [];
      const walk = (node: PlanNode) => {
        nodes.push(node);
        for (const child of node.Plans ?? []) walk(child);
      };
      walk(explained!["QUERY PLAN"][0].Plan);
      const payments = nodes.filter(
        (node) => node["Relation Name"] === "settlements" && node["Index Name"] !== "settlements_pkey",
      );
      // The page's payments, and the same range read for the time of its last payment (the refunds' reach, below).
      expect(payments.map((node) => [node["Node Type"], node["Index Name"]])).toEqual([
        ["Index Scan", "settlements_book_by_asset"],
        ["Index Scan", "settlements_book_by_asset"],
      ]);
      for (const node of payments) {
        expect(node["Actual Rows"]).toBeLessThanOrEqual(100);
        expect(node["Rows Removed by Filter"] ?? 0).toBe(0);
      }
      // The refunds side reads only the refunds up to the last payment the page can hold, not a page's worth after
      // the position: each refund read is a lookup of its payment, and at ten million entries those lookups were most of
      // an export's time (docs/testing.md, "The ledger at ten million entries").
      const later = book.slice(book.indexOf(middle) + 1);
      const reach = later.filter((row) => row.kind === "payment")[99]!.settledAt;
      const refundsLater = later.filter((row) => row.kind === "refund");
      const refundsReached = refundsLater.filter((row) => row.settledAt <= reach).length;
      expect(refundsLater.length).toBeGreaterThan(refundsReached);
      // However the planner reads this small table (a scan of its index, or of the table and a sort), it keeps those.
      const refunds = nodes.filter((node) => node["Relation Name"] === "refunds");
      expect(refunds).toHaveLength(1);
      expect(refunds[0]!["Actual Rows"]).toBe(refundsReached);
    },
  );

  it("writes the CSV export's lines as ledgerCsvLine writes the book's entries, byte for byte, whatever their texts", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(csvCall, { minLength: 1, maxLength: 8 }), cuts, async (calls, cutAt) => {
        // A network of its own per run: the window holds this run's entries only.
        run += 1;
        const range: LedgerRange = { ...RANGE, network: `eip155:${900_000 + run}` };
        let refunds = 0;
        /** The cumulative amount of each payment's voucher by its nonce: null for a payment not over a channel. */
        const cumulativeOf = new Map<string, string | null>();
        for (const call of calls) {
          // A call over a channel is booked under the channel's id (its nonce) and the voucher's cumulative amount;
          // its transaction is empty until the claim pass sends one.
          const nonce = hex32();
          const paymentKey = `eip3009:${range.network}:${ASSET.toLowerCase()}:${call.payer.toLowerCase()}:${nonce}`;
          const { refund, settledAt, amount, channel, ...texts } = call;
          const claimed = await ledger.claim({
            ...texts,
            paymentKey,
            nonce,
            amount: amount.toString(),
            asset: ASSET,
            network: range.network,
            payTo: PAY_TO,
            validBefore: new Date(Date.now() + 60_000),
            ...(channel ? { channel: { id: nonce, cumulative: channel.cumulative.toString() } } : {}),
          });
          expect(claimed.outcome).toBe("claimed");
          cumulativeOf.set(nonce, channel ? channel.cumulative.toString() : null);
          await ledger.markSettled(paymentKey, channel && !channel.claimed ? "" : hex32(), new Date(settledAt));
          if (refund && amount > 0n) {
            const given = (amount * BigInt(refund.share)) / 100n || 1n;
            const result = await ledger.recordRefund({
              paymentKey,
              paid: amount,
              transaction: hex32(),
              transfers: [{ logIndex: 0, amount: given }],
              refundedAt: new Date(Math.floor(refund.at / 1000) * 1000),
              note: refund.note,
            });
            expect(result.outcome).toBe("recorded");
            refunds += 1;
          }
        }
        // Pages of three: the CSV's own positions lead from page to page as the entries' do.
        const entries = await readPages(
          (after, limit) => ledger.page(range, after, limit),
          (row) => row,
          3,
        );
        const lines = await readPages((after, limit) => ledger.csvPage(range, after, limit), csvPositionOf, 3);
        expect(entries).toHaveLength(calls.length + refunds);
        // A payment carries its voucher's cumulative amount; a refund none, even of a payment over a channel.
        expect(entries.map((row) => [row.kind, row.cumulative])).toEqual(
          entries.map((row) => [row.kind, row.kind === "payment" ? cumulativeOf.get(row.nonce) : null]),
        );
        // And so does the report's list of the latest entries, newest first.
        const latest = (await ledger.entries(range, 100)).toReversed();
        expect(latest.map((row) => [row.kind, row.nonce, row.cumulative])).toEqual(
          entries.map((row) => [row.kind, row.nonce, row.cumulative]),
        );
        const expected = entries.map((row) => ledgerCsvLine(ledgerEntryOf(row))).join("");
        expect(csvLinesOf(lines, range)).toBe(expected);
        // Postgres: the export's one COPY, its rows finished by the server, in chunks cut anywhere.
        if (ledger.csvCopy) {
          const copied = Buffer.concat(await (await ledger.csvCopy(range)).toArray());
          expect(await finishCopy(copied, cutAt)).toBe(expected);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("refuses totals of a range that is not whole UTC days", async () => {
    await expect(ledger.totals({ ...RANGE, from: new Date(FIRST_DAY + 1) })).rejects.toThrow(RangeError);
  });
});

/** Each backend, as an empty database brought up to schema version 10: the book as an earlier build left it. */
const earlierBackends: [string, () => Promise<Database>][] = [
  ["PGlite", () => openMemoryPglite()],
  ["Postgres", async () => openPostgres(await postgres!.createDatabase())],
];

describe.skipIf(withoutPostgres)("the CSV export's COPY on Postgres", () => {
  let db: Database;
  let ledger: SettlementLedger;
  beforeAll(async () => {
    db = await openPostgres(await postgres!.createDatabase(), { maxConnections: 3 });
    await migrate(db);
    ledger = createSettlementLedger(db);
    // More than the sockets between Postgres and the service hold (about 70 MB): a COPY no one reads cannot finish.
    await insertSettled(db, 200_000, "copy-");
  }, 60_000);
  afterAll(async () => {
    await db?.close();
  });

  it("stops the statement and gives its connection back when the reader goes away, export after export", async () => {
    const running = async () =>
      (
        await db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'COPY (SELECT%' AND state = 'active'",
        )
      )[0]!.n;
    // More exports cut short than the pool has connections: none of them may keep one.
    for (let cut = 0; cut < 5; cut += 1) {
      const rows = await ledger.csvCopy!(RANGE);
      const [first] = (await once(rows, "data")) as [Buffer];
      expect(first.length).toBeGreaterThan(0);
      // Destroyed as a reader that stops does it, without an error.
      rows.destroy();
    }
    // Postgres ends a statement whose connection closed when it next writes to it: wait for that.
    while ((await running()) > 0) await new Promise((resolve) => setImmediate(resolve));
    expect(db.pool!.totalCount).toBeLessThanOrEqual(3);
    // A whole export still reads every row, on a connection the pool still has.
    const whole = Buffer.concat(await (await ledger.csvCopy!(RANGE)).toArray()).toString("utf8");
    expect(whole.split("\n")).toHaveLength(200_001);
    expect(await ledger.page(RANGE, undefined, 10)).toHaveLength(10);
  });
});

describe.each(earlierBackends.filter(([name]) => name !== "Postgres" || !withoutPostgres))(
  "a book written before the store kept totals, on %s",
  (_, open) => {
    it("is added up once by the migration that brings the totals, which then equal the entries", async () => {
      const db = await open();
      try {
        await migrateUpTo(db, 10);
        await insertSettled(db, 3000, "early-");
        // A claim still pending is no entry; refunds of two payments are.
        await db.query(
          `INSERT INTO settlements (payment_key, payer, nonce, asset, network, pay_to, amount, valid_before, status,
             route, method, token_id, price_point, request_id)
           VALUES ('pending-1', $1, $2, $3, $4, $1, 10000, now(), 'pending', '/intel', 'POST', 1, 'standard', 'p')`,
          [PAY_TO, hex32(), ASSET, NETWORK],
        );
        await db.query(
          `INSERT INTO refunds (transaction, log_index, payment_key, amount, refunded_at, book_key)
           VALUES ($1, 0, 'early-7', 3000, $2, 'refund:a'), ($3, 0, 'early-3000', 10000, $4, 'refund:b')`,
          [hex32(), new Date(FIRST_DAY + 2 * DAY_MS), hex32(), new Date(FIRST_DAY + 2 * DAY_MS + 1000)],
        );
        // The totals' step (11) and every step after it run, once.
        expect(await migrate(db)).toEqual(migrations.filter((m) => m.version >= 11).map((m) => m.version));
        const ledger = createSettlementLedger(db);
        const book = await readBook(ledger);
        expect(book.filter((row) => row.kind === "payment")).toHaveLength(3000);
        expect(book.filter((row) => row.kind === "refund")).toHaveLength(2);
        expect(await ledger.totals(RANGE)).toEqual(totalsOfEntries(book));
        // And the triggers keep them from then on.
        await settle(ledger, new Date(FIRST_DAY + DAY_MS), 1);
        expect(await ledger.totals(RANGE)).toEqual(totalsOfEntries(await readBook(ledger)));
      } finally {
        await db.close();
      }
    }, 60_000);
  },
);

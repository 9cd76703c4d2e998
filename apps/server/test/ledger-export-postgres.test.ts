/**
 * The CSV export of a service on Postgres, where it is one COPY of the window (docs/decisions.md, "The CSV export in
 * pieces"): read by csv-parse, it lists what the JSON Lines export lists; two run at once on an
 * instance and a third is refused until one ends; an export its reader leaves gives its connection back.
 */
import { once } from "node:events";
import { get, type IncomingMessage } from "node:http";
import { LEDGER_EXPORT_PATH, type LedgerEntry, ledgerEntrySchema, parseWorkText } from "@agent-tools/schema";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../src/store/database.js";
import { migrate } from "../src/store/migrations.js";
import { openPostgres } from "../src/store/postgres.js";
import { CSV_COPIES_AT_ONCE } from "../src/transports/http/routes/operator.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";
import { skipPostgres, startTestPostgres, type TestPostgres } from "./helpers/test-postgres.js";

const withoutPostgres = skipPostgres();
/**
 * Entries enough that an export is still being read when the next one starts: its 20 MB more than the socket
 * buffers between the service and the reader hold.
 */
const ENTRIES = 60_000;

describe.skipIf(withoutPostgres)("the CSV export on Postgres", () => {
  let postgres: TestPostgres;
  let db: Database;
  let t: PaidTestServer;
  beforeAll(async () => {
    postgres = (await startTestPostgres())!;
    db = await openPostgres(await postgres.createDatabase());
    await migrate(db);
    t = await startPaidTestServer({ db });
    // Settled payments of the last hour, written straight into the book; one request id a spreadsheet would run. Every
    // fifth is a call paid over a channel, with its voucher's cumulative amount, charged by its work under a 1.00
    // ceiling; every tenth not claimed yet.
    const asset = t.devnet.deployment.addresses.usdToken;
    const payer = t.devnet.deployment.accounts[3]!.address;
    await db.query(
      `INSERT INTO settlements (payment_key, payer, nonce, asset, network, pay_to, amount, valid_before, claimed_at,
         status, route, method, token_id, caller, price_point, transaction, settled_at, request_id, channel_id,
         cumulative, ceiling, work)
       SELECT 'export-' || i, $1, '0x' || lpad(to_hex(i), 64, '0'), $2, $3, $1, 10000, now(), now(), 'settled',
         '/intel', 'POST', 1, CASE WHEN i % 3 = 0 THEN $1 END, 'standard',
         CASE WHEN i % 10 = 0 THEN '' ELSE '0x' || lpad(to_hex(i), 64, '0') END,
         date_trunc('milliseconds', now()) - interval '1 hour' + i * interval '1 millisecond', CASE WHEN i = 7 THEN '=1+1' ELSE 'req-' || i END,
         CASE WHEN i % 5 = 0 THEN '0x' || lpad(to_hex(i), 64, '0') END, CASE WHEN i % 5 = 0 THEN i * 10000 END,
         CASE WHEN i % 5 = 0 THEN 1000000 END,
         CASE WHEN i % 5 = 0 THEN 'upstreamReads:0 itemsExamined:0 blocksScanned:0' END
       FROM generate_series(1, $4::int) AS i`,
      [payer.toLowerCase(), asset, `eip155:${t.devnet.l2.chainId}`, ENTRIES],
    );
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await postgres?.stop();
  });

  /** An export of the default window, signed in as the operator. */
  const open = async (format: "csv" | "jsonl") =>
    t.get(`${LEDGER_EXPORT_PATH}?format=${format}`, { "SIGN-IN-WITH-X": await t.signIn(0, LEDGER_EXPORT_PATH) });
  /** A CSV export on a connection of its own, which the reader closes when it goes away. */
  const openOwn = async () => {
    const req = get(`${t.server.url}${LEDGER_EXPORT_PATH}?format=csv`, {
      agent: false,
      headers: { "SIGN-IN-WITH-X": await t.signIn(0, LEDGER_EXPORT_PATH) },
    });
    const [res] = (await once(req, "response")) as [IncomingMessage];
    return res;
  };
  const exportOf = async (format: "csv" | "jsonl") => (await open(format)).text();
  /** Exports whose COPY Postgres is running. */
  const copiesRunning = async () =>
    (
      await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'COPY (SELECT%' AND state = 'active'",
      )
    )[0]!.n;

  it("lists what the JSON Lines export lists, as CSV a CSV reader takes", async () => {
    const [csv, jsonl] = await Promise.all([exportOf("csv"), exportOf("jsonl")]);
    const rows: Record<string, string>[] = parse(csv, { columns: true });
    const entries: LedgerEntry[] = jsonl
      .trimEnd()
      .split("\n")
      .map((line) => ledgerEntrySchema.parse(JSON.parse(line)));
    expect(rows).toHaveLength(ENTRIES);
    expect(csv.split("\r\n")).toHaveLength(ENTRIES + 2);
    expect(
      rows.map((row) => ({
        ...row,
        tokenId: Number(row.tokenId),
        caller: row.caller || null,
        cumulative: row.cumulative || null,
        work: row.work ? parseWorkText(row.work) : null,
      })),
    ).toEqual(
      // A request id a spreadsheet would run is written behind an apostrophe.
      entries.map(({ note, requestId, ...entry }) => ({
        ...entry,
        usd: "0.010000",
        requestId: requestId.startsWith("=") ? `'${requestId}` : requestId,
        note: note ?? "",
      })),
    );
    expect(rows[6]!.requestId).toBe("'=1+1");
    expect(entries[6]!.requestId).toBe("=1+1");
    expect(rows[2]!.caller).toBe(t.devnet.deployment.accounts[3]!.address);
    // A call over a channel: its cumulative amount after its transaction, which is empty until it is claimed.
    expect(rows[4]).toMatchObject({ transaction: `0x${"5".padStart(64, "0")}`, cumulative: "50000" });
    expect(rows[9]).toMatchObject({ transaction: "", cumulative: "100000" });
    // Its ceiling and work after it; an exact payment's ceiling is its amount, and its work empty.
    expect(rows[4]).toMatchObject({ ceiling: "1000000", work: "upstreamReads:0 itemsExamined:0 blocksScanned:0" });
    expect(rows[3]).toMatchObject({ ceiling: "10000", work: "" });
    expect(entries[4]!.work).toEqual({ upstreamReads: 0, itemsExamined: 0, blocksScanned: 0 });
    // Its empty transaction written as the CSV export writes an empty field, unquoted.
    const tail = `,0x${"a".padStart(64, "0")},,100000,1000000,upstreamReads:0 itemsExamined:0 blocksScanned:0,req-10,`;
    expect(csv.split("\r\n")[10]!.slice(-tail.length)).toBe(tail);
  });

  it("runs two at once on an instance, refuses a third until one ends, and gets its connection back", async () => {
    const running = await Promise.all(Array.from({ length: CSV_COPIES_AT_ONCE }, openOwn));
    for (const res of running) expect(res.statusCode).toBe(200);
    // Each has begun: its first bytes came, and the rest wait for a reader.
    for (const res of running) expect(((await once(res, "data")) as [Buffer])[0].length).toBeGreaterThan(0);

    const refused = await open("csv");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("10");
    const body = await refused.json();
    expect(body.error.code).toBe("rate_limited");
    expect(body.error.message).toMatch(/^2 CSV exports of the ledger are running on this instance/);

    // A reader that goes away ends its export: the next one is taken, and runs to its end.
    running[0]!.destroy();
    let next = await open("csv");
    while (next.status === 429) {
      await next.arrayBuffer();
      await new Promise((resolve) => setImmediate(resolve));
      next = await open("csv");
    }
    expect(next.status).toBe(200);
    expect((await next.text()).split("\r\n")).toHaveLength(ENTRIES + 2);
    // The other cut short too: Postgres stops its statement, and the service's connections are free again.
    running[1]!.destroy();
    while ((await copiesRunning()) > 0) await new Promise((resolve) => setImmediate(resolve));
    const [first, second] = await Promise.all([open("csv"), open("csv")]);
    expect([first.status, second.status]).toEqual([200, 200]);
    await Promise.all([first.arrayBuffer(), second.arrayBuffer()]);
  });
});

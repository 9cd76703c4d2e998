import type { Database } from "./database.js";

/**
 * Adds to the ledger's totals what a statement changed (version 11): `changes` selects (asset, network, day, route,
 * price_point, stripe, sign, amount), sign 1 for an entry written and -1 for one taken away; `count` and `sum` are the
 * totals' columns it adds to. Rows are upserted in key order, so two statements lock shared rows in the same order.
 */
const addToTotals = (count: "payments" | "refunds", sum: "amount" | "refunded", changes: string) =>
  `INSERT INTO ledger_totals AS t (asset, network, day, route, price_point, stripe, ${count}, ${sum})
    SELECT asset, network, day, route, price_point, stripe, sum(sign), sum(sign * amount)
    FROM (${changes}) changes
    GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(sign) <> 0 OR sum(sign * amount) <> 0
    ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (asset, network, day, route, price_point, stripe)
    DO UPDATE SET ${count} = t.${count} + excluded.${count}, ${sum} = t.${sum} + excluded.${sum}`;

/** The settled payments among `rows` (the table, or a trigger's transition table) as changes of the totals. */
const settledPaymentsIn = (rows: string, sign: 1 | -1) =>
  `SELECT lower(asset) AS asset, network, (settled_at AT TIME ZONE 'UTC')::date AS day, route, price_point,
      (hashtext(payment_key) & 7)::smallint AS stripe, ${sign} AS sign, amount
    FROM ${rows} WHERE status = 'settled'`;

/** The refunds among `rows`, with their payment's asset, route and price point, as changes of the totals. */
const refundsIn = (rows: string, sign: 1 | -1) =>
  `SELECT lower(s.asset) AS asset, s.network, (r.refunded_at AT TIME ZONE 'UTC')::date AS day, s.route,
      s.price_point, (hashtext(r.book_key) & 7)::smallint AS stripe, ${sign} AS sign, r.amount
    FROM ${rows} r JOIN settlements s ON s.payment_key = r.payment_key`;

/** Adds the channel events of `changes` (kind, sign, amount) to their kind's kept totals. */
const addToChannelTotals = (changes: string) =>
  `INSERT INTO channel_event_totals AS t (kind, events, amount)
    SELECT kind, sum(sign), sum(sign * amount) FROM (${changes}) c GROUP BY kind
    ON CONFLICT (kind) DO UPDATE SET events = t.events + excluded.events, amount = t.amount + excluded.amount`;

/** A trigger function running `statement`, and the statement-level trigger calling it after `event` on `table`. */
const totalsTrigger = (table: string, event: "INSERT" | "UPDATE" | "DELETE", statement: string) => {
  const name = `${table}_totals_${event.toLowerCase()}`;
  const transitions = {
    INSERT: "NEW TABLE AS new_rows",
    UPDATE: "OLD TABLE AS old_rows NEW TABLE AS new_rows",
    DELETE: "OLD TABLE AS old_rows",
  }[event];
  return [
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${statement}; RETURN NULL; END $$`,
    `CREATE TRIGGER ${name} AFTER ${event} ON ${table} REFERENCING ${transitions}
      FOR EACH STATEMENT EXECUTE FUNCTION ${name}()`,
  ];
};

/**
 * The store's schema, one versioned step at a time. A step is never edited once released: changes come as a
 * new step. Every statement runs on Postgres and on PGlite alike.
 */
export const migrations = [
  {
    version: 1,
    name: "settlement ledger",
    statements: [
      // One row per payment authorization (EIP-3009 payer + nonce), claimed before the call runs and marked
      // settled before its answer leaves. `pending` rows are calls in flight, or cut short (see reconcile).
      `CREATE TABLE settlements (
        payment_key text PRIMARY KEY,
        status text NOT NULL CHECK (status IN ('pending', 'settled')),
        route text NOT NULL,
        method text NOT NULL,
        token_id integer NOT NULL,
        payer text NOT NULL,
        nonce text NOT NULL,
        caller text,
        price_point text NOT NULL CHECK (price_point IN ('standard', 'discounted')),
        amount numeric(78, 0) NOT NULL CHECK (amount >= 0),
        asset text NOT NULL,
        network text NOT NULL,
        pay_to text NOT NULL,
        valid_before timestamptz NOT NULL,
        request_id text NOT NULL,
        transaction text,
        claimed_at timestamptz NOT NULL DEFAULT now(),
        settled_at timestamptz,
        CHECK (status = 'pending' OR (transaction IS NOT NULL AND settled_at IS NOT NULL))
      )`,
      "CREATE INDEX settlements_settled_at ON settlements (settled_at) WHERE status = 'settled'",
      "CREATE INDEX settlements_pending ON settlements (claimed_at) WHERE status = 'pending'",
    ],
  },
  {
    version: 2,
    name: "mission queue",
    statements: [
      // A mission is paid by the call that queued it; until that payment is settled it is not run, and if the
      // payment is given back (the call failed) the mission goes with it.
      `CREATE TABLE missions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        token_id integer NOT NULL,
        tool text NOT NULL,
        params jsonb NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
        caller text,
        requested_by text NOT NULL,
        payment_key text NOT NULL UNIQUE REFERENCES settlements (payment_key) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        run_at timestamptz NOT NULL,
        started_at timestamptz,
        finished_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        locked_by text,
        lease_until timestamptz,
        result jsonb,
        error jsonb
      )`,
      "CREATE INDEX missions_due ON missions (run_at) WHERE status IN ('queued', 'running')",
      "CREATE INDEX missions_by_token ON missions (token_id, created_at DESC)",
      // Every start of a mission, by attempt: the primary key refuses a second start of the same attempt.
      `CREATE TABLE mission_runs (
        mission_id uuid NOT NULL REFERENCES missions (id) ON DELETE CASCADE,
        attempt integer NOT NULL,
        instance text NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        outcome text,
        PRIMARY KEY (mission_id, attempt)
      )`,
    ],
  },
  {
    version: 3,
    name: "sign-in nonces, payer funds in flight",
    statements: [
      // A SIGN-IN-WITH-X nonce serves one call on any instance, across restarts (store/sign-in-nonces.ts).
      `CREATE TABLE sign_in_nonces (
        key text PRIMARY KEY,
        status text NOT NULL CHECK (status IN ('in_use', 'spent')),
        expires_at timestamptz NOT NULL
      )`,
      "CREATE INDEX sign_in_nonces_expiry ON sign_in_nonces (expires_at)",
      // The payer's claims still pending, summed when a new one is made: its balance must cover them all.
      "CREATE INDEX settlements_pending_by_payer ON settlements (payer, asset, network) WHERE status = 'pending'",
    ],
  },
  {
    version: 4,
    name: "shared rate limits",
    statements: [
      // The request counters of every instance on this database (rate-limiter-flexible's Postgres store, in its
      // own table layout): key = limit and client, points = calls in the window, expire = the window's end (ms).
      `CREATE TABLE rate_limits (
        key varchar(255) PRIMARY KEY,
        points integer NOT NULL DEFAULT 0,
        expire bigint
      )`,
    ],
  },
  {
    version: 5,
    name: "answers kept for payment identifiers",
    statements: [
      // x402's payment-identifier extension: a paid call that names an identifier keeps its answer with its
      // settlement, so a retry of the same payment and input gets it again (docs/decisions.md, "Paid once").
      "ALTER TABLE settlements ADD COLUMN payment_id text",
      "ALTER TABLE settlements ADD COLUMN request_hash text",
      "ALTER TABLE settlements ADD COLUMN answer jsonb",
      "ALTER TABLE settlements ADD COLUMN answered_at timestamptz",
      "CREATE UNIQUE INDEX settlements_payment_id ON settlements (payer, payment_id) WHERE payment_id IS NOT NULL",
      "CREATE INDEX settlements_answers ON settlements (answered_at) WHERE answer IS NOT NULL",
    ],
  },
  {
    version: 6,
    name: "A2A tasks",
    statements: [
      // The tasks of the A2A endpoint: a task waiting for payment is paid by a later message, which any instance may
      // receive (docs/architecture.md, "A2A"). A task waiting for payment is swept after a quarter of an hour,
      // others after a day (store/a2a-tasks.ts).
      `CREATE TABLE a2a_tasks (
        id text PRIMARY KEY,
        task jsonb NOT NULL,
        waiting boolean NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      "CREATE INDEX a2a_tasks_updated_at ON a2a_tasks (updated_at)",
    ],
  },
  {
    version: 7,
    name: "ledger book order",
    statements: [
      // The book is read page after page in (settled_at, payment_key) order (GET /operator/ledger/entries and
      // /export): an index in that order serves each page from where the last one ended.
      "CREATE INDEX settlements_book ON settlements (settled_at, payment_key) WHERE status = 'settled'",
    ],
  },
  {
    version: 8,
    name: "operator console sessions",
    statements: [
      // A Sign-In-With-X opens an hour's session of the operator console (store/operator-sessions.ts); the token's
      // digest only is kept.
      `CREATE TABLE operator_sessions (
        token_hash text PRIMARY KEY,
        address text NOT NULL,
        expires_at timestamptz NOT NULL
      )`,
      "CREATE INDEX operator_sessions_expiry ON operator_sessions (expires_at)",
    ],
  },
  {
    version: 9,
    name: "refunds",
    statements: [
      // Money the operator gave back for a settled payment: one transfer log of a refund transaction each, so a
      // transfer is booked once; `book_key` orders it in the book beside the payments (docs/decisions.md, "Refunds").
      `CREATE TABLE refunds (
        transaction text NOT NULL,
        log_index integer NOT NULL,
        payment_key text NOT NULL REFERENCES settlements (payment_key),
        amount numeric(78, 0) NOT NULL CHECK (amount > 0),
        refunded_at timestamptz NOT NULL,
        book_key text NOT NULL UNIQUE,
        note text,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (transaction, log_index)
      )`,
      "CREATE INDEX refunds_book ON refunds (refunded_at, book_key)",
      "CREATE INDEX refunds_payment ON refunds (payment_key)",
    ],
  },
  {
    version: 10,
    name: "a2a task claims",
    statements: [
      // The message that pays for a task waiting for payment, or declines it, claims the task first; only the
      // claim's holder writes it afterwards, so a cancel or a second payer on another instance cannot overwrite it
      // (store/a2a-tasks.ts; docs/decisions.md, "A2A tasks").
      "ALTER TABLE a2a_tasks ADD COLUMN claim text",
    ],
  },
  {
    version: 11,
    name: "ledger totals, the book by asset",
    statements: [
      // Totals of the book per UTC day, asset (lower case), network, route and price point, kept by the triggers
      // below in the transaction of every write to `settlements` and `refunds`, whatever makes it: the report reads
      // a window's totals without reading its entries. `stripe` spreads a busy day and route over eight rows, so that
      // instances settling at once seldom wait for one row's lock (docs/decisions.md, "Ledger totals and pages at ten
      // million entries").
      `CREATE TABLE ledger_totals (
        asset text NOT NULL,
        network text NOT NULL,
        day date NOT NULL,
        route text NOT NULL,
        price_point text NOT NULL,
        stripe smallint NOT NULL,
        payments bigint NOT NULL DEFAULT 0,
        amount numeric(78, 0) NOT NULL DEFAULT 0,
        refunds bigint NOT NULL DEFAULT 0,
        refunded numeric(78, 0) NOT NULL DEFAULT 0,
        PRIMARY KEY (asset, network, day, route, price_point, stripe)
      )`,
      ...totalsTrigger("settlements", "INSERT", addToTotals("payments", "amount", settledPaymentsIn("new_rows", 1))),
      ...totalsTrigger(
        "settlements",
        "UPDATE",
        addToTotals(
          "payments",
          "amount",
          `${settledPaymentsIn("new_rows", 1)} UNION ALL ${settledPaymentsIn("old_rows", -1)}`,
        ),
      ),
      ...totalsTrigger("settlements", "DELETE", addToTotals("payments", "amount", settledPaymentsIn("old_rows", -1))),
      ...totalsTrigger("refunds", "INSERT", addToTotals("refunds", "refunded", refundsIn("new_rows", 1))),
      ...totalsTrigger(
        "refunds",
        "UPDATE",
        addToTotals("refunds", "refunded", `${refundsIn("new_rows", 1)} UNION ALL ${refundsIn("old_rows", -1)}`),
      ),
      ...totalsTrigger("refunds", "DELETE", addToTotals("refunds", "refunded", refundsIn("old_rows", -1))),
      // What the book held before this step.
      addToTotals("payments", "amount", settledPaymentsIn("settlements", 1)),
      addToTotals("refunds", "refunded", refundsIn("refunds", 1)),
      // A page of the book is one range of this index: the asset and network as the ledger's range names them, then
      // book order from where the last page ended. It replaces the two indexes that began with the time alone.
      "CREATE INDEX settlements_book_by_asset ON settlements (lower(asset), network, settled_at, payment_key) WHERE status = 'settled'",
      "DROP INDEX settlements_book",
      "DROP INDEX settlements_settled_at",
    ],
  },
  {
    version: 12,
    name: "payment channels",
    statements: [
      // One row per x402 `batch-settlement` channel a payer opened to the service: its terms, what the chain said
      // of it when last read (balance, claimed, refund nonce, a withdrawal under way), what the service charged on it
      // and the payer's latest voucher, and the call holding it now (one at a time; docs/channels.md).
      `CREATE TABLE channels (
        channel_id text PRIMARY KEY,
        config jsonb NOT NULL,
        payer text NOT NULL,
        balance numeric(78, 0) NOT NULL DEFAULT 0 CHECK (balance >= 0),
        total_claimed numeric(78, 0) NOT NULL DEFAULT 0 CHECK (total_claimed >= 0),
        charged numeric(78, 0) NOT NULL DEFAULT 0 CHECK (charged >= 0),
        signed_max numeric(78, 0) NOT NULL DEFAULT 0 CHECK (signed_max >= charged),
        signature text,
        refund_nonce numeric(78, 0) NOT NULL DEFAULT 0,
        withdraw_requested_at bigint NOT NULL DEFAULT 0,
        held_by text,
        held_until timestamptz,
        synced_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      "CREATE INDEX channels_unclaimed ON channels (channel_id) WHERE charged > total_claimed",
      // What moved on chain for the channels: deposits, claims, sweeps to the payee and cooperative refunds, one row
      // per transaction and channel (a sweep names no channel).
      `CREATE TABLE channel_events (
        transaction text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('deposit', 'claim', 'sweep', 'refund')),
        channel_id text NOT NULL DEFAULT '',
        amount numeric(78, 0) NOT NULL CHECK (amount >= 0),
        asset text NOT NULL,
        network text NOT NULL,
        at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (transaction, kind, channel_id)
      )`,
      "CREATE INDEX channel_events_at ON channel_events (at)",
      // A paid call over a channel is an entry of the book like any other, naming its channel and the cumulative
      // amount charged on it once the call was paid; its transaction is the claim's, once claimed ('' until then).
      "ALTER TABLE settlements ADD COLUMN channel_id text",
      "ALTER TABLE settlements ADD COLUMN cumulative numeric(78, 0)",
      "CREATE INDEX settlements_channel ON settlements (channel_id, cumulative) WHERE channel_id IS NOT NULL",
      // Who sends the channels' claims now: one instance at a time, for a lease.
      `CREATE TABLE channel_claimer (
        id smallint PRIMARY KEY CHECK (id = 1),
        holder text,
        held_until timestamptz,
        scanned_block bigint NOT NULL DEFAULT 0
      )`,
      "INSERT INTO channel_claimer (id) VALUES (1)",
    ],
  },
  {
    version: 13,
    name: "channel event totals",
    statements: [
      // What the channels' deposits, claims, sweeps and refunds moved, per kind, kept by the triggers below: the
      // report and the metrics read four rows, where a sum over `channel_events` grows with every claim pass (a row
      // per claim and channel; docs/decisions.md, "Channel totals kept").
      `CREATE TABLE channel_event_totals (
        kind text PRIMARY KEY,
        events bigint NOT NULL DEFAULT 0,
        amount numeric(78, 0) NOT NULL DEFAULT 0
      )`,
      ...totalsTrigger("channel_events", "INSERT", addToChannelTotals("SELECT kind, 1 AS sign, amount FROM new_rows")),
      ...totalsTrigger(
        "channel_events",
        "UPDATE",
        addToChannelTotals(
          "SELECT kind, 1 AS sign, amount FROM new_rows UNION ALL SELECT kind, -1 AS sign, amount FROM old_rows",
        ),
      ),
      ...totalsTrigger("channel_events", "DELETE", addToChannelTotals("SELECT kind, -1 AS sign, amount FROM old_rows")),
      // What the table held before this step.
      addToChannelTotals("SELECT kind, 1 AS sign, amount FROM channel_events"),
    ],
  },
  {
    version: 14,
    name: "metered charges",
    statements: [
      // A call paid over a metered scheme is charged by its work, up to the price point its payment signed: the
      // ceiling (null on rows written before: then the amount itself) and the counted work as workCsvText writes it.
      "ALTER TABLE settlements ADD COLUMN ceiling numeric(78, 0)",
      "ALTER TABLE settlements ADD COLUMN work text",
    ],
  },
] as const satisfies readonly { version: number; name: string; statements: readonly string[] }[];

export const LATEST_MIGRATION = migrations.at(-1)!.version;

/** Thrown when the database was migrated by a newer build than this one. */
export class DatabaseTooNewError extends Error {
  constructor(readonly version: number) {
    super(
      `The database is at schema version ${version}; this build knows up to ${LATEST_MIGRATION}. ` +
        "Run the newer build, or point DATABASE_URL / DATA_DIR at another database.",
    );
    this.name = "DatabaseTooNewError";
  }
}

/**
 * Brings the database up to the latest step, in one transaction. An advisory lock makes instances starting
 * together take turns, so each step runs once. Returns the versions applied now (empty when up to date).
 */
export async function migrate(db: Database): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(72610001)");
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`,
    );
    const rows = await tx.query<{ version: number }>("SELECT version FROM schema_migrations");
    const done = new Set(rows.map((row) => row.version));
    const newest = Math.max(0, ...done);
    if (newest > LATEST_MIGRATION) throw new DatabaseTooNewError(newest);
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      for (const statement of migration.statements) await tx.query(statement);
      await tx.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
    }
    return applied;
  });
}

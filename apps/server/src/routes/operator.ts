import {
  formatUsd,
  LEDGER_ENTRIES_PATH,
  LEDGER_EXPORT_PATH,
  LEDGER_PATH,
  type LedgerEntry,
  type LedgerPage,
  type LedgerReport,
  ledgerCsvHeader,
  ledgerCsvLine,
  ledgerExportQuerySchema,
  ledgerPageQuerySchema,
  ledgerPageSchema,
  ledgerQuerySchema,
  ledgerReportSchema,
  queryToInput,
  safeParseRequest,
  siwxChallenge,
} from "@agent-tools/schema";
import { type Request, Router } from "express";
import type { Logger } from "pino";
import { getAddress } from "viem";
import type { z } from "zod";
import { HttpError, validationError } from "../http/errors.js";
import type { PaymentService } from "../payment/payment-service.js";
import { SIGN_IN_NONCE_RETENTION_MS, verifySignIn } from "../payment/verify-sign-in.js";
import type { LedgerRange, LedgerTotals } from "../store/settlement-ledger.js";
import { cursorOf, ledgerEntryOf, positionOf, writeBook } from "./ledger-book.js";

const DAY_MS = 86_400_000;
const utcDay = (date: Date) => date.toISOString().slice(0, 10);

function total(rows: { payments: number; amount: string }[]) {
  const payments = rows.reduce((n, row) => n + row.payments, 0);
  const amount = rows.reduce((sum, row) => sum + BigInt(row.amount), 0n).toString();
  return { payments, amount, usd: formatUsd(amount) };
}

/** Groups day, route and price point totals by some of the three, in the order the rows come. */
function groupBy<K extends "day" | "route" | "pricePoint">(rows: LedgerTotals[], keys: K[]) {
  const groups = new Map<string, { fields: Pick<LedgerTotals, K>; members: LedgerTotals[] }>();
  for (const row of rows) {
    const id = keys.map((key) => row[key]).join("\u0000");
    const group = groups.get(id) ?? {
      fields: Object.fromEntries(keys.map((key) => [key, row[key]])) as never,
      members: [],
    };
    group.members.push(row);
    groups.set(id, group);
  }
  return [...groups.values()].map(({ fields, members }) => ({ ...fields, ...total(members) }));
}

/**
 * The report's headline: the days the payments were settled on ("on 2026-11-25", "from 2026-11-20 to 2026-11-25"),
 * not the window asked for, which the report gives in `from` and `to` (and names only when it holds no payment).
 */
function ledgerBrief(
  sum: LedgerReport["total"],
  busiest: LedgerReport["byRoute"][number] | undefined,
  byDay: LedgerReport["byDay"],
  window: { from: string; to: string },
  unconfirmed: number,
): string {
  if (sum.payments === 0) return `No settled payments from ${window.from} to ${window.to}.`;
  const days = byDay.map((d) => d.day).sort();
  const first = days[0]!;
  const last = days[days.length - 1]!;
  const when = first === last ? `on ${first}` : `from ${first} to ${last}`;
  return (
    `${sum.payments} settled payment${sum.payments === 1 ? "" : "s"} ${when}, ${sum.usd} USD` +
    (busiest ? `; busiest route ${busiest.route} (${busiest.payments}, ${busiest.usd} USD)` : "") +
    (unconfirmed > 0 ? `; ${unconfirmed} settlement${unconfirmed === 1 ? "" : "s"} awaiting confirmation.` : ".")
  );
}

/** The window a query names: its days (30 up to today by default) and the ledger range they cover. */
function windowOf(query: { from?: string | undefined; to?: string | undefined }, payments: PaymentService) {
  const to = query.to ?? utcDay(payments.now());
  const from = query.from ?? utcDay(new Date(Date.parse(`${to}T00:00:00Z`) - 29 * DAY_MS));
  const range: LedgerRange = {
    from: new Date(`${from}T00:00:00Z`),
    to: new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS),
    asset: payments.terms.asset,
    network: payments.terms.network,
  };
  return { from, to, range };
}

/**
 * The operator's views, each signed in (`SIGN-IN-WITH-X`, made for its own path) as the operator address and never
 * paid (docs/api.md, "The operator's ledger"):
 * - `GET /operator/ledger`: totals per route, day and price point, and the latest entries;
 * - `GET /operator/ledger/entries`: every entry of a window, page by page, oldest first;
 * - `GET /operator/ledger/export`: every entry of a window as CSV or JSON Lines, streamed.
 */
export function operatorRoutes(deps: { payments: PaymentService; operator: string; logger: Logger }): Router {
  const router = Router();
  const { payments, logger } = deps;
  const operator = getAddress(deps.operator);
  const challenge = siwxChallenge("agent-tools operator", payments.signInChains);

  /** The query, validated, from a request signed in as the operator for `path`; else the refusal, thrown. */
  async function operatorQuery<S extends z.ZodObject>(req: Request, path: string, schema: S): Promise<z.output<S>> {
    const parsed = safeParseRequest(schema, queryToInput(schema, req.query as Record<string, string>));
    if (!parsed.success) throw validationError(parsed.error, "query");

    const header = req.get("sign-in-with-x");
    if (header === undefined) {
      throw new HttpError(
        "sign_in_required",
        "Sign in as the operator with a SIGN-IN-WITH-X header (agent-tools ledger does it with the operator key).",
        [{ field: "SIGN-IN-WITH-X", message: "missing" }],
        { "WWW-Authenticate": challenge },
      );
    }
    const signIn = await verifySignIn(header, payments, path);
    if (!signIn.ok) {
      throw new HttpError(
        "sign_in_required",
        `The sign-in was refused: ${signIn.reason}.`,
        [{ field: "SIGN-IN-WITH-X", message: signIn.reason }],
        { "WWW-Authenticate": challenge },
      );
    }
    if (signIn.address !== operator) {
      throw new HttpError("not_operator", `${signIn.address} is not the operator of this service.`, [
        { field: "SIGN-IN-WITH-X", message: "not the operator address" },
      ]);
    }
    // A sign-in reads the ledger once, on any instance and across restarts.
    const nonce = await payments.signIns.claim(
      signIn.address,
      signIn.nonce,
      new Date(payments.now().getTime() + SIGN_IN_NONCE_RETENTION_MS),
    );
    if (nonce !== "claimed") {
      throw new HttpError("sign_in_required", "This sign-in was already used; sign in again.", [
        { field: "SIGN-IN-WITH-X", message: "nonce already used" },
      ]);
    }
    await payments.signIns.spend(signIn.address, signIn.nonce);
    return parsed.data;
  }

  router.get(LEDGER_PATH, async (req, res) => {
    const query = await operatorQuery(req, LEDGER_PATH, ledgerQuerySchema);
    const { from, to, range } = windowOf(query, payments);
    const [rows, entries, unconfirmed] = await Promise.all([
      payments.ledger.totals(range),
      payments.ledger.entries(range, query.limit),
      payments.ledger.pendingCount(),
    ]);
    const byRoute = groupBy(rows, ["route"]).sort((a, b) => b.payments - a.payments);
    const sum = total(rows);
    const byDay = groupBy(rows, ["day"]);
    const report: LedgerReport = {
      generatedAt: payments.now().toISOString(),
      from,
      to,
      asset: getAddress(payments.terms.asset),
      network: payments.terms.network,
      total: sum,
      byRoute,
      byDay,
      byDayAndRoute: groupBy(rows, ["day", "route"]),
      byDayRouteAndPricePoint: groupBy(rows, ["day", "route", "pricePoint"]),
      unconfirmed,
      entries: entries.map(ledgerEntryOf),
      brief: ledgerBrief(sum, byRoute[0], byDay, { from, to }, unconfirmed),
    };
    res.json(ledgerReportSchema.parse(report));
  });

  router.get(LEDGER_ENTRIES_PATH, async (req, res) => {
    const query = await operatorQuery(req, LEDGER_ENTRIES_PATH, ledgerPageQuerySchema);
    const after = query.after === undefined ? undefined : positionOf(query.after);
    const { from, to, range } = windowOf(query, payments);
    const rows = await payments.ledger.page(range, after, query.limit);
    const last = rows.at(-1);
    const page: LedgerPage = {
      from,
      to,
      entries: rows.map(ledgerEntryOf),
      next: last && rows.length === query.limit ? cursorOf(last) : null,
    };
    res.json(ledgerPageSchema.parse(page));
  });

  router.get(LEDGER_EXPORT_PATH, async (req, res) => {
    const query = await operatorQuery(req, LEDGER_EXPORT_PATH, ledgerExportQuerySchema);
    const { from, to, range } = windowOf(query, payments);
    res
      .status(200)
      .type(query.format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8")
      .set("Content-Disposition", `attachment; filename="ledger-${from}-${to}.${query.format}"`);
    const line = query.format === "csv" ? ledgerCsvLine : (entry: LedgerEntry) => `${JSON.stringify(entry)}\n`;
    try {
      if (query.format === "csv") res.write(ledgerCsvHeader);
      await writeBook({
        out: res,
        readPage: (after, limit) => payments.ledger.page(range, after, limit),
        render: (rows) => rows.map((row) => line(ledgerEntryOf(row))).join(""),
      });
      res.end();
    } catch (error) {
      // The answer has begun: cut it, so that the caller sees a broken transfer and not a short book.
      logger.error({ err: error, reqId: req.id }, "ledger export failed");
      res.destroy();
    }
  });
  return router;
}

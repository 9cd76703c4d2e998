import {
  formatUsd,
  LEDGER_PATH,
  type LedgerReport,
  ledgerQuerySchema,
  ledgerReportSchema,
  queryToInput,
  safeParseRequest,
  siwxChallenge,
} from "@agent-tools/schema";
import { Router } from "express";
import { getAddress } from "viem";
import { HttpError, validationError } from "../http/errors.js";
import type { PaymentService } from "../payment/payment-service.js";
import { SIGN_IN_NONCE_RETENTION_MS, verifySignIn } from "../payment/verify-sign-in.js";
import type { LedgerTotals } from "../store/settlement-ledger.js";

const DAY_MS = 86_400_000;
const utcDay = (date: Date) => date.toISOString().slice(0, 10);

function total(rows: { payments: number; amount: string }[]) {
  const payments = rows.reduce((n, row) => n + row.payments, 0);
  const amount = rows.reduce((sum, row) => sum + BigInt(row.amount), 0n).toString();
  return { payments, amount, usd: formatUsd(amount) };
}

/** Groups day-and-route totals by one of the two. */
function groupBy(rows: LedgerTotals[], key: "day" | "route") {
  const groups = new Map<string, LedgerTotals[]>();
  for (const row of rows) groups.set(row[key], [...(groups.get(row[key]) ?? []), row]);
  return [...groups].map(([value, members]) => ({ [key]: value, ...total(members) }));
}

/**
 * The operator's views. `GET /operator/ledger`: totals of settled payments per route and per UTC day, and the
 * latest entries. Signed in (`SIGN-IN-WITH-X`) as the operator address; never paid.
 */
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

export function operatorRoutes(deps: { payments: PaymentService; operator: string }): Router {
  const router = Router();
  const { payments } = deps;
  const operator = getAddress(deps.operator);
  const challenge = siwxChallenge("agent-tools operator", payments.signInChains);

  router.get(LEDGER_PATH, async (req, res) => {
    const parsed = safeParseRequest(
      ledgerQuerySchema,
      queryToInput(ledgerQuerySchema, req.query as Record<string, string>),
    );
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
    const signIn = await verifySignIn(header, payments, LEDGER_PATH);
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

    const now = payments.now();
    const to = parsed.data.to ?? utcDay(now);
    const from = parsed.data.from ?? utcDay(new Date(Date.parse(`${to}T00:00:00Z`) - 29 * DAY_MS));
    const range = {
      from: new Date(`${from}T00:00:00Z`),
      to: new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS),
      asset: payments.terms.asset,
      network: payments.terms.network,
    };
    const [rows, entries, unconfirmed] = await Promise.all([
      payments.ledger.totals(range),
      payments.ledger.entries(range, parsed.data.limit),
      payments.ledger.pendingCount(),
    ]);
    const byRoute = groupBy(rows, "route").sort((a, b) => b.payments - a.payments) as LedgerReport["byRoute"];
    const sum = total(rows);
    const byDay = groupBy(rows, "day") as LedgerReport["byDay"];
    const report: LedgerReport = {
      generatedAt: now.toISOString(),
      from,
      to,
      asset: getAddress(payments.terms.asset),
      network: payments.terms.network,
      total: sum,
      byRoute,
      byDay,
      byDayAndRoute: rows.map((row) => ({ ...row, usd: formatUsd(row.amount) })),
      unconfirmed,
      entries: entries.map((entry) => ({
        ...entry,
        payer: getAddress(entry.payer),
        caller: entry.caller ? getAddress(entry.caller) : null,
        asset: getAddress(entry.asset),
        settledAt: entry.settledAt.toISOString(),
      })),
      brief: ledgerBrief(sum, byRoute[0], byDay, { from, to }, unconfirmed),
    };
    res.json(ledgerReportSchema.parse(report));
  });
  return router;
}

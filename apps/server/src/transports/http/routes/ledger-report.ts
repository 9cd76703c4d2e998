/**
 * The ledger's report of a window of UTC days (`GET /operator/ledger`, and the operator console's overview): totals
 * per route, day and price point, the latest entries, and a brief headlined by the days paid on.
 */
import { formatUsd, type LedgerReport } from "@agent-tools/schema";
import { getAddress } from "viem";
import type { PaymentService } from "../../../paid-call/payment-service.js";
import type { ChannelTotals } from "../../../store/channels.js";
import type { LedgerRange, LedgerTotals } from "../../../store/settlement-ledger.js";
import { ledgerEntryOf } from "./ledger-book.js";

const DAY_MS = 86_400_000;
const utcDay = (date: Date) => date.toISOString().slice(0, 10);

/** An amount that refunds can make negative, in USD to the cent. */
const signedUsd = (amount: bigint) =>
  amount < 0n ? `-${formatUsd((-amount).toString())}` : formatUsd(amount.toString());

/** The sum of totals: payments, what they paid, refunds, what those gave back, and the difference. */
function total(rows: { payments: number; amount: string; refunds: number; refunded: string }[]) {
  const payments = rows.reduce((n, row) => n + row.payments, 0);
  const amount = rows.reduce((sum, row) => sum + BigInt(row.amount), 0n);
  const refunds = rows.reduce((n, row) => n + row.refunds, 0);
  const refunded = rows.reduce((sum, row) => sum + BigInt(row.refunded), 0n);
  return {
    payments,
    amount: amount.toString(),
    usd: formatUsd(amount.toString()),
    refunds,
    refunded: refunded.toString(),
    net: (amount - refunded).toString(),
    netUsd: signedUsd(amount - refunded),
  };
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
  if (sum.payments === 0 && sum.refunds === 0) return `No settled payments from ${window.from} to ${window.to}.`;
  const days = byDay.map((d) => d.day).sort();
  const first = days[0]!;
  const last = days[days.length - 1]!;
  const when = first === last ? `on ${first}` : `from ${first} to ${last}`;
  return (
    `${sum.payments} settled payment${sum.payments === 1 ? "" : "s"} ${when}, ${sum.usd} USD` +
    (sum.refunds > 0
      ? ` (${sum.refunds} refund${sum.refunds === 1 ? "" : "s"} gave back ${formatUsd(sum.refunded)} USD: net ${sum.netUsd} USD)`
      : "") +
    (busiest ? `; busiest route ${busiest.route} (${busiest.payments}, ${busiest.usd} USD)` : "") +
    (unconfirmed > 0 ? `; ${unconfirmed} settlement${unconfirmed === 1 ? "" : "s"} awaiting confirmation.` : ".")
  );
}

/** The window a query names: its days (30 up to today by default) and the ledger range they cover. */
export function windowOf(query: { from?: string | undefined; to?: string | undefined }, payments: PaymentService) {
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

/** The channels' money as the report gives it: each amount in base units and in USD. */
function channelTotalsOf(totals: ChannelTotals): NonNullable<LedgerReport["channels"]> {
  const money = (amount: bigint) => ({ amount: amount.toString(), usd: formatUsd(amount.toString()) });
  return {
    channels: totals.channels,
    deposited: money(totals.deposited),
    charged: money(totals.charged),
    claimed: money(totals.claimed),
    swept: money(totals.swept),
    refunded: money(totals.refunded),
    unclaimed: money(totals.unclaimed),
  };
}

/** The report of a window: totals per route, day and price point, and the latest `limit` entries. */
export async function ledgerReport(
  payments: PaymentService,
  query: { from?: string | undefined; to?: string | undefined; limit: number },
): Promise<LedgerReport> {
  const { from, to, range } = windowOf(query, payments);
  const [rows, entries, unconfirmed, channels] = await Promise.all([
    payments.ledger.totals(range),
    payments.ledger.entries(range, query.limit),
    payments.ledger.pendingCount(),
    payments.channels?.totals(),
  ]);
  const byRoute = groupBy(rows, ["route"]).sort((a, b) => b.payments - a.payments);
  const sum = total(rows);
  const byDay = groupBy(rows, ["day"]);
  return {
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
    ...(channels ? { channels: channelTotalsOf(channels) } : {}),
    brief: ledgerBrief(sum, byRoute[0], byDay, { from, to }, unconfirmed),
  };
}

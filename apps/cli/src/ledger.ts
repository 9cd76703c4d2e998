import { type LedgerReport, type RecordedRefund, unitsToUsd } from "@agent-tools/sdk/contracts";
import { type Style, table } from "./render.js";

const shortHash = (hash: string) => `${hash.slice(0, 10)}…${hash.slice(-4)}`;

/** `agent-tools ledger`: the brief, the total, tables per route and per day, and the latest entries. */
export function renderLedger(report: LedgerReport, style: Style): string {
  const { total } = report;
  // Refund columns only when the window holds refunds: most books have none.
  const refundColumns = (t: LedgerReport["total"]) => (total.refunds > 0 ? { refunds: t.refunds, net: t.netUsd } : {});
  const parts = [
    report.brief,
    `${style.bold("total")} ${total.payments} payment${total.payments === 1 ? "" : "s"} · ${total.usd} USD${
      total.refunds > 0
        ? ` · ${total.refunds} refund${total.refunds === 1 ? "" : "s"} -${unitsToUsd(total.refunded)} USD · net ${total.netUsd} USD`
        : ""
    } ${style.dim(
      `· asked for ${report.from} to ${report.to} · ${report.network}`,
    )}${report.unconfirmed > 0 ? `\n${style.yellow(`${report.unconfirmed} settlement(s) sent, not yet confirmed`)}` : ""}`,
    `${style.bold("by route")}\n${table(
      report.byRoute.map((r) => ({ route: r.route, payments: r.payments, usd: r.usd, ...refundColumns(r) })),
      style,
    )}`,
    `${style.bold("by day")}\n${table(
      report.byDay.map((d) => ({ day: d.day, payments: d.payments, usd: d.usd, ...refundColumns(d) })),
      style,
    )}`,
    `${style.bold(`latest entries (${report.entries.length})`)}\n${table(
      report.entries.map((e) => ({
        settledAt: e.settledAt,
        kind: e.kind,
        route: `${e.method} ${e.route}`,
        tokenId: e.tokenId,
        payer: e.payer,
        price: e.pricePoint,
        usd: `${e.kind === "refund" ? "-" : ""}${unitsToUsd(e.amount)}`,
        transaction: shortHash(e.transaction),
      })),
      style,
      8,
    )}`,
  ];
  return `${parts.filter(Boolean).join("\n\n")}\n`;
}

/** `agent-tools refund`: the service's brief, the refund as the ledger lists it, and what is left of the payment. */
export function renderRefund(recorded: RecordedRefund, style: Style): string {
  const { refund, payment } = recorded;
  const rows: [string, string][] = [
    ["refund", `${unitsToUsd(refund.amount)} USD to ${refund.payer} for ${refund.method} ${refund.route}`],
    ["tx", `${refund.transaction} (${refund.network}), mined ${refund.settledAt}`],
    [
      "payment",
      `${unitsToUsd(payment.amount)} USD paid · ${unitsToUsd(payment.refunded)} USD refunded · ${unitsToUsd(payment.remaining)} USD left`,
    ],
  ];
  if (refund.note) rows.push(["note", refund.note]);
  return `${recorded.brief}\n\n${rows.map(([key, value]) => `${style.dim(key.padEnd(8))} ${value}`).join("\n")}\n`;
}

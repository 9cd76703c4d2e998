import { type LedgerReport, unitsToUsd } from "@agent-tools/sdk/contracts";
import { type Style, table } from "./render.js";

const shortHash = (hash: string) => `${hash.slice(0, 10)}…${hash.slice(-4)}`;

/** `agent-tools ledger`: the brief, the total, tables per route and per day, and the latest entries. */
export function renderLedger(report: LedgerReport, style: Style): string {
  const { total } = report;
  const parts = [
    report.brief,
    `${style.bold("total")} ${total.payments} payment${total.payments === 1 ? "" : "s"} · ${total.usd} USD ${style.dim(
      `· asked for ${report.from} to ${report.to} · ${report.network}`,
    )}${report.unconfirmed > 0 ? `\n${style.yellow(`${report.unconfirmed} settlement(s) sent, not yet confirmed`)}` : ""}`,
    `${style.bold("by route")}\n${table(
      report.byRoute.map((r) => ({ route: r.route, payments: r.payments, usd: r.usd })),
      style,
    )}`,
    `${style.bold("by day")}\n${table(
      report.byDay.map((d) => ({ day: d.day, payments: d.payments, usd: d.usd })),
      style,
    )}`,
    `${style.bold(`latest entries (${report.entries.length})`)}\n${table(
      report.entries.map((e) => ({
        settledAt: e.settledAt,
        route: `${e.method} ${e.route}`,
        tokenId: e.tokenId,
        payer: e.payer,
        price: e.pricePoint,
        usd: unitsToUsd(e.amount),
        transaction: shortHash(e.transaction),
      })),
      style,
    )}`,
  ];
  return `${parts.filter(Boolean).join("\n\n")}\n`;
}

/** Refunds booked in the ledger, one transfer at a time (docs/decisions.md, "Refunds"). */
import type { Database, Queryable } from "../database.js";
import { BOOK_COLUMNS, bookRowOf, REFUND_COLUMNS, REFUNDS_FROM, refundBookKey } from "./book-sql.js";
import type { BookRecord, RecordRefundResult, RefundToRecord } from "./types.js";

/** Books a refund of a settled payment, once per transfer and never past what it paid (`SettlementLedger.recordRefund`). */
export async function recordRefund(db: Database, refund: RefundToRecord): Promise<RecordRefundResult> {
  const transaction = refund.transaction.toLowerCase();
  const booked = async (tx: Queryable, where: string, params: unknown[]) => {
    const [row] = await tx.queryArrays<[...BookRecord, asset: string, network: string]>(
      `SELECT ${BOOK_COLUMNS}, book.asset, book.network
         FROM (SELECT ${REFUND_COLUMNS}, s.asset, s.network ${REFUNDS_FROM} WHERE ${where}) book`,
      params,
    );
    return row ? bookRowOf(row, { asset: row[17], network: row[18] }) : undefined;
  };
  return db.transaction(async (tx): Promise<RecordRefundResult> => {
    // One refund of a payment at a time, across instances: the sum below then sees every refund booked before.
    await tx.query("SELECT pg_advisory_xact_lock(72610003, hashtext($1))", [refund.paymentKey]);
    const refundedOf = async () => {
      const [sum] = await tx.query<{ amount: string }>(
        "SELECT coalesce(sum(amount), 0)::text AS amount FROM refunds WHERE payment_key = $1",
        [refund.paymentKey],
      );
      return BigInt(sum?.amount ?? "0");
    };
    const already = await booked(tx, "r.transaction = $1 AND r.payment_key = $2", [transaction, refund.paymentKey]);
    if (already) return { outcome: "already", refund: already, refunded: await refundedOf() };
    const taken = new Set(
      (
        await tx.query<{ log_index: number }>("SELECT log_index FROM refunds WHERE transaction = $1", [transaction])
      ).map((row) => row.log_index),
    );
    const transfer = refund.transfers.find((t) => !taken.has(t.logIndex));
    if (!transfer) return { outcome: "taken" };
    const refunded = await refundedOf();
    const remaining = refund.paid - refunded;
    if (transfer.amount > remaining) return { outcome: "exceeds", amount: transfer.amount, remaining };
    const key = refundBookKey(transaction, transfer.logIndex);
    const inserted = await tx.query(
      `INSERT INTO refunds (transaction, log_index, payment_key, amount, refunded_at, book_key, note)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING book_key`,
      [
        transaction,
        transfer.logIndex,
        refund.paymentKey,
        transfer.amount.toString(),
        refund.refundedAt,
        key,
        refund.note,
      ],
    );
    // Booked for another payment in the meantime (its lock is not this one's).
    if (inserted.length === 0) return { outcome: "taken" };
    const recorded = await booked(tx, "r.book_key = $1", [key]);
    return { outcome: "recorded", refund: recorded!, refunded: refunded + transfer.amount };
  });
}

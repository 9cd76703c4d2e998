/**
 * The ledger, durable record of every paid call's payment and of refunds: the interface the service uses
 * (./ledger/types.ts) and its one implementation on the store's database, a named function per operation in
 * ./ledger/ (claims, the book, refunds).
 */
import type { Database } from "./database.js";
import { bookEntries, bookPageRows, csvBookPage, ledgerTotals } from "./ledger/book.js";
import { CSV_COPY_SETTINGS, csvCopyStatement } from "./ledger/book-sql.js";
import {
  claimPayment,
  forgetAnswers,
  identifiedPayment,
  keepAnswer,
  markSettled,
  pendingByAge,
  pendingClaims,
  pendingCount,
  releaseClaim,
  settledPayment,
} from "./ledger/claims.js";
import { recordRefund } from "./ledger/refunds.js";
import type { SettlementLedger } from "./ledger/types.js";

export type * from "./ledger/types.js";

/**
 * How long an answer is kept for its identifier: a retry comes seconds after the answer was lost, or minutes after
 * a client restarts; an hour covers both, and keeps the ledger from holding every answer ever given.
 */
export const ANSWER_RETENTION_MS = 60 * 60 * 1000;

export function createSettlementLedger(db: Database): SettlementLedger {
  return {
    claim: (claim) => claimPayment(db, claim),
    release: (paymentKey) => releaseClaim(db, paymentKey),
    markSettled: (paymentKey, transaction, settledAt, answer, charge) =>
      markSettled(db, paymentKey, transaction, settledAt, answer, charge),
    identified: (payer, paymentId) => identifiedPayment(db, payer, paymentId),
    keepAnswer: (paymentKey, answer, at) => keepAnswer(db, paymentKey, answer, at),
    forgetAnswers: (before) => forgetAnswers(db, before),
    pending: (options) => pendingClaims(db, options),
    entries: (range, limit) => bookEntries(db, range, limit),
    page: (range, after, limit) => bookPageRows(db, range, after, limit),
    csvPage: (range, after, limit) => csvBookPage(db, range, after, limit),
    ...(db.copyOut ? { csvCopy: (range) => db.copyOut!(csvCopyStatement(range), CSV_COPY_SETTINGS) } : {}),
    totals: (range) => ledgerTotals(db, range),
    settledPayment: (paymentKey) => settledPayment(db, paymentKey),
    recordRefund: (refund) => recordRefund(db, refund),
    pendingByAge: (since) => pendingByAge(db, since),
    pendingCount: () => pendingCount(db),
  };
}

import { pipeline } from "node:stream/promises";
import {
  LEDGER_ENTRIES_PATH,
  LEDGER_EXPORT_PATH,
  LEDGER_PATH,
  type LedgerPage,
  ledgerCsvHeader,
  ledgerExportQuerySchema,
  ledgerPageQuerySchema,
  ledgerQuerySchema,
  ledgerReportSchema,
  queryToInput,
  REFUNDS_PATH,
  type RecordedRefund,
  recordedRefundSchema,
  refundRequestSchema,
  safeParseRequest,
  unitsToUsd as usd,
} from "@agent-tools/schema";
import { type Request, Router } from "express";
import type { Logger } from "pino";
import type { z } from "zod";
import { ServiceError, validationError } from "../../../errors/service-error.js";
import type { PaymentService } from "../../../paid-call/payment-service.js";
import { type RecordRefund, RefundRefusal } from "../../../schemes/exact/record-refund.js";
import {
  checksumOf,
  csvLinesOf,
  csvPositionOf,
  cursorOf,
  ledgerEntryOf,
  positionOf,
  writeBook,
} from "./ledger-book.js";
import { CsvLinesFromCopy } from "./ledger-csv-copy.js";
import { ledgerReport, windowOf } from "./ledger-report.js";
import { createOperatorAuth } from "./operator-auth.js";
import { type OperatorConsoleDeps, operatorConsoleRoutes } from "./operator-console.js";

/** CSV exports that may run at once on one instance on Postgres, each a COPY on a connection of its own. */
export const CSV_COPIES_AT_ONCE = 2;
/** What a refused export is told to wait, in seconds: an export of a million entries takes about ten. */
const CSV_COPY_RETRY_AFTER_S = 10;

/**
 * The operator's views, each signed in (`SIGN-IN-WITH-X`, made for its own path) as the operator address and never
 * paid (docs/api.md, "The operator's ledger"):
 * - `GET /operator/ledger`: totals per route, day and price point, and the latest entries;
 * - `GET /operator/ledger/entries`: every entry of a window, page by page, oldest first;
 * - `GET /operator/ledger/export`: every entry of a window as CSV or JSON Lines, streamed;
 * - `POST /operator/refunds`: books a refund the operator made, as the chain shows it (schemes/exact/record-refund.ts).
 */
export function operatorRoutes(deps: {
  payments: PaymentService;
  operator: string;
  logger: Logger;
  publicUrl: string;
  recordRefund?: RecordRefund;
  console?: OperatorConsoleDeps;
}): Router {
  const router = Router();
  const { payments, logger } = deps;
  const auth = createOperatorAuth({
    payments,
    operator: deps.operator,
    ...(deps.console ? { sessions: deps.console.sessions } : {}),
  });
  if (deps.console) {
    router.use(operatorConsoleRoutes({ ...deps.console, auth, payments, publicUrl: deps.publicUrl }));
  }

  /** The query, validated, from a request signed in as the operator for `path`; else the refusal, thrown. */
  async function operatorQuery<S extends z.ZodObject>(req: Request, path: string, schema: S): Promise<z.output<S>> {
    const parsed = safeParseRequest(schema, queryToInput(schema, req.query as Record<string, string>));
    if (!parsed.success) throw validationError(parsed.error, "query");
    await auth.operatorOf(req, path, { session: true });
    return parsed.data;
  }

  router.get(LEDGER_PATH, async (req, res) => {
    const query = await operatorQuery(req, LEDGER_PATH, ledgerQuerySchema);
    res.json(ledgerReportSchema.parse(await ledgerReport(payments, query)));
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
    // Not parsed again on the way out, unlike the smaller answers: checking 500 entries took longer than reading
    // them (docs/decisions.md, "Ledger totals and pages at ten million entries"); the type above is the wire's.
    res.json(page);
  });

  let copiesRunning = 0;
  router.get(LEDGER_EXPORT_PATH, async (req, res) => {
    const query = await operatorQuery(req, LEDGER_EXPORT_PATH, ledgerExportQuerySchema);
    const { from, to, range } = windowOf(query, payments);
    const { csvCopy } = payments.ledger;
    const copies = query.format === "csv" && csvCopy !== undefined;
    // A COPY holds one of the pool's connections until its end, minutes at ten million entries: a few at once, so
    // that paid calls always find one (docs/deployment.md, "Postgres").
    if (copies && copiesRunning >= CSV_COPIES_AT_ONCE) {
      throw new ServiceError(
        "rate_limited",
        `${CSV_COPIES_AT_ONCE} CSV exports of the ledger are running on this instance; retry when one has ended.`,
        [],
        { "Retry-After": String(CSV_COPY_RETRY_AFTER_S) },
      );
    }
    if (copies) {
      copiesRunning += 1;
      res.once("close", () => {
        copiesRunning -= 1;
      });
    }
    res
      .status(200)
      .type(query.format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8")
      .set("Content-Disposition", `attachment; filename="ledger-${from}-${to}.${query.format}"`);
    try {
      if (query.format === "csv") {
        res.write(ledgerCsvHeader);
        if (csvCopy) {
          // Postgres: one COPY of the range, its rows finished here (docs/decisions.md, "The CSV export on Postgres: one COPY").
          const rows = await csvCopy({ ...range, asset: checksumOf(range.asset) });
          // The pipeline ends the answer, and notices a caller that goes away (it then stops the COPY).
          await pipeline(rows, new CsvLinesFromCopy(), res);
        } else {
          // PGlite: pages read as the pieces of their lines.
          await writeBook({
            out: res,
            readPage: (after, limit) => payments.ledger.csvPage(range, after, limit),
            positionOf: csvPositionOf,
            render: (rows) => csvLinesOf(rows, range),
          });
        }
      } else {
        await writeBook({
          out: res,
          readPage: (after, limit) => payments.ledger.page(range, after, limit),
          positionOf: (row) => row,
          render: (rows) => rows.map((row) => `${JSON.stringify(ledgerEntryOf(row))}\n`).join(""),
        });
      }
      if (!res.writableEnded) res.end();
    } catch (error) {
      // The answer has begun: cut it, so that the caller sees a broken transfer and not a short book. A caller that
      // went away is no failure of the export.
      if ((error as { code?: unknown }).code === "ERR_STREAM_PREMATURE_CLOSE" && res.destroyed) {
        logger.info({ reqId: req.id }, "ledger export: the caller went away before its end");
      } else {
        logger.error({ err: error, reqId: req.id }, "ledger export failed");
      }
      res.destroy();
    }
  });
  const { recordRefund } = deps;
  if (recordRefund)
    router.post(REFUNDS_PATH, async (req, res) => {
      const parsed = safeParseRequest(refundRequestSchema, req.body);
      if (!parsed.success) throw validationError(parsed.error, "body");
      // A write: signed in for this very request (SIGN-IN-WITH-X), never by the console's session cookie.
      await auth.operatorOf(req, REFUNDS_PATH, { session: false });
      let recorded: Awaited<ReturnType<RecordRefund>>;
      try {
        recorded = await recordRefund(parsed.data);
      } catch (error) {
        if (!(error instanceof RefundRefusal)) throw error;
        throw new ServiceError(
          error.code,
          error.message,
          error.field ? [{ field: error.field, message: error.message }] : [],
        );
      }
      const entry = ledgerEntryOf(recorded.refund);
      const { amount, refunded, remaining } = recorded.payment;
      const answer: RecordedRefund = {
        refund: entry,
        payment: { amount: amount.toString(), refunded: refunded.toString(), remaining: remaining.toString() },
        brief:
          `${recorded.created ? "Recorded" : "Already recorded"}: a refund of ${usd(entry.amount)} USD to ` +
          `${entry.payer} for ${entry.route} (transaction ${entry.transaction}); ${usd(remaining)} USD ` +
          `of the payment's ${usd(amount)} USD left to give back.`,
      };
      res.status(recorded.created ? 201 : 200).json(recordedRefundSchema.parse(answer));
    });
  return router;
}

import { z } from "zod";
import { exactUsd } from "./pricing.js";
import { addressSchema, caip2Schema, isoDateTimeSchema, tokenIdSchema, uintStringSchema } from "./primitives.js";
import { briefField, generatedAtField } from "./tools/common.js";

/** The operator's view of the settlement ledger; signed in with SIGN-IN-WITH-X by the operator address. */
export const LEDGER_PATH = "/operator/ledger";

const daySchema = z
  .string()
  // A value not written as a day is not also said to be no calendar day: one problem per field.
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: "must be a UTC day written YYYY-MM-DD", abort: true })
  .refine((day) => !Number.isNaN(Date.parse(`${day}T00:00:00Z`)), { error: "must be a real calendar day" })
  .meta({ description: "A UTC day, YYYY-MM-DD.", example: "2026-11-22" });

/**
 * The operator console, a page of the service: `GET /operator`, signed in with the operator's wallet or with a
 * one-time link (`<origin>/operator#sign-in=<SIGN-IN-WITH-X>`, made by `agent-tools console`).
 */
export const OPERATOR_CONSOLE_PATH = "/operator";
/**
 * The console's session: `GET /operator/session` says whether the request carries one (and how to open one),
 * `POST` opens one with a `SIGN-IN-WITH-X` made for this path, `DELETE` ends it.
 */
export const OPERATOR_SESSION_PATH = "/operator/session";
/** The fragment of a console link that carries its sign-in: `/operator#sign-in=<SIGN-IN-WITH-X, URI-encoded>`. */
export const OPERATOR_LINK_FRAGMENT = "sign-in";

/**
 * A one-time link that opens the operator console signed in: the service's public `origin`, `/operator`, and a
 * `SIGN-IN-WITH-X` made for `/operator/session` there, in the fragment (which a browser never sends to a server, nor
 * in a Referer). The page posts it to open a session; the service takes it once, within its age limit.
 */
export function operatorConsoleLink(origin: string, signIn: string): string {
  return `${origin}${OPERATOR_CONSOLE_PATH}#${OPERATOR_LINK_FRAGMENT}=${encodeURIComponent(signIn)}`;
}
/** What the console shows, in one answer: `GET /operator/overview`. */
export const OPERATOR_OVERVIEW_PATH = "/operator/overview";

/** Every entry of a window (payments and refunds), page by page, oldest first: `GET /operator/ledger/entries`. */
export const LEDGER_ENTRIES_PATH = "/operator/ledger/entries";
/** Every settled payment of a window as one CSV or JSON Lines file, streamed: `GET /operator/ledger/export`. */
export const LEDGER_EXPORT_PATH = "/operator/ledger/export";

/** A window of UTC days, as each operator route takes it. */
const windowFields = {
  from: daySchema.optional().meta({ description: "First UTC day included; 30 days before `to` by default." }),
  to: daySchema.optional().meta({ description: "Last UTC day included; today by default." }),
};
const fromNotAfterTo: [
  (q: { from?: string | undefined; to?: string | undefined }) => boolean,
  { error: string; path: string[] },
] = [(q) => !q.from || !q.to || q.from <= q.to, { error: "from must not be after to", path: ["from"] }];

/** The query of `GET /operator/ledger`: a range of UTC days. */
export const ledgerQuerySchema = z
  .object({
    ...windowFields,
    limit: z.number().int().min(0).max(500).default(20).meta({ description: "Latest entries listed, 0 to 500." }),
  })
  .refine(...fromNotAfterTo)
  .meta({ id: "LedgerQuery" });

/** The query of `GET /operator/ledger/entries`: a window, and where the previous page ended. */
export const ledgerPageQuerySchema = z
  .object({
    ...windowFields,
    after: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,512}$/, { error: "must be the `next` of a previous page" })
      .optional()
      .meta({ description: "The `next` of the previous page; the first page without it." }),
    limit: z.number().int().min(1).max(1000).default(500).meta({ description: "Entries per page, 1 to 1000." }),
  })
  .refine(...fromNotAfterTo)
  .meta({ id: "LedgerPageQuery" });
/** The query of `GET /operator/ledger/entries`, as a caller writes it (see {@link ledgerPageQuerySchema}). */
export type LedgerPageQuery = z.input<typeof ledgerPageQuerySchema>;

/** The formats of `GET /operator/ledger/export`. */
export const LEDGER_EXPORT_FORMATS = ["csv", "jsonl"] as const;
/** The query of `GET /operator/ledger/export`: a window and a format. */
export const ledgerExportQuerySchema = z
  .object({
    ...windowFields,
    format: z
      .enum(LEDGER_EXPORT_FORMATS)
      .default("csv")
      .meta({ description: "`csv` (RFC 4180, a header line) or `jsonl` (one LedgerEntry per line)." }),
  })
  .refine(...fromNotAfterTo)
  .meta({ id: "LedgerExportQuery" });
/** The query of `GET /operator/ledger/export`, as a caller writes it (see {@link ledgerExportQuerySchema}). */
export type LedgerExportQuery = z.input<typeof ledgerExportQuerySchema>;

/** Which price a settled call was paid at: `standard` or `discounted`. */
export const pricePointNameSchema = z.enum(["standard", "discounted"]);

/** A 32-byte value in hex: an EIP-3009 authorization's nonce, a transaction hash. */
const bytes32Schema = z
  .string({ error: "must be a string" })
  .regex(/^0x[0-9a-fA-F]{64}$/, { error: "must be 32 bytes in hex (0x followed by 64 hex digits)" });

/** The work a metered call's answer took (CountedWork), as the ledger and the settlement carry it. */
export const countedWorkSchema = z
  .object({
    upstreamReads: z
      .number()
      .int()
      .min(0)
      .meta({ description: "Reads of the marketplace and market-data aggregator." }),
    itemsExamined: z
      .number()
      .int()
      .min(0)
      .meta({ description: "Drops, collections, tokens, pairs or missions looked at." }),
    blocksScanned: z.number().int().min(0).meta({ description: "Blocks of the B20 chain the answer covers." }),
  })
  .meta({ id: "CountedWork" });

/** What a ledger entry records: a settled payment, or money given back for one. */
export const LEDGER_ENTRY_KINDS = ["payment", "refund"] as const;

/**
 * One entry of the ledger: a settled payment (when, which route, who paid, how much, at which price, in which
 * transaction), or a refund of one, recorded by the operator (the payment's route, payer and nonce; the amount given
 * back, its transaction and when it was mined).
 */
export const ledgerEntrySchema = z
  .object({
    kind: z.enum(LEDGER_ENTRY_KINDS).meta({
      description: "`payment`, or `refund`: money given back for the payment this entry names (payer and nonce).",
    }),
    route: z.string().meta({ description: "The paid route, for example `/intel`.", example: "/intel" }),
    method: z
      .enum(["GET", "POST", "MCP", "A2A"])
      .meta({ description: "How the call came: HTTP GET or POST, an MCP tool call, or an A2A message." }),
    tokenId: tokenIdSchema,
    payer: addressSchema.meta({ description: "Who signed the payment." }),
    caller: addressSchema.nullable().meta({ description: "The signed-in caller, null for an anonymous call." }),
    pricePoint: pricePointNameSchema,
    amount: uintStringSchema.meta({
      description: "Amount in the asset's smallest unit: paid, or given back for a refund (never negative).",
    }),
    asset: addressSchema,
    network: caip2Schema,
    nonce: bytes32Schema.meta({
      description:
        "The payer's EIP-3009 authorization nonce: with `payer` it names the payment, as `AuthorizationUsed(payer, " +
        "nonce)` does on chain. For an `upto` payment, its Permit2 nonce (a uint256) as 32 bytes in hex. A refund " +
        "carries the nonce of the payment it gives back.",
    }),
    transaction: bytes32Schema.or(z.literal("")).meta({
      description:
        "The settlement transaction; for a refund, the transaction that gave the money back. For a call paid over a " +
        "payment channel (then `nonce` is the channel's id), the claim that took its money, or its deposit's, and " +
        "empty until one of them is sent (docs/channels.md).",
    }),
    cumulative: uintStringSchema.nullable().meta({
      description:
        "For a call paid over a payment channel, the voucher's cumulative amount: the channel's charged total once " +
        "this call was charged, in the asset's smallest unit. Null otherwise (an `exact` payment, or a refund).",
    }),
    ceiling: uintStringSchema.meta({
      description:
        "The price point the payment signed, in the asset's smallest unit. A call paid with `exact` is charged it " +
        "(`amount` equals it); one paid over a metered scheme (`batch-settlement`, `upto`) is charged by its `work`, " +
        "at most this. A refund carries its payment's.",
    }),
    work: countedWorkSchema.nullable().meta({
      description:
        'What the answer took, for a call charged by the work done (docs/api.md, "Prices by the work done"): ' +
        "`amount` is the published formula of it. Null for an `exact` payment and a refund.",
    }),
    settledAt: isoDateTimeSchema.meta({
      description: "When the payment was settled; for a refund, when its transaction was mined (the block's time).",
    }),
    requestId: z.string().meta({ description: "The request id the call was logged under (header X-Request-Id)." }),
    note: z
      .string()
      .nullable()
      .meta({ description: "Why a refund was made, as the operator recorded it; null for a payment." }),
  })
  .meta({ id: "LedgerEntry" });
/** One entry of the ledger, a settled payment or a refund (see {@link ledgerEntrySchema}). */
export type LedgerEntry = z.infer<typeof ledgerEntrySchema>;

/** A signed integer as a decimal string: a net amount, which refunds can make negative. */
const intStringSchema = z
  .string()
  .regex(/^(0|-?[1-9][0-9]*)$/)
  .meta({ description: "Integer as a decimal string.", example: "-10000" });

const totalSchema = z.object({
  payments: z.number().int().min(0).meta({ description: "Settled payments." }),
  amount: uintStringSchema.meta({ description: "What they paid, in the asset's smallest unit." }),
  usd: z.string().meta({ description: "What they paid, in USD, two decimals.", example: "1.02" }),
  refunds: z.number().int().min(0).meta({ description: "Refunds, counted on the day their transaction was mined." }),
  refunded: uintStringSchema.meta({ description: "What the refunds gave back, in the asset's smallest unit." }),
  net: intStringSchema.meta({ description: "`amount` less `refunded`: negative when more was given back." }),
  netUsd: z.string().meta({ description: "`net` in USD, two decimals.", example: "1.01" }),
});

const usdAmount = (what: string) =>
  z.object({
    amount: uintStringSchema.meta({ description: `${what}, in the asset's smallest unit.` }),
    usd: z.string().meta({ description: `${what}, in USD, two decimals.` }),
  });

/** Money on the payment channels (x402 `batch-settlement`; docs/channels.md). */
export const channelTotalsSchema = z
  .object({
    channels: z.number().int().min(0).meta({ description: "Channels the service took vouchers on." }),
    deposited: usdAmount("What payers deposited"),
    charged: usdAmount("What the answered calls were charged"),
    claimed: usdAmount("What the contract records as claimed"),
    swept: usdAmount("What was swept from the contract to payTo"),
    refunded: usdAmount("What cooperative refunds gave back to payers"),
    unclaimed: usdAmount("Charged and not yet claimed: owed on open channels"),
  })
  .meta({ id: "ChannelTotals" });

/** The answer of `GET /operator/ledger`: totals per route and per day, and the latest payments. */
export const ledgerReportSchema = z
  .object({
    generatedAt: generatedAtField,
    from: daySchema,
    to: daySchema,
    asset: addressSchema,
    network: caip2Schema,
    total: totalSchema,
    byRoute: z.array(totalSchema.extend({ route: z.string() })).meta({ description: "Busiest route first." }),
    byDay: z.array(totalSchema.extend({ day: daySchema })).meta({ description: "Oldest day first." }),
    byDayAndRoute: z.array(totalSchema.extend({ day: daySchema, route: z.string() })),
    byDayRouteAndPricePoint: z
      .array(totalSchema.extend({ day: daySchema, route: z.string(), pricePoint: pricePointNameSchema }))
      .meta({ description: "Revenue per UTC day, route and price point, oldest day first." }),
    unconfirmed: z
      .number()
      .int()
      .min(0)
      .meta({
        description:
          "Payments whose settlement was sent but not yet confirmed (the call was cut short); they are checked " +
          "on chain and recorded or dropped.",
      }),
    entries: z
      .array(ledgerEntrySchema)
      .meta({ description: "The latest entries (settled payments and refunds), newest first." }),
    channels: channelTotalsSchema.optional().meta({
      description:
        "Money on the payment channels since they were opened (not the window's), when the service takes them.",
    }),
    brief: briefField,
  })
  .meta({ id: "LedgerReport" });
/** The answer of `GET /operator/ledger` (see {@link ledgerReportSchema}). */
export type LedgerReport = z.infer<typeof ledgerReportSchema>;
/** The query of `GET /operator/ledger`, as a caller writes it (see {@link ledgerQuerySchema}). */
export type LedgerQuery = z.input<typeof ledgerQuerySchema>;

/** A page of `GET /operator/ledger/entries`: settled payments oldest first, and where the next page starts. */
export const ledgerPageSchema = z
  .object({
    from: daySchema,
    to: daySchema,
    entries: z.array(ledgerEntrySchema).meta({ description: "Settled payments and refunds, oldest first." }),
    next: z.string().nullable().meta({ description: "Pass it as `after` for the next page; null on the last page." }),
  })
  .meta({ id: "LedgerPage" });
/** A page of `GET /operator/ledger/entries` (see {@link ledgerPageSchema}). */
export type LedgerPage = z.infer<typeof ledgerPageSchema>;

/**
 * The columns of the ledger's CSV export, in order: a {@link LedgerEntry}'s fields and its amount in USD. In the CSV
 * a refund's `amount` and `usd` are negative, so that a column's sum is what the operator kept. `cumulative` is empty
 * where the entry's is null (a payment not made over a channel, a refund), and so is `work` (workCsvText).
 */
export const LEDGER_CSV_COLUMNS = [
  "settledAt",
  "kind",
  "route",
  "method",
  "tokenId",
  "payer",
  "caller",
  "pricePoint",
  "amount",
  "usd",
  "asset",
  "network",
  "nonce",
  "transaction",
  "cumulative",
  "ceiling",
  "work",
  "requestId",
  "note",
] as const;

/**
 * What a spreadsheet runs as a formula when a text starts with it. csvField writes such a text behind an apostrophe,
 * and the server's SQL for the CSV export guards by the same list.
 */
export const CSV_FORMULA_STARTS = ["=", "+", "-", "@", "\t", "\r"] as const;
/** A text starting with one of CSV_FORMULA_STARTS (each written as its code point in the class). */
const FORMULA_START = new RegExp(
  `^[${CSV_FORMULA_STARTS.map((start) => `\\u${start.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}]`,
);
/** What RFC 4180 quotes: a comma, a quote or a line break anywhere. */
const NEEDS_QUOTES = /[",\r\n]/;
/** Either of the two: most fields need neither, and one test of this says so. */
const NEEDS_CARE = new RegExp(`${FORMULA_START.source}|${NEEDS_QUOTES.source}`);

/**
 * One field of a CSV line (RFC 4180): quoted when it holds a comma, a quote or a line break. A text a spreadsheet
 * would run as a formula (`=`, `+`, `-`, `@` first) is quoted behind an apostrophe: the request id, which a caller
 * may choose, and a refund's note can hold one. (A refund's negative amount is a number, written as it is.)
 */
export function csvField(value: string): string {
  if (!NEEDS_CARE.test(value)) return value;
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** A call's counted work in one CSV field, no comma in it: `upstreamReads:3 itemsExamined:12 blocksScanned:0`. */
export function workCsvText(work: z.infer<typeof countedWorkSchema>): string {
  return `upstreamReads:${work.upstreamReads} itemsExamined:${work.itemsExamined} blocksScanned:${work.blocksScanned}`;
}

/** A work text as workCsvText writes it, read back; a text of another shape is a bug of the writer's, thrown. */
export function parseWorkText(text: string): z.infer<typeof countedWorkSchema> {
  const match = /^upstreamReads:(\d+) itemsExamined:(\d+) blocksScanned:(\d+)$/.exec(text);
  if (!match) throw new Error(`not a work text: ${JSON.stringify(text)}`);
  return { upstreamReads: Number(match[1]), itemsExamined: Number(match[2]), blocksScanned: Number(match[3]) };
}

/** The CSV export's header line, with its line break. */
export const ledgerCsvHeader = `${LEDGER_CSV_COLUMNS.join(",")}\r\n`;

/** USD amounts by the amount in units: a book repeats a few prices, and an export writes millions of lines. */
const usdOfAmount = new Map<string, string>();
function usdOf(amount: string): string {
  let usd = usdOfAmount.get(amount);
  if (usd === undefined) {
    if (usdOfAmount.size >= 10_000) usdOfAmount.clear();
    usd = exactUsd(amount);
    usdOfAmount.set(amount, usd);
  }
  return usd;
}

/**
 * An entry as a line of the CSV export (`usd` is its amount in USD to the last unit), with its line break. The fields
 * follow LEDGER_CSV_COLUMNS, listed rather than looped over, and joined as one array: an export writes a line per entry,
 * and a string built by many concatenations costs more to write out. The kind, method and price point are names of
 * this schema, written as they are; so are the time, addresses, network, nonce, transaction and cumulative amount,
 * whose patterns (ledgerEntrySchema) admit no comma, quote, line break or formula's first character. The route,
 * request id and note are texts: each goes through csvField.
 */
export function ledgerCsvLine(entry: LedgerEntry): string {
  // A refund's amount is written negative: a number, never taken for a formula, so neither quoted nor guarded.
  const sign = entry.kind === "refund" && entry.amount !== "0" ? "-" : "";
  return [
    entry.settledAt,
    entry.kind,
    csvField(entry.route),
    entry.method,
    entry.tokenId,
    entry.payer,
    entry.caller ?? "",
    entry.pricePoint,
    sign + entry.amount,
    sign + usdOf(entry.amount),
    entry.asset,
    entry.network,
    entry.nonce,
    entry.transaction,
    entry.cumulative ?? "",
    entry.ceiling,
    entry.work ? workCsvText(entry.work) : "",
    csvField(entry.requestId),
    entry.note === null ? "\r\n" : `${csvField(entry.note)}\r\n`,
  ].join(",");
}

/** Records a refund of a settled payment: `POST /operator/refunds` (signed in as the operator). */
export const REFUNDS_PATH = "/operator/refunds";

/**
 * The body of `POST /operator/refunds`: the payment (its payer and authorization nonce, as a ledger entry names them)
 * and the transaction that gave money back for it: a transfer of the payment asset from the payee (`PAY_TO`) to the
 * payer, mined after the payment's settlement.
 */
export const refundRequestSchema = z
  .strictObject({
    payer: addressSchema.meta({ description: "Who paid: the ledger entry's `payer`." }),
    nonce: bytes32Schema.meta({ description: "The payment's authorization nonce: the ledger entry's `nonce`." }),
    transaction: bytes32Schema.meta({
      description: "The refund's transaction: it transfers the payment asset from the payee to the payer.",
    }),
    note: z
      .string({ error: "must be text" })
      .max(200, { error: "must be at most 200 characters long" })
      .optional()
      .meta({ description: "Why the money was given back, kept with the refund (at most 200 characters)." }),
  })
  .meta({ id: "RefundRequest" });
/** The body of `POST /operator/refunds`, as a caller writes it (see {@link refundRequestSchema}). */
export type RefundRequest = z.input<typeof refundRequestSchema>;

/** The answer of `POST /operator/refunds`: the refund as the book lists it, and what is left of the payment. */
export const recordedRefundSchema = z
  .object({
    refund: ledgerEntrySchema,
    payment: z
      .object({
        amount: uintStringSchema.meta({ description: "What the payment paid." }),
        refunded: uintStringSchema.meta({ description: "What its refunds gave back, this one included." }),
        remaining: uintStringSchema.meta({ description: "What can still be given back for it." }),
      })
      .meta({ description: "The payment the refund gives back for." }),
    brief: briefField,
  })
  .meta({ id: "RecordedRefund" });
/** The answer of `POST /operator/refunds` (see {@link recordedRefundSchema}). */
export type RecordedRefund = z.infer<typeof recordedRefundSchema>;

/** The answer of `POST /operator/session`: who is signed in, until when (the session itself is an HttpOnly cookie). */
export const operatorSessionSchema = z
  .object({ address: addressSchema, expiresAt: isoDateTimeSchema })
  .meta({ id: "OperatorSession" });
/** The answer of `POST /operator/session` (see {@link operatorSessionSchema}). */
export type OperatorSession = z.infer<typeof operatorSessionSchema>;

/**
 * The answer of `GET /operator/session`: the console's session when the request's cookie names an open one, and what
 * a sign-in that opens one is made for. Answered 200 either way, so that a page asking whether it is signed in is
 * not a failed request.
 */
export const operatorSessionStateSchema = z
  .object({
    session: operatorSessionSchema
      .nullable()
      .meta({ description: "Who is signed in and until when; null when the request carries no open session." }),
    signIn: z
      .object({
        origin: z.string().meta({
          description:
            "The service's public origin (`PUBLIC_URL`): a sign-in's domain is its host and its uri this origin " +
            "followed by `/operator/session`; the console is this origin followed by `/operator`.",
          example: "http://127.0.0.1:8402",
        }),
        chains: z.array(caip2Schema).meta({
          description: "The chains a sign-in may name, as the operator routes' `WWW-Authenticate` lists them.",
        }),
        maxAgeSeconds: z
          .number()
          .int()
          .min(1)
          .meta({ description: "How long after it was issued a sign-in is taken (used once, within that time)." }),
      })
      .meta({ description: "What a sign-in that opens a session is made for." }),
  })
  .meta({ id: "OperatorSessionState" });
/** The answer of `GET /operator/session` (see {@link operatorSessionStateSchema}). */
export type OperatorSessionState = z.infer<typeof operatorSessionStateSchema>;

/** What the operator console shows: the ledger's report, the claims pending, the mission queue, upstreams. */
export const operatorOverviewSchema = z
  .object({
    report: ledgerReportSchema,
    pending: z
      .object({
        recent: z
          .number()
          .int()
          .min(0)
          .meta({ description: "Claims of calls running, or cut short and being resolved." }),
        older: z
          .number()
          .int()
          .min(0)
          .meta({ description: "Claims pending for more than ten minutes: the reconciler cannot resolve them." }),
      })
      .meta({ description: "Payment claims pending." }),
    missions: z.record(z.string(), z.number().int().min(0)).meta({ description: "Missions by status." }),
    upstreams: z
      .array(
        z.object({
          name: z.string(),
          circuitOpen: z.boolean().meta({ description: "True while its circuit breaker refuses calls." }),
          budgetPerMinute: z
            .number()
            .int()
            .min(0)
            .nullable()
            .meta({ description: "Requests a minute its key allows." }),
        }),
      )
      .meta({ description: "The marketplace and market-data APIs." }),
    refusals: z.record(z.string(), z.number().int().min(0)).meta({
      description:
        "Payment refusals (402) by reason since this instance started, counted whether metrics are on or off.",
    }),
    transactionUrl: z.string().nullable().meta({
      description: "A block explorer's page of a transaction, `{hash}` standing for its hash; null on a local chain.",
    }),
  })
  .meta({ id: "OperatorOverview" });
/** The answer of `GET /operator/overview` (see {@link operatorOverviewSchema}). */
export type OperatorOverview = z.infer<typeof operatorOverviewSchema>;

import { z } from "zod";
import { addressSchema, caip2Schema, isoDateTimeSchema, tokenIdSchema, uintStringSchema } from "./primitives.js";
import { briefField, generatedAtField } from "./tools/common.js";

/** The operator's view of the settlement ledger; signed in with SIGN-IN-WITH-X by the operator address. */
export const LEDGER_PATH = "/operator/ledger";

const daySchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: "must be a UTC day written YYYY-MM-DD" })
  .refine((day) => !Number.isNaN(Date.parse(`${day}T00:00:00Z`)), { error: "must be a real calendar day" })
  .meta({ description: "A UTC day, YYYY-MM-DD.", example: "2026-11-22" });

/** The query of `GET /operator/ledger`: a range of UTC days. */
export const ledgerQuerySchema = z
  .object({
    from: daySchema.optional().meta({ description: "First UTC day included; 30 days before `to` by default." }),
    to: daySchema.optional().meta({ description: "Last UTC day included; today by default." }),
    limit: z.number().int().min(0).max(500).default(20).meta({ description: "Latest entries listed, 0 to 500." }),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { error: "from must not be after to", path: ["from"] })
  .meta({ id: "LedgerQuery" });

/** Which price a settled call was paid at: `standard` or `discounted`. */
export const pricePointNameSchema = z.enum(["standard", "discounted"]);

/** One settled payment of the ledger: when, which route, who paid, how much, at which price, in which transaction. */
export const ledgerEntrySchema = z
  .object({
    route: z.string().meta({ description: "The paid route, for example `/intel`.", example: "/intel" }),
    method: z
      .enum(["GET", "POST", "MCP", "A2A"])
      .meta({ description: "How the call came: HTTP GET or POST, an MCP tool call, or an A2A message." }),
    tokenId: tokenIdSchema,
    payer: addressSchema.meta({ description: "Who signed the payment." }),
    caller: addressSchema.nullable().meta({ description: "The signed-in caller, null for an anonymous call." }),
    pricePoint: pricePointNameSchema,
    amount: uintStringSchema.meta({ description: "Amount in the asset's smallest unit." }),
    asset: addressSchema,
    network: caip2Schema,
    transaction: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/)
      .meta({ description: "The settlement transaction." }),
    settledAt: isoDateTimeSchema,
    requestId: z.string().meta({ description: "The request id the call was logged under (header X-Request-Id)." }),
  })
  .meta({ id: "LedgerEntry" });
/** One settled payment of the ledger (see {@link ledgerEntrySchema}). */
export type LedgerEntry = z.infer<typeof ledgerEntrySchema>;

const totalSchema = z.object({
  payments: z.number().int().min(0),
  amount: uintStringSchema,
  usd: z.string().meta({ description: "The amount in USD, two decimals.", example: "1.02" }),
});

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
    unconfirmed: z
      .number()
      .int()
      .min(0)
      .meta({
        description:
          "Payments whose settlement was sent but not yet confirmed (the call was cut short); they are checked " +
          "on chain and recorded or dropped.",
      }),
    entries: z.array(ledgerEntrySchema).meta({ description: "The latest settled payments, newest first." }),
    brief: briefField,
  })
  .meta({ id: "LedgerReport" });
/** The answer of `GET /operator/ledger` (see {@link ledgerReportSchema}). */
export type LedgerReport = z.infer<typeof ledgerReportSchema>;
/** The query of `GET /operator/ledger`, as a caller writes it (see {@link ledgerQuerySchema}). */
export type LedgerQuery = z.input<typeof ledgerQuerySchema>;

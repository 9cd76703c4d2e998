/**
 * The package's public names, written out: each entry point of package.json "exports", as built (ESM and CommonJS),
 * exports exactly these values at run time. A name added or lost by accident fails here; one added on purpose is
 * added to the list. Reads dist/: the package's `test` task builds it first.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const ERRORS = [
  "AgentToolsError",
  "ChannelError",
  "ForbiddenError",
  "InvalidPrivateKeyError",
  "InvalidReceiptError",
  "NetworkError",
  "NotFoundError",
  "PaymentRequiredError",
  "ServiceError",
  "UnauthorizedError",
  "UnexpectedResponseError",
  "UpstreamError",
  "ValidationError",
];

const CONTRACTS = [
  ...ERRORS,
  "LEDGER_EXPORT_FORMATS",
  "inputToQuery",
  "missionParamsSchema",
  "missionStatuses",
  "missionTools",
  "paidRoutes",
  "queryToInput",
  "requestFields",
  "toolRoutes",
  "unitsToUsd",
  "usdAmountText",
  "usdCompactText",
  "usdPriceText",
  "usdToUnits",
];

/** The runtime exports of each entry point, by its subpath in package.json "exports". */
const EXPORTS: Record<string, string[]> = {
  ".": [
    ...CONTRACTS,
    "LEDGER_PATH",
    "MISSION_MAX_DELAY_DAYS",
    "PAYMENT_REFUSAL_REASONS",
    "accountFromPrivateKey",
    "createAgentToolsClient",
    "dispatchRequestSchema",
    "dispatchResponseSchema",
    "ledgerQuerySchema",
    "ledgerReportSchema",
    "listMissionsRequestSchema",
    "listMissionsResponseSchema",
    "memoryChannelStorage",
    "memorySpendLog",
    "parsePaymentRefusal",
    "proofOfPayment",
  ],
  "./mcp": ["PaymentRequiredError", "connectMcpClient", "paymentRequiredOf", "runStdioBridge"],
  "./a2a": ["PaymentRequiredError", "connectA2aClient"],
  "./contracts": CONTRACTS,
};

type Conditions = { import: { default: string }; require: { default: string } };
const packageJson = new URL("../package.json", import.meta.url);
const { exports } = JSON.parse(readFileSync(packageJson, "utf8")) as { exports: Record<string, Conditions> };
const require = createRequire(packageJson);
const sorted = (names: Iterable<string>) => [...names].sort();

describe("public exports", () => {
  it("lists every entry point of package.json", () => {
    expect(sorted(Object.keys(exports))).toEqual(sorted(Object.keys(EXPORTS)));
  });

  it.each(Object.keys(EXPORTS))("%s exports exactly its list, as ESM and as CommonJS", async (subpath) => {
    const conditions = exports[subpath]!;
    const esm = (await import(new URL(conditions.import.default, packageJson).href)) as object;
    const cjs = require(conditions.require.default) as object;
    expect(sorted(Object.keys(esm))).toEqual(sorted(EXPORTS[subpath]!));
    expect(sorted(Object.keys(cjs).filter((name) => name !== "__esModule"))).toEqual(sorted(EXPORTS[subpath]!));
  });
});

// The contracts, error classes and units (also `@agent-tools/sdk/contracts`, without the client's code).

export {
  dispatchRequestSchema,
  dispatchResponseSchema,
  LEDGER_PATH,
  type LedgerEntry,
  type LedgerQuery,
  ledgerQuerySchema,
  ledgerReportSchema,
  listMissionsRequestSchema,
  listMissionsResponseSchema,
  MISSION_MAX_DELAY_DAYS,
  PAYMENT_REFUSAL_REASONS,
  type PaymentRefusalReason,
  parsePaymentRefusal,
  type ToolInput,
  type ToolOutput,
} from "@agent-tools/schema";
export { accountFromPrivateKey } from "./account.js";
export {
  type AgentToolsClient,
  type AgentToolsClientOptions,
  createAgentToolsClient,
} from "./client.js";
export * from "./contracts.js";
export { proofOfPayment } from "./receipt.js";

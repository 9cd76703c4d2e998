/**
 * `@agent-tools/sdk/contracts`: the route table, the request and response contracts, the error classes, USD units
 * and the service's way of writing USD figures, without the client's signing and payment code (viem, x402). For code that only needs to know the tools:
 * the CLI builds its commands from it and loads the client when a command runs.
 */
export {
  type AgentInfo,
  type BindingStatus,
  type Clearance,
  type ErrorBody,
  type Health,
  inputToQuery,
  LEDGER_EXPORT_FORMATS,
  type LedgerEntry,
  type LedgerPage,
  type LedgerReport,
  type Mission,
  type MissionParams,
  type MissionResult,
  type MissionSpec,
  type MissionStatus,
  type MissionTool,
  missionParamsSchema,
  missionStatuses,
  missionTools,
  type PaidRouteName,
  type PaymentCatalog,
  type PaymentRequired,
  paidRoutes,
  queryToInput,
  type RecordedRefund,
  type RefundRequest,
  type RegistrationFile,
  type RequestField,
  requestFields,
  type ToolName,
  type TypedMission,
  toolRoutes,
  usdAmountText,
  usdCompactText,
  usdPriceText,
} from "@agent-tools/schema";
export type { CallToolParameters, CallToolReturnType, ToolResult } from "./actions/call-tool.js";
export type {
  ListChannelsReturnType,
  RefundChannelParameters,
  RefundChannelReturnType,
} from "./actions/channels.js";
export type { CreateConsoleLinkReturnType } from "./actions/console-link.js";
export type {
  ExportLedgerParameters,
  ExportLedgerReturnType,
  GetLedgerPageParameters,
  GetLedgerPageReturnType,
  GetLedgerParameters,
  GetLedgerReturnType,
  RecordRefundParameters,
  RecordRefundReturnType,
} from "./actions/ledger.js";
export type {
  DispatchInput,
  DispatchOutput,
  DispatchParameters,
  DispatchReturnType,
  ListMissionsInput,
  ListMissionsOutput,
  ListMissionsParameters,
  ListMissionsReturnType,
} from "./actions/missions.js";
export type {
  AgentParameters,
  GetAgentReturnType,
  GetBindingReturnType,
  GetCatalogReturnType,
  GetHealthReturnType,
  GetOpenApiReturnType,
  GetRegistrationReturnType,
} from "./actions/public.js";
export type { WithdrawChannelParameters, WithdrawChannelReturnType } from "./actions/withdraw-channel.js";
export type { ChannelOptions, ChannelState, ChannelStorage, ChannelSummary, ChannelTerms } from "./channels.js";
export {
  AgentToolsError,
  type AgentToolsErrorCode,
  ChannelError,
  type ClientRefusalReason,
  ForbiddenError,
  InvalidPrivateKeyError,
  InvalidReceiptError,
  NetworkError,
  NotFoundError,
  PaymentRequiredError,
  ServiceError,
  UnauthorizedError,
  UnexpectedResponseError,
  UpstreamError,
  ValidationError,
} from "./errors.js";
export type { LimitExceeded, SpendLimitName } from "./limits.js";
export type { Payment, PaymentChannel } from "./payment.js";
export type { PaymentReceipt } from "./receipt.js";
export { unitsToUsd, usdToUnits } from "./units.js";

export {
  type AgentToolsClient,
  type AgentToolsClientOptions,
  createAgentToolsClient,
  type ToolResult,
} from "./client.js";
export {
  AgentToolsError,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  PaymentRequiredError,
  ServiceError,
  UnexpectedResponseError,
  UpstreamError,
  ValidationError,
} from "./errors.js";
export { type Payment, unitsToUsd, usdToUnits } from "./payment.js";

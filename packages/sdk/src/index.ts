export {
  type Clearance,
  queryToInput,
  type ToolInput,
  type ToolName,
  type ToolOutput,
  toolRoutes,
} from "@agent-tools/schema";
export { privateKeyToAccount as accountFromPrivateKey } from "viem/accounts";
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

export { type AgentToolsClient, type AgentToolsClientOptions, createAgentToolsClient } from "./client.js";
export { AgentToolsError, NetworkError, UnexpectedResponseError } from "./errors.js";

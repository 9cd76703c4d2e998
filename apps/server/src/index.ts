export { type AppDeps, createApp } from "./app.js";
export { type Config, loadConfig } from "./config.js";
export { ConfigError } from "./config-error.js";
export {
  type AttachedEmbeddedService,
  attachEmbeddedService,
  type EmbeddedProcess,
  freePort,
  type SharedEmbeddedService,
  spawnEmbeddedService,
  startSharedEmbeddedService,
} from "./embedded-process.js";
export { createLogger } from "./logger.js";
export { listen, type RunningServer } from "./server.js";

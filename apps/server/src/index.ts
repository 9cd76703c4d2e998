export { type Config, loadConfig } from "./config/config.js";
export { ConfigError } from "./config/config-error.js";
export { type AppDeps, createApp } from "./startup/app.js";
export {
  type AttachedEmbeddedService,
  attachEmbeddedService,
  type EmbeddedProcess,
  freePort,
  type SharedEmbeddedService,
  spawnEmbeddedService,
  startSharedEmbeddedService,
} from "./startup/embedded-process.js";
export { createLogger } from "./startup/logger.js";
export { listen, type RunningServer } from "./startup/server.js";

export { type AppDeps, createApp } from "./app.js";
export { type Config, loadConfig } from "./config.js";
export { ConfigError } from "./config-error.js";
export { type EmbeddedProcess, freePort, spawnEmbeddedService } from "./embedded-process.js";
export { createLogger } from "./logger.js";
export { listen, type RunningServer } from "./server.js";

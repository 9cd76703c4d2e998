export { type AppDeps, createApp } from "./app.js";
export { type Config, ConfigError, loadConfig } from "./config.js";
export { type EmbeddedProcess, freePort, spawnEmbeddedService } from "./embedded-process.js";
export { createLogger } from "./logger.js";
export { listen, type RunningServer } from "./server.js";

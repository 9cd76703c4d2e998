import pino, { type Logger } from "pino";
import type { Config } from "./config.js";

/** JSON logs on stdout; request logs carry the request id (see app.ts). */
export function createLogger(level: Config["logLevel"]): Logger {
  return pino({ level, base: { service: "agent-tools" } });
}

import pino, { type Logger } from "pino";
import type { Config } from "../config/config.js";

/**
 * JSON logs on stdout; request logs carry the request id (see transports/http/middleware/request-log.ts). Written asynchronously:
 * lines logged in one turn of the event loop leave in one write, not one system call each.
 */
export function createLogger(level: Config["logLevel"]): Logger {
  return pino({ level, base: { service: "agent-tools" } }, pino.destination({ dest: 1, sync: false }));
}

import type { Logger } from "pino";
import { type Config, type LoadConfigOptions, loadConfig } from "../config/config.js";
import { ConfigError } from "../config/config-error.js";
import { StartupError, shortReason } from "../errors/startup-error.js";

/** The configuration from the environment; on a bad variable, says which and exits 1. */
export function loadConfigOrExit(options: LoadConfigOptions = {}): Config {
  try {
    return loadConfig(process.env, options);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * On SIGTERM or SIGINT, runs `close` once (stop accepting, let requests in flight finish) and exits 0, or 1 when
 * closing fails or takes more than 10 s.
 */
export function stopOnSignals(logger: Logger, close: () => Promise<unknown>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    setTimeout(() => process.exit(1), 10_000).unref();
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

/**
 * Reports a start-up failure in one line and exits 1: a refusal of ours as it is, anything else by the first line
 * of its message, without URL secrets.
 */
export function exitOnStartFailure(error: unknown): never {
  const message = error instanceof StartupError ? error.message : shortReason(error);
  process.stderr.write(`agent-tools failed to start: ${message}\n`);
  process.exit(1);
}

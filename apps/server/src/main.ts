import { composeService } from "./compose.js";
import { ConfigError, loadConfig } from "./config.js";
import { createLogger } from "./logger.js";
import { listen } from "./server.js";

/** Composes the service from validated configuration and runs it until SIGTERM or SIGINT. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  const { app } = await composeService(config, logger);
  const running = await listen(app, config.host, config.port);
  logger.info({ url: running.url, publicUrl: config.publicUrl }, "agent-tools listening");
  process.stdout.write(
    `Agent Tools API on ${config.publicUrl}  (reference: ${config.publicUrl}/, health: ${config.publicUrl}/healthz)\n`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    running.close().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((error) => {
  process.stderr.write(`agent-tools failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

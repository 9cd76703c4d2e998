import { composeService } from "./compose.js";
import { exitOnStartFailure, loadConfigOrExit, stopOnSignals } from "./lifecycle.js";
import { createLogger } from "./logger.js";
import { listen } from "./server.js";

/** Composes the service from validated configuration and runs it until SIGTERM or SIGINT. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  const service = await composeService(config, logger);
  const running = await listen(service.app, config.host, config.port);
  await service.start();
  logger.info(
    { url: running.url, publicUrl: config.publicUrl, store: `${service.db.kind} ${service.db.location}` },
    "agent-tools listening",
  );
  process.stdout.write(
    `Agent Tools API on ${config.publicUrl}  (reference: ${config.publicUrl}/, health: ${config.publicUrl}/healthz)\n`,
  );

  stopOnSignals(logger, async () => {
    await running.close();
    await service.close();
  });
}

main().catch(exitOnStartFailure);

import { withHealthCheck } from "./app.js";
import { composeService } from "./compose.js";
import { withListenerUrl } from "./config.js";
import { exitOnStartFailure, loadConfigOrExit, stopOnSignals } from "./lifecycle.js";
import { createLogger } from "./logger.js";
import { openListener } from "./server.js";

/** Composes the service from validated configuration and runs it until SIGTERM or SIGINT. */
async function main(): Promise<void> {
  const loaded = loadConfigOrExit();
  const logger = createLogger(loaded.logLevel);
  // Bound first, so that PORT=0 is resolved before anything is built on the public origin.
  const running = await openListener(loaded.host, loaded.port, {
    keepAliveTimeoutMs: loaded.keepAliveTimeoutMs,
    headersTimeoutMs: loaded.connections.headersTimeoutMs,
    requestTimeoutMs: loaded.connections.requestTimeoutMs,
    connectionsPerAddress: loaded.connections.perAddress,
  });
  const config = withListenerUrl(loaded, running.url);
  const service = await composeService(config, logger);
  running.serve(withHealthCheck(service.app));
  await service.start();
  logger.info(
    { url: running.url, publicUrl: config.publicUrl, store: `${service.db.kind} ${service.db.location}` },
    "agent-tools listening",
  );
  // Behind a proxy the public origin is not the address listened on: both are said.
  const listening = running.url === config.publicUrl ? "" : `listening on ${running.url}; `;
  process.stdout.write(
    `Agent Tools API on ${config.publicUrl}  (${listening}reference: ${config.publicUrl}/, health: ${config.publicUrl}/healthz)\n`,
  );
  if (service.metricsUrl) process.stdout.write(`Metrics on ${service.metricsUrl}\n`);

  stopOnSignals(logger, async () => {
    await running.close();
    await service.close();
  });
}

main().catch(exitOnStartFailure);

import { withListenerUrl } from "../config/config.js";
import { bindMetricsServer } from "../metrics/metrics-server.js";
import { storeDescription } from "../store/database.js";
import { exitOnStartFailure, loadConfigOrExit, stopOnSignals } from "./lifecycle.js";
import { createLogger } from "./logger.js";
import { openListener } from "./server.js";
import { portRefusal } from "./startup-checks.js";

/** Composes the service from validated configuration and runs it until SIGTERM or SIGINT. */
async function main(): Promise<void> {
  const loaded = loadConfigOrExit();
  const logger = createLogger(loaded.logLevel);
  // The ports are bound first: PORT=0 is resolved before anything is built on the public origin, and a port in use
  // is reported before any other work.
  const running = await openListener(loaded.host, loaded.port, {
    keepAliveTimeoutMs: loaded.keepAliveTimeoutMs,
    headersTimeoutMs: loaded.connections.headersTimeoutMs,
    requestTimeoutMs: loaded.connections.requestTimeoutMs,
    connectionsPerAddress: loaded.connections.perAddress,
  }).catch(portRefusal("PORT", loaded.host, loaded.port));
  const metricsServer =
    loaded.metricsPort !== undefined
      ? await bindMetricsServer(loaded.host, loaded.metricsPort).catch(
          portRefusal("METRICS_PORT", loaded.host, loaded.metricsPort),
        )
      : undefined;
  const config = withListenerUrl(loaded, running.url);
  // The service's modules load only once the configuration is read and the ports are bound: a refused start is
  // reported at once, without first loading what a running service needs (docs/architecture.md, "Composition").
  const [{ composeService }, { withHealthCheck }] = await Promise.all([import("./compose.js"), import("./app.js")]);
  const service = await composeService(config, logger, metricsServer ? { metricsServer } : {});
  running.serve(withHealthCheck(service.app));
  await service.start();
  const store = storeDescription(service.db);
  logger.info({ url: running.url, publicUrl: config.publicUrl, store }, "agent-tools listening");
  // Behind a proxy the public origin is not the address listened on: both are said. Then which store holds the
  // ledger, at every start: Postgres (host and database), or the embedded store's directory. One write: a reader
  // waiting for the first line finds the second with it.
  const listening = running.url === config.publicUrl ? "" : `listening on ${running.url}; `;
  process.stdout.write(
    `Agent Tools API on ${config.publicUrl}  (${listening}reference: ${config.publicUrl}/, health: ${config.publicUrl}/healthz)\n` +
      (service.db.kind === "pglite"
        ? `Ledger and missions: ${store} (the embedded store: one instance only; back it up by copying the directory while stopped)\n`
        : `Ledger and missions: ${store}\n`),
  );
  if (service.metricsUrl) process.stdout.write(`Metrics on ${service.metricsUrl}\n`);

  stopOnSignals(logger, async () => {
    await running.close();
    await service.close();
  });
}

main().catch(exitOnStartFailure);

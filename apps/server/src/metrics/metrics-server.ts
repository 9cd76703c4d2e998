/**
 * The metrics endpoint, on a port of its own (`METRICS_PORT`): `GET /metrics` in Prometheus text format. Kept off
 * the API's port so that it is never public by accident. The port is bound first (a taken port is reported before
 * anything else starts) and serves once the registry exists.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

export interface MetricsServer {
  /** `http://<host>:<port>/metrics` */
  url: string;
  /** Starts answering from `registry`; until then `GET /metrics` is 503. */
  serve(registry: Registry): void;
  close(): Promise<void>;
}

export async function bindMetricsServer(host: string, port: number): Promise<MetricsServer> {
  let registry: Registry | undefined;
  const server = createServer((req, res) => {
    if (req.method !== "GET" || req.url !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("GET /metrics\n");
      return;
    }
    if (!registry) {
      res.writeHead(503, { "content-type": "text/plain", "retry-after": "1" }).end("starting\n");
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry!.contentType }).end(text),
      () => res.writeHead(500, { "content-type": "text/plain" }).end("metrics could not be collected\n"),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${bound}/metrics`,
    serve(next) {
      registry = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Binds and serves `registry` at once. */
export async function startMetricsServer(registry: Registry, host: string, port: number): Promise<MetricsServer> {
  const server = await bindMetricsServer(host, port);
  server.serve(registry);
  return server;
}

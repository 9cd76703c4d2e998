import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** How long an idle keep-alive connection stays open by default: longer than load balancers and clients keep one. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 65_000;

export interface ListenOptions {
  /**
   * How long an idle keep-alive connection is kept open (default {@link DEFAULT_KEEP_ALIVE_TIMEOUT_MS}). It must
   * outlast the idle time of every client and proxy in front: a client that sends its next request just as the
   * server closes the idle socket sees the connection reset (docs/architecture.md, "Connections").
   */
  keepAliveTimeoutMs?: number;
}

export interface RunningServer {
  server: Server;
  /** `http://host:port` the server listens on (the port it was given, or the one picked for port 0). */
  url: string;
  /**
   * Starts answering with `handler`. Until then every request gets 503 `starting` with `Retry-After: 1`: the
   * socket is bound first so that the address is known (port 0) before the service is composed around it.
   */
  serve(handler: RequestListener): void;
  /** Stops accepting connections, lets requests in flight finish, then closes idle keep-alive sockets. */
  close(): Promise<void>;
}

const STARTING_BODY = JSON.stringify({
  error: { code: "starting", message: "The service is starting; try again in a moment.", details: [] },
});

/** Binds host:port (port 0 picks a free one) and resolves once the socket is bound; see {@link RunningServer.serve}. */
export function openListener(host: string, port: number, options: ListenOptions = {}): Promise<RunningServer> {
  let handler: RequestListener = (_req, res) => {
    res.writeHead(503, { "content-type": "application/json; charset=utf-8", "retry-after": "1" }).end(STARTING_BODY);
  };
  const server = createServer((req, res) => handler(req, res));
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address() as AddressInfo;
      const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
      resolve({
        server,
        url: `http://${shownHost}:${address.port}`,
        serve(next) {
          handler = next;
        },
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            server.closeIdleConnections();
          }),
      });
    });
  });
}

/** Listens on host:port (port 0 picks a free one) with `handler` (an Express app), once the socket is bound. */
export async function listen(
  handler: RequestListener,
  host: string,
  port: number,
  options: ListenOptions = {},
): Promise<RunningServer> {
  const running = await openListener(host, port, options);
  running.serve(handler);
  return running;
}

import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { DEFAULT_CONNECTION_LIMITS } from "../config/config-env.js";

/** How long an idle keep-alive connection stays open by default: longer than load balancers and clients keep one. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 65_000;

export interface ListenOptions {
  /**
   * How long an idle keep-alive connection is kept open (default {@link DEFAULT_KEEP_ALIVE_TIMEOUT_MS}). It must
   * outlast the idle time of every client and proxy in front: a client that sends its next request just as the
   * server closes the idle socket sees the connection reset (docs/architecture.md, "Connections").
   */
  keepAliveTimeoutMs?: number;
  /** Time to receive a request's headers, then the whole request; past it, 408 and the socket closes. */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /**
   * Connections open at once from one client address; more are closed as they come (0: no bound, as behind a
   * proxy, whose own address would be bounded otherwise).
   */
  connectionsPerAddress?: number;
}

/** The JSON error body of an answer the HTTP parser gives itself, when a request cannot even be read. */
function clientErrorAnswer(error: NodeJS.ErrnoException): string {
  const [status, reason, code, message] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? [431, "Request Header Fields Too Large", "headers_too_large", "The request's headers are too large."]
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "Request Timeout", "request_timeout", "The request was not received in time."]
        : [400, "Bad Request", "invalid_request", "The request is not valid HTTP/1.1."];
  const body = JSON.stringify({ error: { code, message, details: [] } });
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
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
  const headersTimeout = options.headersTimeoutMs ?? DEFAULT_CONNECTION_LIMITS.headersTimeoutMs;
  const requestTimeout = Math.max(
    options.requestTimeoutMs ?? DEFAULT_CONNECTION_LIMITS.requestTimeoutMs,
    headersTimeout,
  );
  const server = createServer(
    {
      headersTimeout,
      requestTimeout,
      // How often the two timeouts are looked at: their bound holds to within this.
      connectionsCheckingInterval: Math.min(1000, headersTimeout),
    },
    (req, res) => handler(req, res),
  );
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  // What the parser answers itself (a request it cannot read, headers too large, too slow) in the service's shape.
  const answered = new WeakSet<Socket>();
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    if (!socket.writable || error.code === "ECONNRESET") {
      socket.destroy();
      return;
    }
    // The answer, then the end of our side. What the client still sends is read and dropped (closing on unread
    // bytes would reset the connection before the client reads the answer); a client that keeps its side open
    // is cut off a moment later.
    socket.end(clientErrorAnswer(error));
    setTimeout(() => socket.destroy(), 1000).unref();
  });
  const perAddress = options.connectionsPerAddress ?? DEFAULT_CONNECTION_LIMITS.perAddress;
  if (perAddress > 0) {
    const open = new Map<string, number>();
    server.on("connection", (socket: Socket) => {
      const address = socket.remoteAddress ?? "";
      const count = (open.get(address) ?? 0) + 1;
      if (count > perAddress) {
        socket.destroy();
        return;
      }
      open.set(address, count);
      socket.once("close", () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left > 0) open.set(address, left);
        else open.delete(address);
      });
    });
  }
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

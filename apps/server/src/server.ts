import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";

export interface RunningServer {
  server: Server;
  /** `http://host:port` the server listens on. */
  url: string;
  /** Stops accepting connections, lets requests in flight finish, then closes idle keep-alive sockets. */
  close(): Promise<void>;
}

/** Listens on host:port (port 0 picks a free one) and resolves once the socket is bound. */
export function listen(app: Express, host: string, port: number): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once("error", reject);
    server.once("listening", () => {
      server.off("error", reject);
      const address = server.address() as AddressInfo;
      const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
      resolve({
        server,
        url: `http://${shownHost}:${address.port}`,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            server.closeIdleConnections();
          }),
      });
    });
  });
}

/**
 * The reference side of the bench, in a process of its own (bench/run.ts forks it): a bare Express 5 app and the
 * reference x402 app (bench/apps.ts), and, when asked, a JSON-RPC proxy that holds every call for a while before
 * passing it on, standing for a remote chain. Reports its addresses over IPC and stops when told to.
 */
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { bareExpressApp, type ReferenceTerms, referenceApp } from "./apps.js";

export type ToReferenceHost =
  | { type: "start"; terms: ReferenceTerms; infoBody: string; answer: string }
  | { type: "delay"; targets: Record<string, string>; delayMs: number }
  | { type: "close" };

export type FromReferenceHost =
  | { type: "ready"; bare: string; reference: string }
  | { type: "delayed"; urls: Record<string, string> }
  | { type: "failed"; message: string };

const servers: Server[] = [];
const send = (message: FromReferenceHost) => process.send?.(message);

function serve(server: Server): Promise<string> {
  servers.push(server);
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

const listenApp = (app: Express) => serve(createServer(app));

/** Passes each request to `target` after `delayMs`, as a chain `delayMs` away would answer. */
function delayingProxy(target: string, delayMs: number): Server {
  const origin = new URL(target);
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      setTimeout(() => {
        const upstream = httpRequest(
          { hostname: origin.hostname, port: origin.port, path: req.url, method: req.method, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        upstream.on("error", () => res.writeHead(502).end());
        upstream.end(Buffer.concat(chunks));
      }, delayMs);
    });
  });
}

process.on("message", async (message: ToReferenceHost) => {
  try {
    if (message.type === "start") {
      const bare = await listenApp(bareExpressApp(message.infoBody));
      const reference = await listenApp(await referenceApp(message.terms, message.answer));
      send({ type: "ready", bare, reference });
    } else if (message.type === "delay") {
      const urls: Record<string, string> = {};
      for (const [name, target] of Object.entries(message.targets)) {
        urls[name] = await serve(delayingProxy(target, message.delayMs));
      }
      send({ type: "delayed", urls });
    } else {
      for (const server of servers) {
        server.close();
        server.closeAllConnections();
      }
      process.disconnect();
    }
  } catch (error) {
    send({ type: "failed", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
process.on("disconnect", () => process.exit(0));

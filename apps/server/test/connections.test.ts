/**
 * What a client that does not play fair gets from the HTTP server (server.ts): a socket that trickles its headers or
 * its body is answered 408 and closed once its time is up; an address that opens more connections than its share
 * has the extra ones closed; a request the parser cannot read gets the documented error body, not an empty one.
 */
import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { errorBodySchema } from "@agent-tools/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openListener, type RunningServer } from "../src/startup/server.js";

/** Short request timeouts, for the slow clients; the shipped ones, and a bound of 4 connections, for the rest. */
let slow: RunningServer;
let bounded: RunningServer;
const portOf = (server: RunningServer) => Number(new URL(server.url).port);

beforeAll(async () => {
  const answer = (server: RunningServer) =>
    server.serve((req, res) => {
      req.resume();
      req.on("end", () =>
        res.writeHead(200, { "content-type": "application/json", "content-length": "11" }).end('{"ok":true}'),
      );
    });
  slow = await openListener("127.0.0.1", 0, { headersTimeoutMs: 300, requestTimeoutMs: 600 });
  bounded = await openListener("127.0.0.1", 0, { connectionsPerAddress: 4 });
  answer(slow);
  answer(bounded);
});
afterAll(async () => {
  for (const server of [slow, bounded]) {
    server?.server.closeAllConnections();
    await server?.close();
  }
});

/** A raw connection to a server, with everything it receives until it closes. */
async function open(
  server: RunningServer = slow,
): Promise<{ socket: Socket; received: () => string; closed: Promise<unknown> }> {
  const socket = connect(portOf(server), "127.0.0.1");
  let text = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    text += chunk;
  });
  socket.on("error", () => {});
  const closed = once(socket, "close");
  await once(socket, "connect");
  return { socket, received: () => text, closed };
}

/** The status line and the JSON error body of a raw answer. */
function answerOf(raw: string): { status: number; body: unknown } {
  const [head, body = ""] = raw.split("\r\n\r\n");
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? "")?.[1] ?? 0),
    body: body ? JSON.parse(body) : undefined,
  };
}

describe("slow clients", () => {
  it("a client that trickles its headers is answered 408 and the socket is closed", async () => {
    const { socket, received, closed } = await open();
    socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    await closed;
    const answer = answerOf(received());
    expect(answer.status).toBe(408);
    expect(errorBodySchema.parse(answer.body).error.code).toBe("request_timeout");
  });

  it("a client that trickles its body is answered 408 and the socket is closed", async () => {
    const { socket, received, closed } = await open();
    socket.write(
      "POST /intel HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    );
    await closed;
    expect(answerOf(received()).status).toBe(408);
  });

  it("a connection that never sends a request is answered 408 and closed", async () => {
    const { received, closed } = await open();
    await closed;
    expect(answerOf(received()).status).toBe(408);
  });
});

describe("idle connections", () => {
  it("an address's whole allowance of connections that never send a byte nor read one is back within the headers bound", async () => {
    // Short bounds, and 4 connections an address.
    const idle = await openListener("127.0.0.1", 0, { headersTimeoutMs: 300, connectionsPerAddress: 4 });
    idle.serve((_req, res) =>
      res.writeHead(200, { "content-type": "application/json", "content-length": "11" }).end('{"ok":true}'),
    );
    const serverSide: Socket[] = [];
    idle.server.on("connection", (socket: Socket) => serverSide.push(socket));
    try {
      const opened = performance.now();
      const held = await Promise.all(Array.from({ length: 4 }, () => open(idle)));
      // Clients that never read: the 408 and the server's FIN wait in their sockets, unseen.
      for (const { socket } of held) socket.pause();
      const extra = await open(idle);
      await extra.closed;
      expect(extra.received(), "over the allowance").toBe("");
      // The server closes its side of each at the bound: the address has its allowance back.
      await Promise.all(serverSide.slice(0, 4).map((socket) => (socket.closed ? undefined : once(socket, "close"))));
      const closedAfter = performance.now() - opened;
      expect(closedAfter).toBeGreaterThanOrEqual(300);
      // The bound, the 1 s checks are made at (here the bound itself) and the second a client gets to read its 408.
      expect(closedAfter).toBeLessThan(300 + 300 + 1000 + 5000);
      const again = await open(idle);
      again.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
      await again.closed;
      expect(answerOf(again.received()).status).toBe(200);
      for (const { socket } of held) socket.destroy();
    } finally {
      idle.server.closeAllConnections();
      await idle.close();
    }
  });
});

describe("kept-alive connections", () => {
  it("an idle kept-alive connection is closed by the server once its keep-alive time is up", async () => {
    const kept = await openListener("127.0.0.1", 0, { keepAliveTimeoutMs: 300 });
    kept.serve((_req, res) =>
      res.writeHead(200, { "content-type": "application/json", "content-length": "11" }).end('{"ok":true}'),
    );
    try {
      const { socket, received, closed } = await open(kept);
      // Counted from before the request: the server's keep-alive time starts after it answers.
      const sent = performance.now();
      socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      await once(socket, "data");
      expect(answerOf(received()).status).toBe(200);
      await closed;
      const openFor = performance.now() - sent;
      expect(openFor).toBeGreaterThanOrEqual(300);
      // Node 24 keeps it a second longer than it tells the client (keepAliveTimeoutBuffer); the rest is slack.
      expect(openFor).toBeLessThan(300 + 1000 + 5000);
    } finally {
      await kept.close();
    }
  });
});

describe("connections per address", () => {
  it("closes the connections an address opens beyond its share, and serves the others", async () => {
    const held = await Promise.all(Array.from({ length: 4 }, () => open(bounded)));
    const extra = await open(bounded);
    await extra.closed;
    expect(extra.received()).toBe("");
    // The four within the bound are served.
    const first = held[0]!;
    first.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    await first.closed;
    expect(answerOf(first.received()).status).toBe(200);
    for (const { socket } of held) socket.destroy();
    await Promise.all(held.map((h) => h.closed));
    // Once they are gone, the address may connect again.
    const again = await open(bounded);
    again.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    await again.closed;
    expect(answerOf(again.received()).status).toBe(200);
  });
});

describe("requests the parser cannot read", () => {
  it.each([
    ["a malformed request line", "NOT A REQUEST\r\n\r\n", 400, "invalid_request"],
    [
      "3,000 headers",
      `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`).join("\r\n")}\r\n\r\n`,
      431,
      "headers_too_large",
    ],
  ])("%s: answered with the documented error body", async (_, raw, status, code) => {
    const { socket, received, closed } = await open(bounded);
    socket.write(raw);
    await closed;
    const answer = answerOf(received());
    expect(answer.status).toBe(status);
    expect(errorBodySchema.parse(answer.body).error.code).toBe(code);
  });
});

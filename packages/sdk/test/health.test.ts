import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createAgentToolsClient, NetworkError, UnexpectedResponseError } from "../src/index.js";

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  server = undefined;
});

async function serve(status: number, body: string): Promise<string> {
  server = createServer((_req, res) => {
    res.writeHead(status, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((done) => server!.listen(0, "127.0.0.1", done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("client.health", () => {
  it("returns the validated health body", async () => {
    const baseUrl = await serve(200, JSON.stringify({ ok: true, service: "agent-tools" }));
    await expect(createAgentToolsClient({ baseUrl: `${baseUrl}/` }).health()).resolves.toEqual({
      ok: true,
      service: "agent-tools",
    });
  });

  it("rejects a body that breaks the contract", async () => {
    const baseUrl = await serve(200, JSON.stringify({ ok: "yes" }));
    await expect(createAgentToolsClient({ baseUrl }).health()).rejects.toBeInstanceOf(UnexpectedResponseError);
  });

  it("throws NetworkError when nothing listens", async () => {
    const baseUrl = await serve(200, "{}");
    await new Promise<void>((done) => server!.close(() => done()));
    server = undefined;
    await expect(createAgentToolsClient({ baseUrl }).health()).rejects.toBeInstanceOf(NetworkError);
  });
});

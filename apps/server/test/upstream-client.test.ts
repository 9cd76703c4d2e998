import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { startFaultProxy } from "@agent-tools/upstream-sim";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ServiceError } from "../src/errors/service-error.js";
import { createRequestBudget } from "../src/limits/request-budget.js";
import { createUpstreamClient } from "../src/upstream/upstream-client.js";

let server: Server | undefined;
let hits = 0;
afterEach(async () => {
  const closed = new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  // Connections a hung handler left open are closed now, not when their keep-alive runs out.
  server?.closeAllConnections();
  await closed;
  server = undefined;
  hits = 0;
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse, hit: number) => void): Promise<string> {
  server = createServer((req, res) => handler(req, res, ++hits));
  await new Promise<void>((done) => server!.listen(0, "127.0.0.1", done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
const schema = z.object({ value: z.number() });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: unknown) => e as ServiceError,
  );

describe("upstream client", () => {
  it("spends a key's budget on requests sent, none on cached answers, and past it answers 503 without asking", async () => {
    const baseUrl = await serve((_req, res) => json(res, 200, { value: 1 }));
    // Two clients on one key's budget of three requests a minute (instances share it through Postgres: store.test).
    const shared = createRequestBudget(3, { name: "marketplace", key: "api-key" })!;
    const [one, two] = [0, 1].map(() => createUpstreamClient({ name: "the marketplace", baseUrl, budget: shared }));
    await one!.get("/a", { schema });
    await one!.get("/a", { schema }); // cached: no request, nothing spent
    await two!.get("/b", { schema });
    await two!.get("/c", { schema });
    const error = await failure(one!.get("/d", { schema }));
    expect(error!.code).toBe("upstream_unavailable");
    expect(error!.message).toMatch(/budget for this minute is spent/);
    expect(Number(error!.headers["Retry-After"])).toBeGreaterThan(0);
    expect(hits).toBe(3);
  });

  it("retries a 429, honouring Retry-After, then answers", async () => {
    const baseUrl = await serve((_req, res, hit) =>
      hit === 1 ? json(res, 429, {}, { "retry-after": "0" }) : json(res, 200, { value: 1 }),
    );
    const client = createUpstreamClient({ name: "the marketplace", baseUrl });
    expect(await client.get("/x", { schema })).toEqual({ value: 1 });
    expect(hits).toBe(2);
  });

  it("gives 503 upstream_unavailable with Retry-After when the upstream keeps refusing", async () => {
    const baseUrl = await serve((_req, res) => json(res, 503, {}, { "retry-after": "30" }));
    const error = await failure(createUpstreamClient({ name: "the marketplace", baseUrl }).get("/x", { schema }));
    expect(error).toBeInstanceOf(ServiceError);
    expect(error!.code).toBe("upstream_unavailable");
    expect(error!.headers["Retry-After"]).toBe("30");
    expect(hits).toBe(1); // 30 s is longer than the client waits for itself
  });

  it("gives 502 upstream_error after retrying 500s with backoff", async () => {
    const baseUrl = await serve((_req, res) => json(res, 500, {}));
    const error = await failure(
      createUpstreamClient({ name: "x", baseUrl, retries: 2, backoffMs: 5 }).get("/x", { schema }),
    );
    expect(error!.code).toBe("upstream_error");
    expect(hits).toBe(3);
  });

  it("gives 504 upstream_timeout when the upstream does not answer", async () => {
    const baseUrl = await serve(() => {});
    const error = await failure(
      createUpstreamClient({ name: "x", baseUrl, timeoutMs: 100, retries: 0 }).get("/x", { schema }),
    );
    expect(error!.code).toBe("upstream_timeout");
  });

  it("spends one timeout on a hung upstream, whatever the retries: the deadline is the call's", async () => {
    const baseUrl = await serve(() => {});
    const error = await failure(
      createUpstreamClient({ name: "x", baseUrl, timeoutMs: 150, retries: 2, backoffMs: 1 }).get("/x", { schema }),
    );
    expect(error!.code).toBe("upstream_timeout");
    expect(error!.message).toMatch(/did not answer within 150 ms/);
    // The one attempt took the whole budget: no second request was started.
    expect(hits).toBe(1);
  });

  it("does not count the wait for a free slot against the upstream's timeout", async () => {
    // Each answer takes 250 ms, far within the 2000 ms timeout (a loaded machine may add much to it); with one
    // request at a time, the tenth call waits 2250 ms for its slot behind the other nine.
    const baseUrl = await serve((_req, res) => void setTimeout(() => json(res, 200, { value: 1 }), 250));
    const client = createUpstreamClient({ name: "x", baseUrl, timeoutMs: 2000, retries: 0, maxConcurrency: 1 });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => client.get(`/p${i}`, { schema })));
    expect(answers).toEqual(Array.from({ length: 10 }, () => ({ value: 1 })));
    expect(hits).toBe(10);
  });

  it("refuses the calls still waiting for a slot once a hung upstream has opened the circuit, without asking it", async () => {
    const baseUrl = await serve(() => {});
    const client = createUpstreamClient({
      name: "x",
      baseUrl,
      timeoutMs: 200,
      retries: 0,
      maxConcurrency: 2,
      failureThreshold: 1,
    });
    // The first two are in flight together and time out; the first timeout opens the circuit, so the four waiting
    // for a slot are refused with 503 when they get it.
    const errors = await Promise.all(Array.from({ length: 6 }, (_, i) => failure(client.get(`/p${i}`, { schema }))));
    expect(errors.map((e) => e!.code)).toEqual([
      "upstream_timeout",
      "upstream_timeout",
      "upstream_unavailable",
      "upstream_unavailable",
      "upstream_unavailable",
      "upstream_unavailable",
    ]);
    expect(hits).toBe(2);
  });

  it("sends a request again when its connection is reset under it (as a kept-alive socket closed under it), and answers", async () => {
    const baseUrl = await serve((req, res) => json(res, 200, { value: Number(req.url?.slice(2)) }));
    const proxy = await startFaultProxy(baseUrl);
    try {
      const client = createUpstreamClient({ name: "x", baseUrl: proxy.url, backoffMs: 1 });
      expect(await client.get("/x1", { schema })).toEqual({ value: 1 });
      proxy.resetNext();
      expect(await client.get("/x2", { schema })).toEqual({ value: 2 });
      expect(proxy.requests().map((r) => [r.url, r.fate])).toEqual([
        ["/x1", "forwarded"],
        ["/x2", "reset"],
        ["/x2", "forwarded"],
      ]);
      expect(hits).toBe(2);
    } finally {
      await proxy.close();
    }
  });

  it("gives 502 upstream_error for an answer cut off after its headers, after retrying it", async () => {
    const baseUrl = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "64" });
      // The headers and the start of the body go out; the connection drops once they are on their way.
      res.write('{"value":', () => res.socket?.destroy());
    });
    const error = await failure(createUpstreamClient({ name: "x", baseUrl, backoffMs: 1 }).get("/x", { schema }));
    expect(error!.code).toBe("upstream_error");
    expect(error!.message).toMatch(/cut its answer short/);
    expect(hits).toBe(3);
  });

  it("gives 504 upstream_timeout when the body is slower than the timeout", async () => {
    const baseUrl = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "64" });
      res.write('{"value":');
    });
    const error = await failure(
      createUpstreamClient({ name: "x", baseUrl, timeoutMs: 200, retries: 0 }).get("/x", { schema }),
    );
    expect(error!.code).toBe("upstream_timeout");
  });

  it("gives 502 for a malformed body or a wrong shape", async () => {
    const baseUrl = await serve((req, res) =>
      req.url === "/text" ? res.writeHead(200).end("<html>") : json(res, 200, { value: "one" }),
    );
    const client = createUpstreamClient({ name: "x", baseUrl });
    expect((await failure(client.get("/text", { schema })))!.code).toBe("upstream_error");
    expect((await failure(client.get("/shape", { schema })))!.code).toBe("upstream_error");
  });

  it("opens the circuit after repeated failures and stops calling", async () => {
    const baseUrl = await serve((_req, res) => json(res, 500, {}));
    const client = createUpstreamClient({ name: "x", baseUrl, retries: 0, failureThreshold: 3, cooldownMs: 60_000 });
    for (let i = 0; i < 3; i++) await failure(client.get(`/x${i}`, { schema }));
    const error = await failure(client.get("/y", { schema }));
    expect(error!.code).toBe("upstream_unavailable");
    expect(Number(error!.headers["Retry-After"])).toBeGreaterThan(50);
    expect(hits).toBe(3);
  });

  it("reuses an answer within its TTL and shares one request among concurrent callers", async () => {
    const baseUrl = await serve((_req, res) => setTimeout(() => json(res, 200, { value: 7 }), 50));
    const client = createUpstreamClient({ name: "x", baseUrl, cacheTtlMs: 60_000 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => client.get("/same", { schema })));
    expect(answers.every((a) => a?.value === 7)).toBe(true);
    await client.get("/same", { schema });
    expect(hits).toBe(1);
    expect(client.requestCount).toBe(1);
  });

  it("keeps at most maxConcurrency requests in flight", async () => {
    const held: ServerResponse[] = [];
    let peak = 0;
    let arrived = () => {};
    const baseUrl = await serve((_req, res) => {
      held.push(res);
      peak = Math.max(peak, held.length);
      arrived();
    });
    const client = createUpstreamClient({ name: "x", baseUrl, maxConcurrency: 3 });
    const all = Promise.all(Array.from({ length: 12 }, (_, i) => client.get(`/p${i}`, { schema })));
    // The server holds every answer; once three requests are in, it answers one, which lets exactly one more in.
    for (let answered = 0; answered < 12; answered++) {
      while (held.length < Math.min(3, 12 - answered)) {
        await new Promise<void>((resolve) => {
          arrived = resolve;
        });
      }
      expect(client.requestCount).toBe(answered + held.length);
      json(held.shift()!, 200, { value: 1 });
    }
    await all;
    expect(peak).toBe(3);
  });

  it("answers null for a 404 when asked to", async () => {
    const baseUrl = await serve((_req, res) => json(res, 404, { errors: ["not found"] }));
    expect(
      await createUpstreamClient({ name: "x", baseUrl }).get("/none", { schema, notFoundAsNull: true }),
    ).toBeNull();
  });

  it("remembers a 404 for a while: asking again for what is not there sends no request", async () => {
    let clock = 1_000_000;
    const baseUrl = await serve((_req, res) => json(res, 404, { errors: ["not found"] }));
    const client = createUpstreamClient({ name: "x", baseUrl, notFoundTtlMs: 60_000, now: () => clock });
    expect(await client.get("/none", { schema, notFoundAsNull: true })).toBeNull();
    expect(await client.get("/none", { schema, notFoundAsNull: true })).toBeNull();
    // Asked without notFoundAsNull, the remembered 404 is the same 502 a fresh one would give.
    expect((await failure(client.get("/none", { schema })))!.code).toBe("upstream_error");
    expect(hits).toBe(1);
    clock += 60_001;
    expect(await client.get("/none", { schema, notFoundAsNull: true })).toBeNull();
    expect(hits).toBe(2);
  });

  it("refuses at once with 503 and Retry-After when more requests wait than the queue holds", async () => {
    const held: ServerResponse[] = [];
    let arrived = () => {};
    const baseUrl = await serve((_req, res) => {
      held.push(res);
      arrived();
    });
    const client = createUpstreamClient({ name: "the marketplace", baseUrl, maxConcurrency: 1, maxQueue: 2 });
    const inFlight = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const accepted = [0, 1, 2].map((i) => client.get(`/p${i}`, { schema }));
    await inFlight;
    // One in flight, two waiting: the fourth is turned away without waiting or reaching the upstream.
    const refused = await failure(client.get("/p3", { schema }));
    expect(refused!.code).toBe("upstream_unavailable");
    expect(refused!.headers["Retry-After"]).toBe("1");
    expect(refused!.message).toMatch(/busy/);
    expect(client.requestCount).toBe(1);
    // The ones that waited are served in turn.
    for (let i = 0; i < 3; i++) {
      while (held.length === 0) {
        await new Promise<void>((resolve) => {
          arrived = resolve;
        });
      }
      json(held.shift()!, 200, { value: i });
    }
    expect(await Promise.all(accepted)).toEqual([{ value: 0 }, { value: 1 }, { value: 2 }]);
  });
});

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  AgentToolsError,
  accountFromPrivateKey,
  createAgentToolsClient,
  InvalidPrivateKeyError,
  NetworkError,
  NotFoundError,
  type PaymentRequiredError,
  UnexpectedResponseError,
  UpstreamError,
  ValidationError,
} from "../src/index.js";

let server: Server | undefined;
let calls = 0;
afterEach(async () => {
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  server = undefined;
  calls = 0;
});

/** A fake service answering every request with `status`, `body` and `headers`. */
async function serve(status: number, body: unknown, headers: Record<string, string> = {}): Promise<string> {
  server = createServer((_req, res) => {
    calls++;
    res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
  });
  await new Promise<void>((done) => server!.listen(0, "127.0.0.1", done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const errorBody = (code: string, message: string, details: unknown[] = []) => ({ error: { code, message, details } });

describe("errors of tool calls", () => {
  it("maps 503 to UpstreamError with Retry-After, and does not retry a paid route", async () => {
    const baseUrl = await serve(503, errorBody("upstream_unavailable", "The marketplace is unavailable."), {
      "retry-after": "30",
    });
    const error = await createAgentToolsClient({ baseUrl })
      .dropRadar({ tokenId: 1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).code).toBe("upstream_unavailable");
    expect((error as UpstreamError).retryAfterSeconds).toBe(30);
    expect(calls).toBe(1);
  });

  it("maps a 400 of the service to ValidationError with its fields", async () => {
    const baseUrl = await serve(400, errorBody("invalid_request", "bad", [{ field: "tokenId", message: "no" }]));
    const error = await createAgentToolsClient({ baseUrl })
      .intel({ tokenId: 1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).fields).toEqual(["tokenId"]);
  });

  it("rejects a 200 that breaks the response contract", async () => {
    const baseUrl = await serve(200, { tokenId: 1 });
    await expect(createAgentToolsClient({ baseUrl }).intel({ tokenId: 1 })).rejects.toBeInstanceOf(
      UnexpectedResponseError,
    );
  });
});

describe("errors of public routes", () => {
  it("maps 404 to NotFoundError", async () => {
    const baseUrl = await serve(404, errorBody("agent_not_revealed", "Agent 6500 is not revealed yet."));
    const error = await createAgentToolsClient({ baseUrl })
      .agentInfo(6500)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).code).toBe("agent_not_revealed");
  });

  it("retries a public GET on network errors, then throws NetworkError", async () => {
    let attempts = 0;
    const failing: typeof fetch = async () => {
      attempts++;
      throw new TypeError("fetch failed");
    };
    const error = await createAgentToolsClient({ baseUrl: "http://127.0.0.1:9", fetch: failing })
      .health()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(attempts).toBe(3);
  });

  it("sends a tool call's request again on a network error, three attempts in all, then throws NetworkError", async () => {
    let attempts = 0;
    const failing: typeof fetch = async () => {
      attempts++;
      throw new TypeError("fetch failed");
    };
    await expect(
      createAgentToolsClient({ baseUrl: "http://127.0.0.1:9", fetch: failing }).intel({ tokenId: 1 }),
    ).rejects.toBeInstanceOf(NetworkError);
    expect(attempts).toBe(3);
  });

  it("treats an answer cut off in its body as a network error, and asks again", async () => {
    let attempts = 0;
    const cutThenWhole: typeof fetch = async () => {
      attempts++;
      const body =
        attempts === 1
          ? new ReadableStream({
              start(controller) {
                controller.enqueue(new TextEncoder().encode('{"ok":'));
                controller.error(new TypeError("terminated"));
              },
            })
          : JSON.stringify({ ok: true, service: "agent-tools" });
      return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
    };
    const health = await createAgentToolsClient({ baseUrl: "http://127.0.0.1:9", fetch: cutThenWhole }).health();
    expect(health).toEqual({ ok: true, service: "agent-tools" });
    expect(attempts).toBe(2);
  });
});

describe("one error base with a code", () => {
  it("every error the client throws is an AgentToolsError whose code says which kind it is", async () => {
    const refused: typeof fetch = async () => {
      throw new TypeError("fetch failed");
    };
    const network = await createAgentToolsClient({ baseUrl: "http://127.0.0.1:9", fetch: refused })
      .health()
      .catch((e: unknown) => e);
    const upstream = await createAgentToolsClient({
      baseUrl: await serve(504, errorBody("upstream_timeout", "The marketplace did not answer in time.")),
    })
      .dropRadar({ tokenId: 1 })
      .catch((e: unknown) => e);
    await new Promise<void>((done) => server!.close(() => done()));
    const unexpected = await createAgentToolsClient({ baseUrl: await serve(200, { nope: true }) })
      .health()
      .catch((e: unknown) => e);
    await new Promise<void>((done) => server!.close(() => done()));
    const quote = { x402Version: 2, error: "", resource: { url: "http://x/intel" }, accepts: [] };
    const unpaid = await createAgentToolsClient({ baseUrl: await serve(402, quote) })
      .intel({ tokenId: 1 })
      .catch((e: unknown) => e);
    const local = await createAgentToolsClient({ baseUrl: "http://127.0.0.1:9" })
      .intel({ tokenId: -1 })
      .catch((e: unknown) => e);

    const codes = [network, upstream, unexpected, unpaid, local].map((error) => {
      expect(error).toBeInstanceOf(AgentToolsError);
      return [(error as AgentToolsError).name, (error as AgentToolsError).code];
    });
    expect(codes).toEqual([
      ["NetworkError", "network_error"],
      ["UpstreamError", "upstream_timeout"],
      ["UnexpectedResponseError", "unexpected_response"],
      ["PaymentRequiredError", "payment_required"],
      ["ValidationError", "invalid_request"],
    ]);
    expect((unpaid as PaymentRequiredError).reason).toBe("no_price");
  });
});

describe("accountFromPrivateKey", () => {
  const valid = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
  it.each([
    [
      "0x12",
      /^The private key is 2 hex digits long after 0x, not 64: a private key is 0x followed by 64 hex digits \(32 bytes\)\.$/,
    ],
    [valid, /lacks its 0x prefix/],
    [`0x${valid}00`, /is 66 hex digits long after 0x/],
    [`0x${"g".repeat(64)}`, /holds characters that are not hex digits/],
    [` 0x${valid}\n`, /has spaces or a line break around it/],
    ["", /is empty/],
    [`0x${"0".repeat(64)}`, /outside the range of secp256k1 keys/],
    [`0x${"f".repeat(64)}`, /outside the range of secp256k1 keys/],
  ])("refuses %j with its own error, saying what is wrong in a whole sentence and never the key", (key, says) => {
    const error = (() => {
      try {
        accountFromPrivateKey(key);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(InvalidPrivateKeyError);
    expect(error).toBeInstanceOf(AgentToolsError);
    const { code, message } = error as InvalidPrivateKeyError;
    expect(code).toBe("invalid_private_key");
    expect(message).toMatch(says);
    expect(message).toMatch(/^The private key .*\.$/);
    // Neither the key nor viem's text (which quotes a key's value as a number).
    if (key.trim().length > 4) expect(message).not.toContain(key.trim().replace(/^0x/, "").slice(0, 16));
    expect(message).not.toMatch(/expected valid private key|invalid private key, expected|Version: viem|115792/);
  });

  it("takes a private key, as viem's local account", () => {
    expect(accountFromPrivateKey(`0x${valid}`).address).toBe("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
  });
});

describe("a request that gets no answer", () => {
  it.each([
    [
      "a refused connection",
      Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("x"), { code: "ECONNREFUSED" }) }),
      /nothing accepts connections there \(connection refused\)\.$/,
    ],
    [
      "a blocked port",
      Object.assign(new TypeError("fetch failed"), { cause: new Error("bad port") }),
      /fetch refuses that port/,
    ],
    ["no cause given", new TypeError("fetch failed"), /the request failed before an answer came\.$/],
  ])("%s: says why in words, not fetch's own text", async (_what, thrown, says) => {
    const failing: typeof fetch = async () => {
      throw thrown;
    };
    const error = await createAgentToolsClient({ baseUrl: "http://127.0.0.1:9", fetch: failing })
      .health()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).message).toMatch(/^Could not reach http:\/\/127\.0\.0\.1:9: /);
    expect((error as NetworkError).message).toMatch(says);
    expect((error as NetworkError).message).not.toContain("fetch failed");
  });
});

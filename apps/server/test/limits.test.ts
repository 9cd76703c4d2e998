import { errorBodySchema } from "@agent-tools/schema";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ServiceError } from "../src/errors/service-error.js";
import { createCallLimiter } from "../src/limits/call-limiter.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";

/**
 * The paid routes' limits per client address and per payer: past them, 429 `rate_limited` with Retry-After, before
 * any tool runs, and nothing charged.
 */
let t: PaidTestServer;
const address = (index: number) => t.devnet.deployment.accounts[index]!.address;

/** /portfolio calls wait in their tool until let go, then fail upstream (503, uncharged); each entry is told once. */
let entered: (() => void)[] = [];
const gates: (() => void)[] = [];
const inTool = () => new Promise<void>((resolve) => entered.push(resolve));

beforeAll(async () => {
  t = await startPaidTestServer({
    env: { PAID_CONCURRENCY_PER_PAYER: "1", PAID_CONCURRENCY_PER_IP: "3" },
    tools: {
      portfolio: async () => {
        entered.shift()?.();
        await new Promise<void>((resolve) => gates.push(resolve));
        throw new ServiceError("upstream_unavailable", "The marketplace is unavailable.", [], { "Retry-After": "1" });
      },
    },
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
});
afterEach(() => {
  for (const open of gates.splice(0)) open();
  entered = [];
});

/** A paid call of `path` for `tokenId` from devnet account `payer`: 402, pay, the same request with the payment. */
async function paid(path: string, tokenId: number, payer: number): Promise<Response> {
  return (await t.paidCall({ path, body: { tokenId } }, payer)).res;
}

async function expectRateLimited(res: Response, field?: string) {
  expect(res.status).toBe(429);
  expect(res.headers.get("retry-after")).toBe("1");
  const { error } = errorBodySchema.parse(await res.json());
  expect(error.code).toBe("rate_limited");
  expect(error.message).toMatch(/Nothing was charged/);
  if (field) expect(error.details.map((d) => d.field)).toEqual([field]);
}

describe("per payer", () => {
  it("refuses a payer's second paid call while its first runs (concurrency 1), charges nothing, and lets others pay", async () => {
    const running = inTool();
    const first = paid("/portfolio", 1, 1);
    await running;
    const before = await t.balance(address(1));
    await expectRateLimited(await paid("/intel", 1, 1), "PAYMENT-SIGNATURE");
    expect(await t.balance(address(1))).toBe(before);
    // Another payer is not held back.
    expect((await paid("/intel", 2, 2)).status).toBe(200);

    for (const open of gates.splice(0)) open();
    expect((await first).status).toBe(503);
    // Its slot is free again once the first call is over.
    expect((await paid("/intel", 1, 1)).status).toBe(200);
    expect(await t.balance(address(1))).toBe(before - 1_000_000n);
  });
});

describe("per client address", () => {
  it("refuses a fourth request to the paid routes while three are in flight, before the request is read", async () => {
    const running = [1, 2, 3].map(() => inTool());
    const held = [paid("/portfolio", 3, 3), paid("/portfolio", 4, 4), paid("/portfolio", 5, 5)];
    await Promise.all(running);
    // Even a request for a price, or an invalid one: the address has three in flight.
    await expectRateLimited(await t.post("/intel", { tokenId: 1 }));
    await expectRateLimited(await t.post("/intel", { tokenId: "not a number" }));
    // Free routes are not limited.
    expect((await t.get("/agents/info/1")).status).toBe(200);

    for (const open of gates.splice(0)) open();
    expect((await Promise.all(held)).map((res) => res.status)).toEqual([503, 503, 503]);
    expect((await t.post("/intel", { tokenId: 1 })).status).toBe(402);
  });
});

describe("the limiter", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("starts so many calls per second per key, then says how long to wait", async () => {
    vi.useFakeTimers({ now: new Date("2026-11-23T00:00:00Z") });
    const limiter = createCallLimiter({ ratePerSecond: 3, concurrency: 100 });
    for (let i = 0; i < 3; i++) expect((await limiter.take("a")).ok).toBe(true);
    expect(await limiter.take("a")).toEqual({ ok: false, why: "rate", retryAfterSeconds: 1 });
    expect((await limiter.take("b")).ok).toBe(true);
    vi.advanceTimersByTime(1000);
    expect((await limiter.take("a")).ok).toBe(true);
  });

  it("holds so many calls at once per key; a slot given back twice counts once", async () => {
    const limiter = createCallLimiter({ ratePerSecond: 1000, concurrency: 2 });
    const one = await limiter.take("a");
    const two = await limiter.take("a");
    if (!one.ok || !two.ok) throw new Error("the first two calls must be let through");
    expect(await limiter.take("a")).toEqual({ ok: false, why: "concurrency", retryAfterSeconds: 1 });
    one.release();
    one.release();
    expect(limiter.inFlight("a")).toBe(1);
    const three = await limiter.take("a");
    expect(three.ok).toBe(true);
    expect(limiter.inFlight("a")).toBe(2);
  });
});

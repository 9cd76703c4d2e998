import { type Clearance, offerRadarResponseSchema } from "@agent-tools/schema";
import { MARKETPLACE_FACTS } from "@agent-tools/upstream-sim";
import type { Address } from "viem";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  type PaidTestServer,
  type SendCall,
  startPaidTestServer,
  TIMEOUT_CASE_UPSTREAM_MS,
} from "./helpers/paid-server.js";
import { tokenHeldBy } from "./helpers/tokens.js";

let t: PaidTestServer;
const account = (index: number): Address => t.devnet.deployment.accounts[index]!.address;
const facts = MARKETPLACE_FACTS.collections;

/** The first revealed token of devnet account `index` with this clearance. */
const tokenOf = (index: number, clearance: Clearance) => tokenHeldBy(t.chain.collection, account(index), clearance);

beforeAll(async () => {
  t = await startPaidTestServer({ env: { UPSTREAM_TIMEOUT_MS: TIMEOUT_CASE_UPSTREAM_MS } });
}, 120_000);
afterAll(async () => {
  await t?.close();
});
afterEach(() => t.resetUpstream());

type Headers = Record<string, string>;

/** Request → 402 → pay → the same request with the payment (and the same sign-in, when signed in). */
async function paid(send: SendCall, options: { payer: number; signIn?: Record<string, string> }) {
  const signIn = options.signIn ?? {};
  return t.paidCall((headers) => send({ ...signIn, ...headers }), options.payer);
}

const post = (body: unknown, options: { payer: number; signIn?: Headers }) =>
  paid((headers) => t.post("/offer-radar", body, headers), options);

async function radar(slugs: string[]) {
  const { res } = await post({ tokenId: 7, slugs }, { payer: 5 });
  expect(res.status).toBe(200);
  expect(res.headers.get("payment-response")).not.toBeNull();
  return offerRadarResponseSchema.parse(await res.json());
}

const entryOf = (body: z.infer<typeof offerRadarResponseSchema>, slug: string) =>
  body.collections.find((c) => c.slug === slug)!;

describe("POST /offer-radar", () => {
  it("ranks bids at or above floor first, then by smallest spread; an Elite holder pays the discounted price", async () => {
    const slugs = [
      "fern-gardeners",
      "quiet-machines",
      "lumen-apes",
      "harbor-cards",
      "static-kittens",
      "orbital-punks",
      "arbitrum-odyssey-badges",
    ];
    const tokenId = tokenOf(2, "Elite");
    const signIn = { "SIGN-IN-WITH-X": await t.signIn(2, "/offer-radar") };
    const { res, required, spent } = await post({ tokenId, slugs }, { payer: 2, signIn });
    expect(res.status).toBe(200);
    expect(required.accepts[0]!.amount).toBe("10000");
    expect(spent).toBe(10_000n);
    const body = offerRadarResponseSchema.parse(await res.json());
    expect(body).toMatchObject({ count: 7, caller: account(2), clearance: "Elite" });

    // Bids above floor (biggest premium first), at floor, then under floor by spread; then the incomparable.
    expect(body.collections.map((c) => [c.slug, c.rank])).toEqual([
      ["arbitrum-odyssey-badges", 1],
      ["lumen-apes", 2],
      ["static-kittens", 3],
      ["orbital-punks", 4],
      ["fern-gardeners", 5],
      ["quiet-machines", 6],
      ["harbor-cards", 7],
    ]);
    for (const entry of body.collections) {
      expect(entry.error).toBeNull();
      expect(entry.bidAboveFloor).toBe(facts.bidAtOrAboveFloor.includes(entry.slug));
    }
    const lumen = entryOf(body, "lumen-apes");
    expect(lumen.floor).toMatchObject({ amount: "2350000000000000000", currency: "ETH", decimals: 18 });
    expect(lumen.topBid).toMatchObject({ amount: "2410000000000000000", currency: "WETH", decimals: 18 });
    expect(lumen.spreadPct).toBeCloseTo(((2.35 - 2.41) / 2.35) * 100, 2);
    expect(lumen.floor!.usd).toBeCloseTo(2.35 * MARKETPLACE_FACTS.usdPrices.ETH!, 2);
    expect(entryOf(body, "static-kittens")).toMatchObject({ bidAboveFloor: true, spreadPct: 0 });
    // Nothing listed: no floor, no spread; no offers: no top bid.
    expect(entryOf(body, "quiet-machines")).toMatchObject({ floor: null, bestListings: [], spreadPct: null });
    expect(entryOf(body, "harbor-cards")).toMatchObject({ topBid: null, collectionOffers: [], spreadPct: null });

    expect(body.brief).toContain(
      "Best opportunity: Arbitrum Odyssey Badges (arbitrum-odyssey-badges), a collection bid of 0.0035 WETH",
    );
    expect(body.brief).toContain(
      "Bids at or above floor: 3 of 7 collections scanned (2 above, 1 at the floor): arbitrum-odyssey-badges, lumen-apes, static-kittens.",
    );
  });

  it("prices a multi-quantity, partially filled collection offer per item", async () => {
    const body = await radar([facts.multiQuantityOffer]);
    const entry = body.collections[0]!;
    // The best offer was made for 10 items at 0.035 WETH in all, and 4 were sold: 6 still wanted, still
    // 0.0035 WETH each (the total over the 10 ordered, not over the 6 left), above the 0.0031 ETH floor.
    expect(entry.collectionOffers[0]).toMatchObject({
      quantity: 6,
      price: { amount: "3500000000000000", currency: "WETH", decimals: 18 },
    });
    expect(entry.topBid!.amount).toBe("3500000000000000");
    expect(entry.bidAboveFloor).toBe(true);
    expect(entry.spreadPct).toBeCloseTo(((0.0031 - 0.0035) / 0.0031) * 100, 2);
    const perItem = entry.collectionOffers.map((o) => BigInt(o.price.amount));
    expect(perItem).toEqual([...perItem].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
  });

  it("does not count a trait offer above the floor as a bid on the floor", async () => {
    const body = await radar([facts.traitOfferAboveFloorOnly]);
    const entry = body.collections[0]!;
    expect(entry.bidAboveFloor).toBe(false);
    // Its trait offer is at 1.5 x floor; the best collection offer is 11.8 WETH against a 12.5 ETH floor.
    expect(entry.topBid!.amount).toBe("11800000000000000000");
    expect(entry.collectionOffers.every((o) => BigInt(o.price.amount) < BigInt(entry.floor!.amount))).toBe(true);
    expect(entry.spreadPct).toBeCloseTo(5.6, 2);
    expect(body.brief).toContain("No collection bid reaches its floor; the tightest spread is Orbital Punks");
  });

  it("lists each token once among the best listings, cheapest first", async () => {
    const body = await radar([facts.duplicateListing]);
    const listings = body.collections[0]!.bestListings;
    expect(listings).toHaveLength(5);
    expect(new Set(listings.map((l) => l.identifier)).size).toBe(listings.length);
    const prices = listings.map((l) => BigInt(l.price.amount));
    expect(prices).toEqual([...prices].sort((a, b) => (a > b ? 1 : a < b ? -1 : 0)));
    expect(listings[0]!.price.amount).toBe(body.collections[0]!.floor!.amount);
  });

  it("compares a floor and a bid in different currencies through USD (POL floor, WETH bid)", async () => {
    const body = await radar([facts.mixedCurrencyStats]);
    const entry = body.collections[0]!;
    expect(entry.floor).toMatchObject({ amount: "145000000000000000000", currency: "POL" });
    expect(entry.topBid!.currency).toBe("WETH");
    const floorUsd = 145 * MARKETPLACE_FACTS.usdPrices.POL!;
    const bidUsd = 0.0102 * MARKETPLACE_FACTS.usdPrices.ETH!;
    expect(entry.spreadPct).toBeCloseTo(((floorUsd - bidUsd) / floorUsd) * 100, 2);
    expect(entry.bidAboveFloor).toBe(false);
  });

  it("reports an unknown slug in its entry and answers for the others", async () => {
    const body = await radar(["no-such-collection", "lumen-apes", "lumen-apes"]);
    expect(body.count).toBe(2);
    expect(body.collections[0]).toMatchObject({ slug: "lumen-apes", rank: 1, error: null });
    expect(body.collections[1]).toMatchObject({
      slug: "no-such-collection",
      rank: null,
      floor: null,
      topBid: null,
      bidAboveFloor: false,
      spreadPct: null,
      error: { code: "collection_not_found" },
    });
    expect(body.brief).toContain("1 slug could not be scanned: no-such-collection (collection_not_found).");
  });

  it("answers 404 collection_not_found and charges nothing when the marketplace knows none of the slugs", async () => {
    const ledgerRows = async () =>
      Number((await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM settlements"))[0]!.n);
    const rowsBefore = await ledgerRows();
    const { res, spent, payment } = await post(
      { tokenId: 7, slugs: ["no-such-collection", "nor-this-one"] },
      { payer: 5 },
    );
    expect(res.status).toBe(404);
    expect(res.headers.get("payment-response")).toBeNull();
    const { error } = (await res.json()) as { error: { code: string; message: string; details: unknown[] } };
    expect(error.code).toBe("collection_not_found");
    expect(error.message).toBe(
      "The marketplace has no collection with the slugs 'no-such-collection', 'nor-this-one'. Nothing was " +
        "charged; check the slugs on the marketplace.",
    );
    expect(error.details).toEqual([
      { field: "slugs.0", message: "no collection 'no-such-collection'" },
      { field: "slugs.1", message: "no collection 'nor-this-one'" },
    ]);
    expect(spent).toBe(0n);
    expect(await ledgerRows()).toBe(rowsBefore);
    // The payment was given back: it buys a scan that finds something.
    const found = await t.post("/offer-radar", { tokenId: 7, slugs: ["lumen-apes"] }, { "PAYMENT-SIGNATURE": payment });
    expect(found.status).toBe(200);
  });

  it("reports an upstream fault on one slug in its entry and still answers (and charges) for the others", async () => {
    t.sims.marketplace.faults.set("/api/v2/collections/base-bloomers/stats", { status: 500 });
    const { res, spent } = await post({ tokenId: 7, slugs: ["base-bloomers", "static-kittens"] }, { payer: 5 });
    expect(res.status).toBe(200);
    expect(spent).toBe(1_000_000n);
    const body = offerRadarResponseSchema.parse(await res.json());
    expect(entryOf(body, "static-kittens")).toMatchObject({ rank: 1, error: null });
    expect(entryOf(body, "base-bloomers")).toMatchObject({ rank: null, error: { code: "upstream_error" } });
  });

  it("answers the GET variant with repeated slugs", async () => {
    const url = `${t.server.url}/offer-radar?tokenId=7&slugs=lumen-apes&slugs=static-kittens`;
    const { res } = await paid((headers) => fetch(url, { headers }), { payer: 5 });
    expect(res.status).toBe(200);
    const body = offerRadarResponseSchema.parse(await res.json());
    expect(body.collections.map((c) => c.slug)).toEqual(["lumen-apes", "static-kittens"]);
    expect(body.clearance).toBeDefined();
  });
});

describe("POST /offer-radar refuses", () => {
  it.each([
    ["no slugs", []],
    ["11 slugs", Array.from({ length: 11 }, (_, i) => `slug-${i}`)],
    ["a slug that is not one", ["Lumen Apes"]],
  ])("%s with 400 before any challenge", async (_name, slugs) => {
    const res = await t.post("/offer-radar", { tokenId: 7, slugs });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details[0].field).toMatch(/^slugs/);
  });
});

describe("when no slug can be scanned because of the upstream, the call fails and charges nothing", () => {
  // One slug per case, each not read before (answers are cached), the fault on its stats route.
  const STATS = "/api/v2/collections/{slug}/stats";
  const cases: [string, Parameters<PaidTestServer["sims"]["marketplace"]["faults"]["set"]>[1], number, string][] = [
    ["429 with Retry-After", { status: 429, retryAfterSeconds: 6 }, 503, "upstream_unavailable"],
    ["500", { status: 500 }, 502, "upstream_error"],
    ["503", { status: 503 }, 503, "upstream_unavailable"],
    ["504 (HTML page)", { status: 504 }, 502, "upstream_error"],
    ["a malformed body", { malformed: "invalid-json" }, 502, "upstream_error"],
    ["a body of the wrong shape", { malformed: "wrong-shape" }, 502, "upstream_error"],
    ["a timeout", { timeout: true }, 504, "upstream_timeout"],
  ];
  const slugs = [
    "abstract-portraits",
    "zora-sketch-club",
    "ape-yacht-annex",
    "glasswing-editions",
    "neon-harbor-passes",
    "forever-mint-club",
    "paper-lanterns-genesis",
  ];
  it.each(cases.map((c, i) => [...c, slugs[i]!] as const))("%s", async (_name, fault, status, code, slug) => {
    t.sims.marketplace.faults.set(STATS, fault);
    const { res, spent } = await post({ tokenId: 7, slugs: [slug] }, { payer: 6 });
    expect(res.status).toBe(status);
    expect((await res.json()).error.code).toBe(code);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(spent).toBe(0n);
    if ("retryAfterSeconds" in fault) expect(res.headers.get("retry-after")).toBe("6");
  });

  it("every slug of several failing fails the call too", async () => {
    t.sims.marketplace.faults.set(STATS, { status: 429, retryAfterSeconds: 4 });
    const { res, spent } = await post({ tokenId: 7, slugs: ["gallery-of-echoes", "last-call-records"] }, { payer: 6 });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("4");
    expect(spent).toBe(0n);
  });
});

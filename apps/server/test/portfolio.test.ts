import { type Clearance, portfolioResponseSchema } from "@agent-tools/schema";
import { MARKETPLACE_FACTS } from "@agent-tools/upstream-sim";
import { type Address, getAddress } from "viem";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type PaidTestServer, startPaidTestServer, TIMEOUT_CASE_UPSTREAM_MS } from "./helpers/paid-server.js";
import { tokenHeldBy } from "./helpers/tokens.js";

let t: PaidTestServer;
const account = (index: number): Address => t.devnet.deployment.accounts[index]!.address;
const WHALE = getAddress(MARKETPLACE_FACTS.wallets.whale);
const EMPTY = getAddress(MARKETPLACE_FACTS.wallets.empty);

/** The first revealed token of devnet account `index` with this clearance. */
const tokenOf = (index: number, clearance: Clearance) => tokenHeldBy(t.chain.collection, account(index), clearance);

/** A fresh wallet the marketplace knows nothing about: its answers are never in the client's cache. */
function freshWallet(): Address {
  return getAddress(
    `0x${crypto.getRandomValues(new Uint8Array(20)).reduce((s, b) => s + b.toString(16).padStart(2, "0"), "")}`,
  );
}

beforeAll(async () => {
  t = await startPaidTestServer({ env: { UPSTREAM_TIMEOUT_MS: TIMEOUT_CASE_UPSTREAM_MS } });
}, 120_000);
afterAll(async () => {
  await t?.close();
});
afterEach(() => t.resetUpstream());

/** POST → 402 → pay → POST again with the payment (and the same sign-in, when signed in). */
async function paidPost(body: Record<string, unknown>, options: { payer: number; signIn?: boolean }) {
  const headers: Record<string, string> = options.signIn
    ? { "SIGN-IN-WITH-X": await t.signIn(options.payer, "/portfolio") }
    : {};
  return t.paidCall({ path: "/portfolio", body, headers }, options.payer);
}

async function paidPortfolio(body: Record<string, unknown>, options: { payer: number; signIn?: boolean }) {
  const { res, required, spent } = await paidPost(body, options);
  expect(res.status).toBe(200);
  expect(res.headers.get("payment-response")).not.toBeNull();
  return { body: portfolioResponseSchema.parse(await res.json()), price: BigInt(required.accepts[0]!.amount), spent };
}

/** Fixture floor of a collection in USD (the simulator's spec: floor in the chain's native currency). */
function fixtureFloorUsd(slug: string): number | null {
  const col = t.sims.marketplace.fixture().collections.get(slug)!;
  if (col.spec.floor <= 0) return null;
  const native = MARKETPLACE_FACTS.chains.find((c) => c.chain === col.spec.chain)!.native;
  return col.spec.floor * MARKETPLACE_FACTS.usdPrices[native]!;
}

describe("POST /portfolio", () => {
  it("scans the signed-in caller's wallet by default, at the discounted price, echoing caller and clearance", async () => {
    const tokenId = tokenOf(1, "Rare");
    const { body, price, spent } = await paidPortfolio({ tokenId }, { payer: 1, signIn: true });
    expect(price).toBe(10_000n);
    expect(spent).toBe(10_000n);
    expect(body.wallet).toBe(WHALE);
    expect(body.caller).toBe(WHALE);
    expect(body.clearance).toBe("Rare");
    expect(body.chain).toBe("ethereum");
    // Default nftLimit 50: one page of the whale's 110 NFTs on ethereum.
    expect(body.nftCount).toBe(50);
    expect(body.nfts).toHaveLength(50);
    expect(body.brief).toMatch(
      /holds 50 NFTs on ethereum across \d+ collections \(the first 50: it holds more; raise nftLimit \(up to 100\) to list more\)/,
    );
  });

  it("scans walletAddress for an anonymous caller, paging up to nftLimit, and estimates from collection floors", async () => {
    const { body, price } = await paidPortfolio(
      { tokenId: 7, walletAddress: WHALE.toLowerCase(), nftLimit: 100 },
      { payer: 3 },
    );
    expect(price).toBe(1_000_000n);
    expect(body.wallet).toBe(WHALE);
    expect(body.caller).toBeUndefined();
    expect(body.nftCount).toBe(100);
    expect(new Set(body.nfts.map((n) => `${n.contract}:${n.identifier}`)).size).toBe(100);

    // Two pages of 50, the second from the first one's cursor (the first may have come from the cache).
    const pages = t.sims.marketplace
      .requests("/api/v2/chain/{chain}/account/{address}/nfts")
      .filter((p) => p.path === `/api/v2/chain/ethereum/account/${WHALE}/nfts`);
    expect(pages.filter((p) => p.query.next === undefined).map((p) => p.query.limit)).toEqual(["50"]);
    expect(pages.filter((p) => p.query.next !== undefined).map((p) => p.query.limit)).toEqual(["50"]);

    // Each NFT's floor is its collection's, in the smallest unit with its USD value; unlisted collections have none.
    for (const nft of body.nfts) {
      const expected = fixtureFloorUsd(nft.collection);
      if (expected === null) expect(nft.floorPrice).toBeNull();
      else expect(nft.floorPrice!.usd).toBeCloseTo(expected, 2);
    }
    const lumen = body.nfts.find((n) => n.collection === "lumen-apes")!;
    expect(lumen.floorPrice).toMatchObject({ amount: "2350000000000000000", currency: "ETH", decimals: 18 });

    // The estimate: every listed NFT once, at its collection floor in USD.
    const expected = body.nfts.reduce((sum, n) => sum + (fixtureFloorUsd(n.collection) ?? 0), 0);
    expect(Math.abs(body.estimatedValueUsd! - expected)).toBeLessThan(1);
    expect(body.brief).toContain(`holds 100 NFTs on ethereum across 5 collections (the first 100: it holds more).`);
    expect(body.brief).toContain("the sum of each listed NFT's collection floor in USD, every NFT counted once");
    expect(body.brief).toContain(
      `Estimated value ${body.estimatedValueUsd!.toLocaleString("en-US", { style: "currency", currency: "USD" })}`,
    );
  });

  it("lists the offers received on the chain, best first, with per-item prices", async () => {
    const { body } = await paidPortfolio({ tokenId: 7, walletAddress: WHALE, nftLimit: 100 }, { payer: 3 });
    expect(body.offersReceived.length).toBeGreaterThan(0);
    const usd = body.offersReceived.map((o) => o.price.usd!);
    expect(usd).toEqual([...usd].sort((a, b) => b - a));
    expect(new Set(body.offersReceived.map((o) => o.kind))).toEqual(new Set(["collection", "item"]));
    for (const offer of body.offersReceived) {
      if (offer.kind === "item") expect(offer.identifier).toMatch(/^\d+$/);
      else expect(offer.identifier).toBeNull();
    }
    const best = body.offersReceived[0]!;
    expect(body.brief).toContain(`${body.offersReceived.length} offers received on ethereum; the best is`);
    expect(body.brief).toContain(`${Number(best.price.amount) / 1e18} ${best.price.currency}`);
  });

  it("prices a multi-quantity offer received per item", async () => {
    const { body } = await paidPortfolio({ tokenId: 7, walletAddress: WHALE, chain: "arbitrum" }, { payer: 3 });
    expect(body.nftCount).toBe(MARKETPLACE_FACTS.wallets.nftCounts[WHALE]!.arbitrum);
    const slug = MARKETPLACE_FACTS.collections.multiQuantityOffer;
    const collectionOffer = body.offersReceived.find((o) => o.collection === slug && o.kind === "collection")!;
    // 10 items at 0.0035 WETH each: price.value upstream is the total, 0.035 WETH.
    expect(collectionOffer.price).toMatchObject({ amount: "3500000000000000", currency: "WETH", decimals: 18 });
  });

  it("reads a floor in its own currency when the stats report volume in another (POL floor, ETH volume)", async () => {
    const { body } = await paidPortfolio({ tokenId: 7, walletAddress: WHALE, chain: "polygon" }, { payer: 3 });
    const slug = MARKETPLACE_FACTS.collections.mixedCurrencyStats;
    const nft = body.nfts.find((n) => n.collection === slug)!;
    expect(nft.floorPrice).toMatchObject({ amount: "145000000000000000000", currency: "POL", decimals: 18 });
    expect(nft.floorPrice!.usd).toBeCloseTo(145 * MARKETPLACE_FACTS.usdPrices.POL!, 2);
    expect(body.estimatedValueUsd).toBeCloseTo(body.nftCount * nft.floorPrice!.usd!, 2);
  });

  it("gives no estimate when no NFT's collection has a floor (nothing listed)", async () => {
    // Account 7 holds one Quiet Machines on ethereum, a collection with no listing.
    const { body } = await paidPortfolio({ tokenId: 7, walletAddress: account(7) }, { payer: 3 });
    expect(body.nfts).toHaveLength(1);
    expect(body.nfts[0]).toMatchObject({ collection: "quiet-machines", floorPrice: null });
    expect(body.estimatedValueUsd).toBeUndefined();
    expect(body.brief).toContain("No value estimate: none of these collections has a floor with a known USD price.");
  });

  it("answers an empty wallet with nothing held, no offers and an estimate of 0", async () => {
    const { body } = await paidPortfolio({ tokenId: 7, walletAddress: EMPTY }, { payer: 3 });
    expect(body).toMatchObject({ wallet: EMPTY, nftCount: 0, nfts: [], offersReceived: [], estimatedValueUsd: 0 });
    expect(body.brief).toBe(
      `${EMPTY.slice(0, 6)}…${EMPTY.slice(-4)} holds no NFTs on ethereum: estimated value $0. No offers received on ethereum.`,
    );
  });

  it("answers the GET variant with the same fields", async () => {
    const url = `${t.server.url}/portfolio?tokenId=7&walletAddress=${EMPTY}&nftLimit=5`;
    const challenge = await fetch(url);
    expect(challenge.status).toBe(402);
    const paid = await fetch(url, { headers: { "PAYMENT-SIGNATURE": await t.pay(3, await challenge.json()) } });
    expect(paid.status).toBe(200);
    expect(portfolioResponseSchema.parse(await paid.json()).nftCount).toBe(0);
  });
});

describe("POST /portfolio refuses", () => {
  it.each([
    ["nftLimit 0", { nftLimit: 0 }, "nftLimit"],
    ["nftLimit 101", { nftLimit: 101 }, "nftLimit"],
    ["a malformed walletAddress", { walletAddress: "0x1234" }, "walletAddress"],
    ["a malformed chain", { chain: "Ether Main" }, "chain"],
  ])("%s with 400 before any challenge", async (_name, extra, field) => {
    const res = await t.post("/portfolio", { tokenId: 7, ...extra });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it("an anonymous call without walletAddress: 400 naming walletAddress, nothing charged", async () => {
    const { res, spent } = await paidPost({ tokenId: 7 }, { payer: 3 });
    expect(res.status).toBe(400);
    expect(res.headers.get("payment-response")).toBeNull();
    const body = await res.json();
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details[0].field).toBe("walletAddress");
    expect(spent).toBe(0n);
  });

  it("a chain the marketplace does not list: 400 naming chain, nothing charged", async () => {
    const { res, spent } = await paidPost({ tokenId: 7, walletAddress: WHALE, chain: "atlantis" }, { payer: 3 });
    expect(res.status).toBe(400);
    expect((await res.json()).error.details[0].field).toBe("chain");
    expect(spent).toBe(0n);
  });
});

describe("upstream faults fail the call and charge nothing", () => {
  const NFTS = "/api/v2/chain/{chain}/account/{address}/nfts";
  const cases: [string, Parameters<PaidTestServer["sims"]["marketplace"]["faults"]["set"]>[1], number, string][] = [
    ["429 with Retry-After", { status: 429, retryAfterSeconds: 7 }, 503, "upstream_unavailable"],
    ["500", { status: 500 }, 502, "upstream_error"],
    ["502 (HTML page)", { status: 502 }, 502, "upstream_error"],
    ["503", { status: 503 }, 503, "upstream_unavailable"],
    ["a malformed body", { malformed: "invalid-json" }, 502, "upstream_error"],
    ["a body of the wrong shape", { malformed: "wrong-shape" }, 502, "upstream_error"],
    ["a timeout", { timeout: true }, 504, "upstream_timeout"],
  ];
  it.each(cases)("%s", async (_name, fault, status, code) => {
    t.sims.marketplace.faults.set(NFTS, fault);
    const { res, spent } = await paidPost({ tokenId: 7, walletAddress: freshWallet() }, { payer: 4 });
    expect(res.status).toBe(status);
    expect((await res.json()).error.code).toBe(code);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(spent).toBe(0n);
    if (status === 503 && "retryAfterSeconds" in fault) expect(res.headers.get("retry-after")).toBe("7");
  });

  it("a fault on a collection's stats fails the call too (the estimate would be wrong)", async () => {
    t.sims.marketplace.faults.set("/api/v2/collections/{slug}/stats", { status: 429, retryAfterSeconds: 9 });
    const { res, spent } = await paidPost({ tokenId: 7, walletAddress: account(3), chain: "zora" }, { payer: 4 });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("9");
    expect(spent).toBe(0n);
  });
});

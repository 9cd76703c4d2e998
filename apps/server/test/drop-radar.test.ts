import { dropRadarResponseSchema } from "@agent-tools/schema";
import { MARKETPLACE_FACTS, simWalletAccessToken } from "@agent-tools/upstream-sim";
import type { Address } from "viem";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { STALE_AFTER_DAYS } from "../src/tools/drops/judge.js";
import { KNOWN_DROP_CHAINS } from "../src/upstream/marketplace/chains.js";
import { type PaidTestServer, startPaidTestServer, TIMEOUT_CASE_UPSTREAM_MS } from "./helpers/paid-server.js";

const PATH = "/drop-radar";
const F = MARKETPLACE_FACTS;
const { drops: kinds } = F;
const notActive = [...kinds.ended, ...kinds.undated, ...kinds.stale, ...kinds.soldOut];
type Body = z.output<typeof dropRadarResponseSchema>;

let t: PaidTestServer;
const account = (index: number): Address => t.devnet.deployment.accounts[index]!.address;

beforeAll(async () => {
  t = await startPaidTestServer({ env: { UPSTREAM_TIMEOUT_MS: TIMEOUT_CASE_UPSTREAM_MS } });
}, 120_000);
afterAll(async () => {
  await t?.close();
});
afterEach(() => t.resetUpstream());

/** Token 1 belongs to account 1 (Holder clearance): signed in, it pays the holder price. */
async function paid(
  input: Record<string, unknown>,
  options: { anonymous?: boolean; payer?: number; get?: boolean } = {},
) {
  const headers: Record<string, string> = options.anonymous ? {} : { "SIGN-IN-WITH-X": await t.signIn(1, PATH) };
  return t.paidCall({ path: PATH, body: input, headers, method: options.get ? "GET" : "POST" }, options.payer ?? 1);
}

async function radar(input: Record<string, unknown>, options: { anonymous?: boolean; get?: boolean } = {}) {
  const { res, spent, price } = await paid({ tokenId: 1, ...input }, options);
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(200);
  expect(res.headers.get("payment-response")).not.toBeNull();
  expect(spent).toBe(price);
  return { body: dropRadarResponseSchema.parse(json), json: json as Record<string, unknown> };
}

const slugs = (body: Body) => body.drops.map((d) => d.slug);
const bySlug = (body: Body, slug: string) => body.drops.find((d) => d.slug === slug)!;
const sorted = (list: readonly string[]) => [...list].sort();
/** The kind of a drop's stage, by the stage's name (names are unique within a fixture drop). */
const kindOf = (drop: Body["drops"][number], name: string) => drop.stages.find((s) => s.name === name)?.kind;

describe("POST /drop-radar", () => {
  it("answers exactly the spec's fields at the holder price, live then upcoming, nothing ended, undated or stale", async () => {
    const { body, json } = await radar({});
    expect(sorted(Object.keys(json))).toEqual(["brief", "caller", "count", "drops", "generatedAt", "type"]);
    expect(body.type).toBe("all");
    expect(body.caller).toBe(account(1));
    expect(Math.abs(Date.parse(body.generatedAt) - Date.now())).toBeLessThan(60_000);
    expect(body.count).toBe(body.drops.length);
    expect(body.count).toBe(20); // the default limit; the fixtures hold 27 live or upcoming drops
    for (const drop of body.drops) {
      expect(sorted(Object.keys(drop))).toEqual(
        sorted([
          "slug",
          "name",
          "chain",
          "imageUrl",
          "openseaUrl",
          "contractAddress",
          "totalSupply",
          "maxSupply",
          "remaining",
          "stages",
          "walletEligibility",
        ]),
      );
      expect(kinds.activeOrUpcoming).toContain(drop.slug);
      expect(drop.walletEligibility).toEqual({ wallet: null, checked: false, eligible: null, stages: [], error: null });
    }
    // Live first, closing soonest; then upcoming, opening soonest.
    const now = Date.now();
    const live = body.drops.filter((d) => kinds.live.includes(d.slug));
    const upcoming = body.drops.filter((d) => kinds.upcoming.includes(d.slug));
    expect(body.drops).toEqual([...live, ...upcoming]);
    const closes = live.map((d) =>
      Date.parse(d.stages.find((s) => Date.parse(s.startsAt!) <= now)!.endsAt ?? "9999-12-31T00:00:00Z"),
    );
    expect(closes).toEqual([...closes].sort((a, b) => a - b));
    const opens = upcoming.map((d) => Date.parse(d.stages[0]!.startsAt!));
    expect(opens).toEqual([...opens].sort((a, b) => a - b));
  });

  it("returns every live or upcoming drop with limit 50, the per-chain-only ones through scanChains", async () => {
    const { body } = await radar({ limit: 50 });
    expect(sorted(slugs(body))).toEqual(sorted(kinds.activeOrUpcoming));
    for (const slug of kinds.perChainOnlyActiveOrUpcoming) expect(slugs(body)).toContain(slug);
    expect(body.brief).toContain(
      `${kinds.perChainOnlyActiveOrUpcoming.length} of them surfaced only in per-chain scans`,
    );

    const listed = t.sims.marketplace.requests("/api/v2/drops").map((r) => r.query);
    for (const chain of KNOWN_DROP_CHAINS) expect(listed.some((q) => q.chains === chain)).toBe(true);
  });

  it("without scanChains misses the drops only a per-chain query returns", async () => {
    const { body } = await radar({ limit: 50, scanChains: false });
    for (const slug of kinds.perChainOnly) expect(slugs(body)).not.toContain(slug);
    const global = F.feeds.flatMap((feed) => [
      ...F.feedsContent[feed].kinds.live,
      ...F.feedsContent[feed].kinds.upcoming,
    ]);
    expect(sorted(slugs(body))).toEqual(sorted([...new Set(global)]));
  });

  it.each(F.feeds)("scans the %s feed alone, and only its live or upcoming drops", async (feed) => {
    const { body } = await radar({ type: feed, limit: 50 });
    expect(body.type).toBe(feed);
    const content = F.feedsContent[feed];
    const expected = [
      ...content.kinds.live,
      ...content.kinds.upcoming,
      ...content.perChainOnly.filter((slug) => kinds.activeOrUpcoming.includes(slug)),
    ];
    expect(sorted(slugs(body))).toEqual(sorted(expected));
    for (const slug of notActive) expect(slugs(body)).not.toContain(slug);
    expect(body.brief).toContain(`the ${feed.replace("_", " ")} feed`);
  });

  it("filters by chain, finding the chain's per-chain-only drops too", async () => {
    t.sims.marketplace.resetRequests();
    const { body } = await radar({ chain: "zora", limit: 50 });
    expect(body.drops.every((d) => d.chain === "zora")).toBe(true);
    const zora = kinds.activeOrUpcoming.filter(
      (slug) => t.sims.marketplace.fixture().drops.bySlug.get(slug)!.spec.chain === "zora",
    );
    expect(sorted(slugs(body))).toEqual(sorted(zora));
    expect(slugs(body)).toContain("zora-coastline"); // per-chain only
    expect(slugs(body)).toContain(kinds.betweenStages); // allowlist over, public stage to come: upcoming
    const queries = t.sims.marketplace.requests("/api/v2/drops").map((r) => r.query);
    expect(queries.every((q) => q.chains === "zora")).toBe(true);
    expect(body.brief).toMatch(/^\d+ drops? verifiably live or upcoming on Zora/);
  });

  it("answers 400 naming chain for a chain the marketplace does not know, uncharged", async () => {
    const { res, spent } = await paid({ tokenId: 1, chain: "notachain" });
    expect(res.status).toBe(400);
    const json = await res.json();
    expect(json.error.code).toBe("invalid_request");
    expect(json.error.details[0].field).toBe("chain");
    expect(spent).toBe(0n);
  });

  it("uses list data by default: the live or next stage, no supply, no detail requests", async () => {
    t.sims.marketplace.resetRequests();
    const { body } = await radar({ limit: 50 });
    expect(t.sims.marketplace.requests("/api/v2/drops/{slug}")).toHaveLength(0);
    for (const drop of body.drops) {
      expect(drop.stages).toHaveLength(1);
      expect([drop.totalSupply, drop.maxSupply, drop.remaining]).toEqual([null, null, null]);
    }
  });

  it("with enrich reads each drop's detail: every stage, supply and remaining", async () => {
    const { body } = await radar({ enrich: true, limit: 50 });
    expect(sorted(slugs(body))).toEqual(sorted(kinds.activeOrUpcoming));
    const fixture = t.sims.marketplace.fixture().drops.bySlug;
    for (const drop of body.drops) {
      const detail = fixture.get(drop.slug)!.detail;
      expect(drop.stages).toHaveLength(detail.stages.length);
      expect(drop.totalSupply).toBe(Number(detail.total_supply));
      if (detail.max_supply === undefined) {
        expect(drop.maxSupply).toBeNull();
        expect(drop.remaining).toBeNull();
      } else {
        expect(drop.maxSupply).toBe(Number(detail.max_supply));
        expect(drop.remaining).toBe(Number(detail.max_supply) - Number(detail.total_supply));
      }
    }
    const neon = bySlug(body, "neon-harbor-passes");
    expect(neon.stages.map((s) => s.kind)).toEqual(["allowlist", "public"]);
    expect(neon.stages[1]!.price).toEqual({ amount: "80000000000000000", currency: "ETH", decimals: 18, usd: null });
    expect(neon.remaining).toBe(5000 - 3100);
    // An open edition that opened 2 days ago: live, open-ended, no cap.
    const glass = bySlug(body, kinds.openEditionLive);
    expect(glass.stages[0]!.endsAt).toBeNull();
    expect(glass.maxSupply).toBeNull();
    expect(bySlug(body, kinds.erc20Priced).stages[0]!.price).toEqual({
      amount: "25000000",
      currency: "USDC",
      decimals: 6,
      usd: 25,
    });
    expect(bySlug(body, kinds.freeMint).stages[0]!.price?.amount).toBe("0");
    expect(bySlug(body, kinds.tokenGatedLive).stages.map((s) => s.kind)).toEqual(["token_gated", "public"]);
    for (const slug of notActive) expect(slugs(body)).not.toContain(slug);
    expect(body.brief).toMatch(/\d[\d,]* of [\d,]+ left/);
  });

  it(`excludes ended, undated, sold-out and stale drops (open-ended, started over ${STALE_AFTER_DAYS} days ago) and counts them`, async () => {
    const { body } = await radar({ type: "featured", scanChains: false, limit: 50, enrich: true });
    const featured = F.feedsContent.featured.kinds;
    expect(sorted(slugs(body))).toEqual(sorted([...featured.live, ...featured.upcoming]));
    const stale = t.sims.marketplace.fixture().drops.bySlug.get(featured.stale[0]!)!.detail.stages[0]!;
    expect(Date.now() - Date.parse(stale.start_time)).toBeGreaterThan(STALE_AFTER_DAYS * 86_400_000);
    const left = featured.ended.length + featured.undated.length + featured.stale.length + featured.sold_out.length;
    expect(body.brief).toContain(`${left} other listed drops were left out`);
    expect(body.brief).toContain(`${featured.stale.length} stale`);
  });

  it("resolves watchSlugs directly, ahead of the feeds within the limit, and says which are not active", async () => {
    const { body } = await radar({
      type: "featured",
      scanChains: false,
      limit: 2,
      watchSlugs: ["ronin-arcade-heroes", "paper-lanterns-genesis", "no-such-drop"],
    });
    // Ronin Arcade Heroes is in no unfiltered feed; as a watched drop it comes with its detail.
    expect(slugs(body)).toContain("ronin-arcade-heroes");
    expect(body.count).toBe(2);
    expect(bySlug(body, "ronin-arcade-heroes").totalSupply).toBe(0);
    expect(slugs(body)).not.toContain("paper-lanterns-genesis");
    expect(body.brief).toContain("Paper Lanterns Genesis has ended");
    expect(body.brief).toContain("no-such-drop has no drop at the marketplace");
  });

  it("checks the signed-in caller's eligibility per stage with the caller's token", async () => {
    t.sims.marketplace.resetRequests();
    const { body } = await radar({ checkWalletEligibility: true, limit: 50 });
    const facts = F.eligibility[account(1)]!;
    for (const drop of body.drops) {
      const e = drop.walletEligibility;
      expect(e.wallet).toBe(account(1));
      expect(e.checked).toBe(true);
      expect(e.error).toBeNull();
      // Every live or upcoming drop has a public stage still open or to come.
      expect(e.eligible).toBe(true);
      const restricted = e.stages.filter((s) => kindOf(drop, s.stage) !== "public");
      if (facts.eligible.includes(drop.slug)) expect(restricted.some((s) => s.eligible)).toBe(true);
      if (facts.ineligible.includes(drop.slug)) {
        expect(restricted.length).toBeGreaterThan(0);
        expect(restricted.every((s) => !s.eligible)).toBe(true);
      }
      // Only stages that have not ended are listed.
      const ended = drop.stages
        .filter((s) => s.endsAt !== null && Date.parse(s.endsAt) < Date.now())
        .map((s) => s.name);
      for (const stage of e.stages) expect(ended).not.toContain(stage.stage);
    }
    const auth = t.sims.marketplace.requests("/api/v2/drops/{slug}/eligibility").map((r) => r.headers.authorization);
    expect(auth.length).toBeGreaterThan(0);
    expect(new Set(auth)).toEqual(new Set([`Bearer ${simWalletAccessToken(account(1))}`]));
    expect(body.brief).toContain(
      `Wallet ${account(1).slice(0, 6)}…${account(1).slice(-4)} is eligible for all ${body.count} drops checked`,
    );
    expect(body.brief).toContain(`${facts.eligible.length} of them through an allowlist or token gate`);
  });

  it("checks walletAddress instead of the caller when given", async () => {
    const wallet = account(2);
    const { body } = await radar({ checkWalletEligibility: true, walletAddress: wallet.toLowerCase(), limit: 50 });
    const facts = F.eligibility[wallet]!;
    expect(body.caller).toBe(account(1));
    for (const drop of body.drops) expect(drop.walletEligibility.wallet).toBe(wallet);
    for (const slug of facts.eligible) {
      const drop = bySlug(body, slug);
      expect(drop.walletEligibility.stages.some((s) => s.eligible && kindOf(drop, s.stage) !== "public")).toBe(true);
    }
    for (const slug of facts.ineligible) {
      const drop = bySlug(body, slug);
      const stages = drop.walletEligibility.stages.filter((s) => kindOf(drop, s.stage) !== "public");
      expect(stages.every((s) => !s.eligible)).toBe(true);
    }
  });

  it("leaves a wallet unchecked, with the reason, when it has not authorized the service or its token is refused", async () => {
    const original = t.toolDeps.eligibilityToken;
    try {
      t.toolDeps.eligibilityToken = () => undefined;
      const { body } = await radar({ checkWalletEligibility: true, limit: 3 });
      for (const drop of body.drops) {
        expect(drop.walletEligibility).toMatchObject({
          wallet: account(1),
          checked: false,
          eligible: null,
          stages: [],
        });
        expect(drop.walletEligibility.error).toMatch(/has not authorized this service/);
      }
      expect(body.brief).toMatch(/eligibility was not checked: .*has not authorized/);

      t.toolDeps.eligibilityToken = (wallet) => simWalletAccessToken(wallet, []); // no read:eligibility scope
      const refused = await radar({ checkWalletEligibility: true, limit: 3, type: "upcoming" });
      for (const drop of refused.body.drops) {
        expect(drop.walletEligibility.checked).toBe(false);
        expect(drop.walletEligibility.error).toMatch(/read:eligibility scope \(403\)/);
      }
    } finally {
      t.toolDeps.eligibilityToken = original;
    }
  });

  it("answers 400 naming walletAddress when an anonymous caller asks for eligibility without a wallet, uncharged", async () => {
    const { res, spent, price } = await paid({ tokenId: 1, checkWalletEligibility: true }, { anonymous: true });
    expect(price).toBe(1_000_000n);
    expect(res.status).toBe(400);
    const json = await res.json();
    expect(json.error.code).toBe("invalid_request");
    expect(json.error.details.map((d: { field: string }) => d.field)).toEqual(["walletAddress"]);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(spent).toBe(0n);
  });

  it("serves an anonymous caller at the standard price, without caller", async () => {
    const { body, json } = await radar({ type: "upcoming", limit: 5 }, { anonymous: true });
    expect(json.caller).toBeUndefined();
    expect(body.count).toBeLessThanOrEqual(5);
  });

  it("writes a brief with the real counts, names, chains, prices and times", async () => {
    const { body } = await radar({ limit: 50, enrich: true });
    const live = body.drops.filter((d) => kinds.live.includes(d.slug));
    const upcoming = body.drops.filter((d) => kinds.upcoming.includes(d.slug));
    expect(body.brief).toMatch(
      new RegExp(
        `^${body.count} drops verifiably live or upcoming across \\d+ chains in the featured, upcoming and recently minted feeds: ${live.length} live, ${upcoming.length} upcoming`,
      ),
    );
    const first = live[0]!;
    expect(body.brief).toContain(`Closing soonest: ${first.name} on `);
    expect(body.brief).toMatch(/closes in \d+ (hours?|days?)/);
    const next = upcoming[0]!;
    expect(body.brief).toContain(`Next to open: ${next.name} on `);
    expect(body.brief).toMatch(/opens in \d+ (hours?|days?)/);
    expect(body.brief).toMatch(/at [\d.]+ (ETH|POL|APE|RON|BERA|AVAX|USDC)/);
    const sentences = body.brief.split(/(?<=\.)\s+(?=[A-Z0-9])/);
    expect(sentences.length).toBeGreaterThanOrEqual(2);
    expect(sentences.length).toBeLessThanOrEqual(5);
  });

  it("answers the GET variant with the same fields as query parameters", async () => {
    const { body } = await radar(
      { type: "upcoming", scanChains: false, limit: 4, watchSlugs: ["zora-coastline", "ink-tide-pass"] },
      { get: true },
    );
    expect(body.type).toBe("upcoming");
    expect(body.count).toBe(4);
    expect(slugs(body)).toEqual(expect.arrayContaining(["zora-coastline", "ink-tide-pass"]));
  });

  it("rejects a limit out of bounds and more than 10 watchSlugs with 400 before any challenge", async () => {
    for (const body of [
      { tokenId: 1, limit: 51 },
      { tokenId: 1, limit: 0 },
      { tokenId: 1, watchSlugs: Array.from({ length: 11 }, (_, i) => `slug-${i}`) },
    ]) {
      const res = await t.post(PATH, body);
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe("invalid_request");
    }
  });
});

describe("upstream faults fail the call and charge nothing", () => {
  // Each case reads a feed no other case reads (a chain outside the known list, its own page size), so no cached
  // answer hides the fault.
  const cases = [
    {
      name: "429 with Retry-After",
      fault: { status: 429, retryAfterSeconds: 5 },
      status: 503,
      code: "upstream_unavailable",
      retryAfter: /^5$/,
      chain: "sei",
      limit: 41,
    },
    {
      name: "500",
      fault: { status: 500 },
      status: 502,
      code: "upstream_error",
      retryAfter: null,
      chain: "flow",
      limit: 42,
    },
    {
      name: "503",
      fault: { status: 503 },
      status: 503,
      code: "upstream_unavailable",
      retryAfter: /^\d+$/,
      chain: "b3",
      limit: 43,
    },
    {
      name: "a timeout",
      fault: { timeout: true },
      status: 504,
      code: "upstream_timeout",
      retryAfter: null,
      chain: "monad",
      limit: 44,
    },
    {
      name: "a body that is not JSON",
      fault: { malformed: true },
      status: 502,
      code: "upstream_error",
      retryAfter: null,
      chain: "hyperevm",
      limit: 45,
    },
    {
      name: "a body of the wrong shape",
      fault: { malformed: "wrong-shape" },
      status: 502,
      code: "upstream_error",
      retryAfter: null,
      chain: "somnia",
      limit: 46,
    },
  ] as const;

  it.each(cases)("$name → $status $code", async ({ fault, status, code, retryAfter, chain, limit }) => {
    t.sims.marketplace.faults.set("/api/v2/drops", fault);
    const { res, spent } = await paid({ tokenId: 1, type: "featured", chain, limit });
    expect(res.status).toBe(status);
    const json = await res.json();
    expect(json.error.code).toBe(code);
    if (retryAfter === null) expect(res.headers.get("retry-after")).toBeNull();
    else expect(res.headers.get("retry-after")).toMatch(retryAfter);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(spent).toBe(0n);
    expect(t.sims.marketplace.requests("/api/v2/drops").some((r) => r.query.chains === chain && r.fault)).toBe(true);
  });

  it("an outage while checking eligibility fails the call too", async () => {
    t.sims.marketplace.faults.set("/api/v2/drops/{slug}/eligibility", { status: 500 });
    const { res, spent } = await paid({
      tokenId: 1,
      checkWalletEligibility: true,
      walletAddress: account(7),
      chain: "unichain",
      type: "upcoming",
    });
    expect(res.status).toBe(502);
    expect((await res.json()).error.code).toBe("upstream_error");
    expect(spent).toBe(0n);
  });
});

import { allowlistScanResponseSchema } from "@agent-tools/schema";
import { MARKETPLACE_FACTS, simWalletAccessToken } from "@agent-tools/upstream-sim";
import type { Address } from "viem";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { type PaidTestServer, startPaidTestServer, TIMEOUT_CASE_UPSTREAM_MS } from "./helpers/paid-server.js";

const PATH = "/allowlist-scan";
const F = MARKETPLACE_FACTS;
const { drops: kinds } = F;
const notActive = [...kinds.ended, ...kinds.undated, ...kinds.stale, ...kinds.soldOut];
type Body = z.output<typeof allowlistScanResponseSchema>;

let t: PaidTestServer;
/** A Rare token and the devnet account that holds it. */
let rare: { tokenId: number; index: number };
const account = (index: number): Address => t.devnet.deployment.accounts[index]!.address;

beforeAll(async () => {
  t = await startPaidTestServer({ env: { UPSTREAM_TIMEOUT_MS: TIMEOUT_CASE_UPSTREAM_MS } });
  for (let id = 1; id <= 6000 && !rare; id++) {
    const token = t.chain.collection.token(id);
    if (token?.clearance !== "Rare") continue;
    const index = t.devnet.deployment.accounts.findIndex((a) => a.address === token.owner);
    if (index >= 1 && index <= 9) rare = { tokenId: id, index };
  }
  if (!rare) throw new Error("no demo account holds a Rare token");
}, 120_000);
afterAll(async () => {
  await t?.close();
});
afterEach(() => t.resetUpstream());

/** Signed in as the Rare holder (holder price) unless anonymous; the payer is the holder's account. */
async function paid(input: Record<string, unknown>, options: { anonymous?: boolean; get?: boolean } = {}) {
  const headers: Record<string, string> = options.anonymous
    ? {}
    : { "SIGN-IN-WITH-X": await t.signIn(rare.index, PATH) };
  const body = { tokenId: rare.tokenId, ...input };
  return t.paidCall({ path: PATH, body, headers, method: options.get ? "GET" : "POST" }, rare.index);
}

async function scan(input: Record<string, unknown>, options: { anonymous?: boolean; get?: boolean } = {}) {
  const { res, spent, price } = await paid(input, options);
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(200);
  expect(res.headers.get("payment-response")).not.toBeNull();
  expect(spent).toBe(price);
  return { body: allowlistScanResponseSchema.parse(json), json: json as Record<string, unknown>, price };
}

const slugs = (entries: Body["eligible"] | undefined) => (entries ?? []).map((e) => e.slug).sort();
const sorted = (list: readonly string[]) => [...list].sort();
/** Every live or upcoming drop with an allowlist or token-gated stage still open or to come. */
const restricted = () => sorted([...F.eligibility[account(1)]!.eligible, ...F.eligibility[account(1)]!.ineligible]);

describe("POST /allowlist-scan", () => {
  it("scans the signed-in Rare holder's wallet at the holder price: eligible and ineligible drops, with the spec's fields", async () => {
    const { body, json, price } = await scan({});
    expect(price).toBe(10_000n);
    expect(sorted(Object.keys(json))).toEqual(
      sorted([
        "type",
        "generatedAt",
        "scanned",
        "eligibleCount",
        "eligible",
        "ineligible",
        "brief",
        "caller",
        "clearance",
      ]),
    );
    expect(body.type).toBe("all");
    expect(body.caller).toBe(account(rare.index));
    expect(body.clearance).toBe("Rare");
    const facts = F.eligibility[account(rare.index)]!;
    expect(slugs(body.eligible)).toEqual(sorted(facts.eligible));
    expect(slugs(body.ineligible)).toEqual(sorted(facts.ineligible));
    expect(body.eligibleCount).toBe(body.eligible.length);
    expect(body.scanned).toBe(body.eligible.length + body.ineligible!.length);
    for (const entry of [...body.eligible, ...body.ineligible!]) {
      expect(sorted(Object.keys(entry))).toEqual(
        sorted(["slug", "name", "chain", "openseaUrl", "nextStageAt", "stages"]),
      );
      expect(notActive).not.toContain(entry.slug);
      // Only allowlist and token-gated stages decide; public stages are open to every wallet.
      expect(entry.stages.length).toBeGreaterThan(0);
      expect(entry.stages.some((s) => s.stage === "Public")).toBe(false);
      if (entry.nextStageAt !== null) expect(Date.parse(entry.nextStageAt)).toBeGreaterThan(Date.now());
    }
    for (const entry of body.eligible) expect(entry.stages.some((s) => s.eligible)).toBe(true);
    for (const entry of body.ineligible!) {
      expect(entry.stages.every((s) => !s.eligible && s.reason !== null)).toBe(true);
    }
  });

  it("finds drops only a per-chain query returns through scanChains, and misses them without", async () => {
    const perChain = kinds.perChainOnlyActiveOrUpcoming.filter((slug) => restricted().includes(slug));
    expect(perChain.length).toBeGreaterThan(0);
    const { body } = await scan({ walletAddress: account(2) });
    const found = [...slugs(body.eligible), ...slugs(body.ineligible)];
    for (const slug of perChain) expect(found).toContain(slug);

    const narrow = await scan({ walletAddress: account(2), scanChains: false });
    const foundNarrow = [...slugs(narrow.body.eligible), ...slugs(narrow.body.ineligible)];
    for (const slug of perChain) expect(foundNarrow).not.toContain(slug);
  });

  it("checks walletAddress instead of the caller", async () => {
    const wallet = account(2);
    const { body } = await scan({ walletAddress: wallet });
    expect(body.caller).toBe(account(rare.index));
    expect(slugs(body.eligible)).toEqual(sorted(F.eligibility[wallet]!.eligible));
    expect(slugs(body.ineligible)).toEqual(sorted(F.eligibility[wallet]!.ineligible));
    const auth = t.sims.marketplace.requests("/api/v2/drops/{slug}/eligibility").map((r) => r.headers.authorization);
    expect(auth).toContain(`Bearer ${simWalletAccessToken(wallet)}`);
  });

  it("omits ineligible with eligibleOnly true and returns it with false", async () => {
    const wallet = account(1);
    const only = await scan({ walletAddress: wallet, eligibleOnly: true });
    expect("ineligible" in only.json).toBe(false);
    expect(slugs(only.body.eligible)).toEqual(sorted(F.eligibility[wallet]!.eligible));
    expect(only.body.scanned).toBe(restricted().length);
    expect(only.body.brief).toContain("left out of the answer (eligibleOnly)");

    const all = await scan({ walletAddress: wallet, eligibleOnly: false });
    expect(slugs(all.body.ineligible)).toEqual(sorted(F.eligibility[wallet]!.ineligible));
  });

  it.each(F.feeds)("scans the %s feed alone", async (feed) => {
    const { body } = await scan({ type: feed, scanChains: false, walletAddress: account(1) });
    expect(body.type).toBe(feed);
    const content = F.feedsContent[feed];
    const active = [...content.kinds.live, ...content.kinds.upcoming];
    expect(sorted([...slugs(body.eligible), ...slugs(body.ineligible)])).toEqual(
      restricted().filter((slug) => active.includes(slug)),
    );
  });

  it("filters by chain and bounds the drops scanned by limit", async () => {
    const polygon = await scan({ chain: "polygon", walletAddress: account(1) });
    // Gallery of Echoes is live on Polygon, but its allowlist stages are over: only Polygon Plaza Tickets is scanned.
    expect(polygon.body.scanned).toBe(1);
    expect(slugs(polygon.body.eligible)).toEqual(["polygon-plaza-tickets"]);
    expect(polygon.body.eligible[0]!.nextStageAt).not.toBeNull();

    const two = await scan({ limit: 2, walletAddress: account(1) });
    expect(two.body.scanned).toBe(2);
  });

  it("writes a brief with the wallet, the counts and the drops by name", async () => {
    const wallet = account(1);
    const { body } = await scan({ walletAddress: wallet });
    const facts = F.eligibility[wallet]!;
    expect(body.brief).toContain(
      `Scanned ${body.scanned} live or upcoming drops with allowlist or token-gated stages in the featured, upcoming and recently minted feeds for ${wallet.slice(0, 6)}…${wallet.slice(-4)}: eligible for ${facts.eligible.length}, not eligible for ${facts.ineligible.length}.`,
    );
    expect(body.brief).toContain(`Eligible: ${body.eligible[0]!.name} on `);
    expect(body.brief).toMatch(/(opens|closes) in \d+ (hours?|days?)/);
    expect(body.brief).toMatch(/at [\d.]+ (ETH|POL|APE)/);
    // Each drop it may not mint is named with the reason its answer gives, as the answer's stages say it.
    const first = body.ineligible![0]!;
    const reasons = [...new Set(first.stages.filter((s) => !s.eligible).map((s) => s.reason))];
    expect(reasons.length).toBeGreaterThan(0);
    expect(body.brief).toContain(`Not eligible: ${first.name} (${reasons.join("; ")})`);
    expect(body.brief).not.toMatch(/not listed/i);
    expect(body.brief).toMatch(/\d+ other live or upcoming drops have only public stages/);
    const sentences = body.brief.split(/(?<=\.)\s+(?=[A-Z0-9])/);
    expect(sentences.length).toBeGreaterThanOrEqual(2);
    expect(sentences.length).toBeLessThanOrEqual(5);
  });

  it("serves an anonymous caller with walletAddress at the standard price, without caller", async () => {
    const { body, json, price } = await scan({ walletAddress: account(4), chain: "optimism" }, { anonymous: true });
    expect(price).toBe(1_000_000n);
    expect(json.caller).toBeUndefined();
    expect(body.clearance).toBe("Rare"); // the clearance of the token named by tokenId
    expect(slugs(body.eligible)).toEqual(["copper-sunrise"]); // account 4 is on its token gate
  });

  it("answers 400 naming walletAddress to an anonymous caller without walletAddress, uncharged", async () => {
    const { res, spent, price } = await paid({}, { anonymous: true });
    expect(price).toBe(1_000_000n);
    expect(res.status).toBe(400);
    const json = await res.json();
    expect(json.error.code).toBe("invalid_request");
    expect(json.error.details.map((d: { field: string }) => d.field)).toEqual(["walletAddress"]);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(spent).toBe(0n);
  });

  it("answers 400 naming walletAddress for a wallet that has not authorized eligibility reads, uncharged", async () => {
    const original = t.toolDeps.eligibilityToken;
    try {
      t.toolDeps.eligibilityToken = () => undefined;
      const { res, spent } = await paid({});
      expect(res.status).toBe(400);
      const json = await res.json();
      expect(json.error.details[0].field).toBe("walletAddress");
      expect(json.error.message).toMatch(/has not/);
      expect(spent).toBe(0n);
    } finally {
      t.toolDeps.eligibilityToken = original;
    }
  });

  it("answers the GET variant with the same fields as query parameters", async () => {
    const { body, json } = await scan(
      { type: "upcoming", eligibleOnly: true, walletAddress: account(2) },
      { get: true },
    );
    expect(body.type).toBe("upcoming");
    expect("ineligible" in json).toBe(false);
    expect(slugs(body.eligible)).toEqual(sorted(F.eligibility[account(2)]!.eligible));
  });

  it("rejects a limit out of bounds with 400 before any challenge", async () => {
    for (const limit of [0, 51]) {
      const res = await t.post(PATH, { tokenId: rare.tokenId, limit });
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe("invalid_request");
    }
  });
});

describe("upstream faults fail the call and charge nothing", () => {
  // The feed cases read a chain outside the known list (no other case reads it); the eligibility cases check a
  // wallet no other case checks, on a chain with one drop to check: no cached answer hides the fault.
  const cases = [
    {
      name: "feed 429 with Retry-After",
      route: "/api/v2/drops",
      fault: { status: 429, retryAfterSeconds: 5 },
      status: 503,
      code: "upstream_unavailable",
      chain: "sei",
      wallet: 1,
      type: "featured",
    },
    {
      name: "feed 500",
      route: "/api/v2/drops",
      fault: { status: 500 },
      status: 502,
      code: "upstream_error",
      chain: "flow",
      wallet: 1,
      type: "featured",
    },
    {
      name: "feed timeout",
      route: "/api/v2/drops",
      fault: { timeout: true },
      status: 504,
      code: "upstream_timeout",
      chain: "b3",
      wallet: 1,
      type: "featured",
    },
    {
      name: "feed body not JSON",
      route: "/api/v2/drops",
      fault: { malformed: true },
      status: 502,
      code: "upstream_error",
      chain: "monad",
      wallet: 1,
      type: "featured",
    },
    {
      name: "eligibility 503",
      route: "/api/v2/drops/{slug}/eligibility",
      fault: { status: 503 },
      status: 503,
      code: "upstream_unavailable",
      chain: "unichain",
      wallet: 5,
      type: "upcoming",
    },
    {
      name: "eligibility timeout",
      route: "/api/v2/drops/{slug}/eligibility",
      fault: { timeout: true },
      status: 504,
      code: "upstream_timeout",
      chain: "optimism",
      wallet: 6,
      type: "featured",
    },
    {
      name: "eligibility of the wrong shape",
      route: "/api/v2/drops/{slug}/eligibility",
      fault: { malformed: "wrong-shape" },
      status: 502,
      code: "upstream_error",
      chain: "ethereum",
      wallet: 8,
      type: "featured",
    },
  ] as const;

  it.each(cases)("$name → $status $code", async ({ route, fault, status, code, chain, wallet, type }) => {
    t.sims.marketplace.faults.set(route, fault);
    const { res, spent } = await paid({ type, chain, walletAddress: account(wallet) });
    expect(res.status).toBe(status);
    const json = await res.json();
    expect(json.error.code).toBe(code);
    if (status === 503) expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(spent).toBe(0n);
    expect(t.sims.marketplace.requests(route).some((r) => r.fault)).toBe(true);
  });
});

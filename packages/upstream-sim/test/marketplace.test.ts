import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createMarketplaceSim,
  DEMO_WALLETS,
  type DropDetailedWire,
  type DropStageEligibilityWire,
  type DropWire,
  type ListingWire,
  MARKETPLACE_FACTS,
  type MarketplaceSim,
  type NftWire,
  type OfferWire,
  OPEN_ENDED_STAGE_END,
  OPENSEA_CHAIN_IDENTIFIERS,
  offerUnitPrice,
  simWalletAccessToken,
} from "../src/index.js";
import { API_KEY, getJson } from "./helpers.js";
import {
  openapi,
  responseSchemaName,
  schemaValidator,
  undeclaredProperties,
  validateResponse,
} from "./openapi-validator.js";

const DAY = 86_400_000;
const facts = MARKETPLACE_FACTS;
const whale = facts.wallets.whale;
const allDropSlugs = [
  ...facts.drops.live,
  ...facts.drops.upcoming,
  ...facts.drops.ended,
  ...facts.drops.undated,
  ...facts.drops.stale,
  ...facts.drops.soldOut,
];

type Kind = "live" | "upcoming" | "ended" | "undated" | "stale" | "sold_out";

/** Judges a drop from its wire form and the clock alone, the way a careful client would. */
function classify(d: DropDetailedWire, now: number): Kind {
  if (d.stages.length === 0) return "undated";
  const stageEnd = (end: string) => (end === OPEN_ENDED_STAGE_END ? Number.POSITIVE_INFINITY : Date.parse(end));
  if (d.max_supply !== undefined && Number(d.total_supply) >= Number(d.max_supply)) return "sold_out";
  if (d.is_minting && d.active_stage) {
    const start = Date.parse(d.active_stage.start_time);
    expect(start).toBeLessThanOrEqual(now);
    expect(stageEnd(d.active_stage.end_time)).toBeGreaterThan(now);
    const openEnded = d.active_stage.end_time === OPEN_ENDED_STAGE_END;
    return openEnded && now - start >= facts.staleDropMinAgeDays * DAY ? "stale" : "live";
  }
  if (d.next_stage) {
    expect(Date.parse(d.next_stage.start_time)).toBeGreaterThan(now);
    return "upcoming";
  }
  expect(d.stages.every((s) => stageEnd(s.end_time) < now)).toBe(true);
  return "ended";
}

function kindOfSlug(slug: string): Kind {
  const d = facts.drops;
  if (d.live.includes(slug)) return "live";
  if (d.upcoming.includes(slug)) return "upcoming";
  if (d.ended.includes(slug)) return "ended";
  if (d.undated.includes(slug)) return "undated";
  if (d.stale.includes(slug)) return "stale";
  if (d.soldOut.includes(slug)) return "sold_out";
  throw new Error(`unknown slug ${slug}`);
}

function expectWire(path: string, body: unknown): void {
  expect(validateResponse(path, body)).toEqual([]);
  expect(undeclaredProperties(responseSchemaName(path), body)).toEqual([]);
}

describe("marketplace simulator (OpenSea API v2)", () => {
  let sim: MarketplaceSim;
  const get = <T>(path: string, headers: Record<string, string> = API_KEY) => getJson<T>(`${sim.url}${path}`, headers);

  /** Every page of a drops query. */
  async function allPages(query: string, limit = 7): Promise<DropWire[][]> {
    const pages: DropWire[][] = [];
    let cursor: string | undefined;
    do {
      const sep = query ? "&" : "";
      const res = await get<{ drops: DropWire[]; next?: string }>(
        `/api/v2/drops?${query}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(res.status).toBe(200);
      expectWire("/api/v2/drops", res.body);
      pages.push(res.body.drops);
      cursor = res.body.next;
    } while (cursor);
    return pages;
  }
  const slugsOf = (pages: DropWire[][]) => pages.flat().map((d) => d.collection_slug);

  beforeAll(async () => {
    sim = await createMarketplaceSim();
  });
  afterAll(async () => {
    await sim.close();
  });

  it("listens on 127.0.0.1 on a free port", () => {
    expect(sim.host).toBe("127.0.0.1");
    expect(sim.port).toBeGreaterThan(0);
    expect(sim.url).toBe(`http://127.0.0.1:${sim.port}`);
  });

  describe("API key", () => {
    const paths = [
      "/api/v2/drops",
      "/api/v2/drops/neon-harbor-passes",
      "/api/v2/drops/neon-harbor-passes/eligibility",
      `/api/v2/chain/ethereum/account/${whale}/nfts`,
      `/api/v2/account/${whale}/offers_received`,
      "/api/v2/collections/lumen-apes",
      "/api/v2/collections/lumen-apes/stats",
      "/api/v2/listings/collection/lumen-apes/best",
      "/api/v2/offers/collection/lumen-apes",
      "/api/v2/offers/collection/lumen-apes/all",
      "/api/v2/no-such-route",
    ];

    it("answers 401 with a JSON body on every route without x-api-key, or with an empty one", async () => {
      for (const path of paths) {
        for (const headers of [{}, { "x-api-key": "" }] as Record<string, string>[]) {
          const res = await get<{ detail: string }>(path, headers);
          expect(res.status, path).toBe(401);
          expect(res.headers.get("content-type")).toMatch(/^application\/json/);
          expect(res.body).toEqual({ detail: "Authentication credentials were not provided." });
        }
      }
    });

    it("accepts only the configured key when one is set", async () => {
      const strict = await createMarketplaceSim({ apiKey: "the-key" });
      try {
        const wrong = await getJson(`${strict.url}/api/v2/drops`, { "x-api-key": "another" });
        expect(wrong.status).toBe(401);
        expect(wrong.body).toEqual({ detail: "Invalid API key" });
        expect((await getJson(`${strict.url}/api/v2/drops`, { "x-api-key": "the-key" })).status).toBe(200);
      } finally {
        await strict.close();
      }
    });
  });

  describe("answers match OpenSea's OpenAPI schemas (opensea-api.json)", () => {
    it("uses a validator that really rejects: wrong types, missing required fields, invented fields", () => {
      expect(validateResponse("/api/v2/drops", { drops: [{ collection_slug: 1 }] }).length).toBeGreaterThan(0);
      expect(validateResponse("/api/v2/drops/{slug}", { collection_slug: "x" }).length).toBeGreaterThan(0);
      expect(validateResponse("/api/v2/collections/{slug}/stats", { total: {}, intervals: [] }).length).toBeGreaterThan(
        0,
      );
      expect(
        validateResponse("/api/v2/offers/collection/{slug}", { offers: [{ chain: "ethereum" }] }).length,
      ).toBeGreaterThan(0);
      expect(
        undeclaredProperties("DropPaginatedResponse", { drops: [{ collection_slug: "x", sneaky: 1 }], extra: 2 }),
      ).toEqual(["$.drops[0].sneaky", "$.extra"]);
    });

    it("keeps the chain list in sync with the document's ChainIdentifier enum", () => {
      const chainSchema = openapi.components.schemas.ChainIdentifier as { enum: string[] };
      expect([...OPENSEA_CHAIN_IDENTIFIERS]).toEqual(chainSchema.enum);
      expect(facts.dropChains.length).toBeGreaterThanOrEqual(10);
      for (const chain of facts.dropChains) expect(chainSchema.enum).toContain(chain);
    });

    it("GET /api/v2/drops: every feed, unfiltered and per chain, every page (DropPaginatedResponse)", async () => {
      for (const type of facts.feeds) {
        expect(slugsOf(await allPages(`type=${type}`)).length).toBeGreaterThan(0);
        for (const chain of facts.dropChains) await allPages(`type=${type}&chains=${chain}`, 5);
      }
      await allPages(`chains=${facts.dropChains.join(",")}`, 100);
    });

    it("GET /api/v2/drops/{slug}: every drop (DropDetailedResponse)", async () => {
      for (const slug of allDropSlugs) {
        const res = await get(`/api/v2/drops/${slug}`);
        expect(res.status, slug).toBe(200);
        expectWire("/api/v2/drops/{slug}", res.body);
      }
    });

    it("GET /api/v2/drops/{slug}/eligibility: every demo wallet on every drop (DropEligibilityResponse)", async () => {
      for (const wallet of DEMO_WALLETS) {
        const auth = { ...API_KEY, authorization: `Bearer ${simWalletAccessToken(wallet)}` };
        for (const slug of allDropSlugs) {
          const res = await get(`/api/v2/drops/${slug}/eligibility`, auth);
          expect(res.status, slug).toBe(200);
          expectWire("/api/v2/drops/{slug}/eligibility", res.body);
        }
      }
    });

    it("GET /api/v2/chain/{chain}/account/{address}/nfts: every demo wallet and chain, every page (NftListResponse)", async () => {
      for (const wallet of DEMO_WALLETS) {
        for (const chain of [...new Set(["ethereum", ...Object.keys(facts.wallets.nftCounts[wallet]!)])]) {
          let next: string | undefined;
          do {
            const res = await get<{ nfts: NftWire[]; next?: string }>(
              `/api/v2/chain/${chain}/account/${wallet}/nfts?limit=40${next ? `&next=${encodeURIComponent(next)}` : ""}`,
            );
            expect(res.status).toBe(200);
            expectWire("/api/v2/chain/{chain}/account/{address}/nfts", res.body);
            next = res.body.next;
          } while (next);
        }
      }
    });

    it("GET /api/v2/account/{address}/offers_received: every demo wallet, both sorts (OffersResponse)", async () => {
      for (const wallet of DEMO_WALLETS) {
        for (const sort of ["START_TIME", "TOP_ASSET_OFFER"]) {
          const res = await get(`/api/v2/account/${wallet}/offers_received?sort_by=${sort}&limit=10`);
          expect(res.status).toBe(200);
          expectWire("/api/v2/account/{address}/offers_received", res.body);
        }
      }
    });

    it("collections, stats, best listings, collection offers and all offers: every collection", async () => {
      for (const slug of facts.collections.all) {
        for (const [path, template] of [
          [`/api/v2/collections/${slug}`, "/api/v2/collections/{slug}"],
          [`/api/v2/collections/${slug}/stats`, "/api/v2/collections/{slug}/stats"],
          [`/api/v2/listings/collection/${slug}/best`, "/api/v2/listings/collection/{slug}/best"],
          [`/api/v2/offers/collection/${slug}`, "/api/v2/offers/collection/{slug}"],
          [`/api/v2/offers/collection/${slug}/all`, "/api/v2/offers/collection/{slug}/all"],
        ] as const) {
          const res = await get(path);
          expect(res.status, path).toBe(200);
          expectWire(template, res.body);
        }
      }
    });

    it("accepts every query parameter the document lists for these operations", async () => {
      const values: Record<string, string> = {
        type: "upcoming",
        limit: "5",
        chains: "ethereum,base",
        cursor: "",
        collection: "static-kittens",
        include_auto_hidden: "false",
        next: "",
        after: "",
        collection_slugs: "static-kittens",
        sort_by: "TOP_ASSET_OFFER",
        sort_direction: "asc",
        include_private_listings: "false",
        traits: "[]",
        maker: "0x0000000000000000000000000000000000000001",
      };
      const concrete: Record<string, string> = {
        "{slug}": "static-kittens",
        "{chain}": "ethereum",
        "{address}": whale,
      };
      const templates = [
        "/api/v2/drops",
        "/api/v2/drops/{slug}",
        "/api/v2/chain/{chain}/account/{address}/nfts",
        "/api/v2/account/{address}/offers_received",
        "/api/v2/collections/{slug}",
        "/api/v2/collections/{slug}/stats",
        "/api/v2/listings/collection/{slug}/best",
        "/api/v2/offers/collection/{slug}",
        "/api/v2/offers/collection/{slug}/all",
      ];
      for (const template of templates) {
        const params = (openapi.paths[template]!.get!.parameters ?? []).filter((p) => p.in === "query");
        const query = new URLSearchParams();
        for (const p of params) {
          expect(values, `${template} ${p.name}`).toHaveProperty(p.name);
          query.set(p.name, values[p.name]!);
        }
        const path = template
          .replace("/drops/{slug}", "/drops/neon-harbor-passes")
          .replace(/\{\w+\}/g, (m) => concrete[m]!);
        const res = await get(`${path}?${query}`);
        expect(res.status, `${path}?${query}`).toBe(200);
        expectWire(template, res.body);
      }
    });
  });

  describe("drops", () => {
    it("every feed contains live, upcoming, ended, undated and stale drops", async () => {
      for (const type of facts.feeds) {
        const kinds = new Set(slugsOf(await allPages(`type=${type}`)).map(kindOfSlug));
        for (const kind of ["live", "upcoming", "ended", "undated", "stale"] as const) {
          expect(kinds.has(kind), `${type} has ${kind}`).toBe(true);
        }
      }
      // featured is the default feed
      expect(slugsOf(await allPages(""))).toEqual(slugsOf(await allPages("type=featured")));
    });

    it("per-chain queries return drops missing from the unfiltered feed", async () => {
      for (const type of facts.feeds) {
        const global = new Set(slugsOf(await allPages(`type=${type}`)));
        const perChain = new Set<string>();
        for (const chain of facts.dropChains) {
          for (const slug of slugsOf(await allPages(`type=${type}&chains=${chain}`))) perChain.add(slug);
        }
        const onlyPerChain = [...perChain].filter((s) => !global.has(s)).sort();
        expect(onlyPerChain).toEqual([...facts.feedsContent[type].perChainOnly].sort());
        expect(onlyPerChain.length).toBeGreaterThan(0);
        for (const slug of global) expect(perChain.has(slug), slug).toBe(true);
      }
      expect(facts.drops.perChainOnlyActiveOrUpcoming.length).toBeGreaterThanOrEqual(5);
      // A multi-chain filter is the union of the single-chain ones.
      const both = slugsOf(await allPages("type=featured&chains=zora,shape", 100)).sort();
      const single = [
        ...slugsOf(await allPages("type=featured&chains=zora", 100)),
        ...slugsOf(await allPages("type=featured&chains=shape", 100)),
      ].sort();
      expect(both).toEqual(single);
      expect(slugsOf(await allPages("type=featured&chains=zora&chains=shape", 100)).sort()).toEqual(single);
    });

    it("the facts agree with what the wire says, judged against the clock", async () => {
      const now = Date.now();
      for (const slug of allDropSlugs) {
        const res = await get<DropDetailedWire>(`/api/v2/drops/${slug}`);
        expect(classify(res.body, now), slug).toBe(kindOfSlug(slug));
      }
      expect(facts.drops.live).toContain(facts.drops.openEditionLive);
      expect(facts.drops.upcoming).toContain(facts.drops.betweenStages);
      const between = (await get<DropDetailedWire>(`/api/v2/drops/${facts.drops.betweenStages}`)).body;
      expect(between.is_minting).toBe(false);
      expect(Date.parse(between.stages[0]!.end_time)).toBeLessThan(now);
      const erc20 = (await get<DropDetailedWire>(`/api/v2/drops/${facts.drops.erc20Priced}`)).body;
      expect(erc20.active_stage?.price_currency_address).toBe("0x833589fcd6edb6e08f4c7c32d4f71b54bda02913");
      expect(erc20.active_stage?.price).toBe("25000000");
      const free = (await get<DropDetailedWire>(`/api/v2/drops/${facts.drops.freeMint}`)).body;
      expect(free.active_stage?.price).toBe("0");
      for (const slug of facts.drops.openEditions) {
        expect((await get<DropDetailedWire>(`/api/v2/drops/${slug}`)).body.max_supply).toBeUndefined();
      }
      const gated = (await get<DropDetailedWire>(`/api/v2/drops/${facts.drops.tokenGatedLive}`)).body;
      expect(gated.active_stage?.stage_type).toBe("token_gated");
      // Mint stages: public, allowlist (presale) and token-gated, priced in wei of the chain's currency.
      const types = new Set<string>();
      for (const slug of allDropSlugs) {
        for (const s of (await get<DropDetailedWire>(`/api/v2/drops/${slug}`)).body.stages) types.add(s.stage_type);
      }
      expect([...types].sort()).toEqual(["presale", "public_sale", "token_gated"]);
    });

    it("stale drops are minting but started long ago and never end", async () => {
      const now = Date.now();
      for (const slug of facts.drops.stale) {
        const d = (await get<DropDetailedWire>(`/api/v2/drops/${slug}`)).body;
        expect(d.is_minting).toBe(true);
        expect(d.active_stage?.end_time).toBe(OPEN_ENDED_STAGE_END);
        expect(now - Date.parse(d.active_stage!.start_time)).toBeGreaterThanOrEqual(300 * DAY);
      }
    });

    it("hidden drops count against a page and never appear", async () => {
      const first = await get<{ drops: DropWire[]; next?: string }>("/api/v2/drops?type=featured&limit=20");
      expect(first.body.drops).toHaveLength(19);
      expect(first.body.next).toBeTypeOf("string");
      const all = slugsOf(await allPages("type=featured", 3));
      for (const slug of facts.drops.hidden) {
        expect(all).not.toContain(slug);
        expect((await get(`/api/v2/drops/${slug}`)).status).toBe(404);
      }
      expect(all).toEqual(facts.feedsContent.featured.global);
    });

    it("pages with next cursors, bounds limit to 1-100 and refuses a cursor from another query", async () => {
      const pages = await allPages("type=featured", 4);
      const slugs = slugsOf(pages);
      expect(new Set(slugs).size).toBe(slugs.length);
      expect(pages.length).toBeGreaterThan(5);
      const defaultPage = await get<{ drops: DropWire[] }>("/api/v2/drops");
      expect(defaultPage.body.drops.length).toBeLessThanOrEqual(20);
      for (const limit of ["0", "101", "abc"]) {
        const res = await get<{ errors: string[] }>(`/api/v2/drops?limit=${limit}`);
        expect(res.status).toBe(400);
        expect(res.body.errors[0]).toMatch(/limit/);
      }
      const upcomingCursor = (await get<{ next: string }>("/api/v2/drops?type=upcoming&limit=2")).body.next;
      expect((await get(`/api/v2/drops?type=featured&limit=2&cursor=${upcomingCursor}`)).status).toBe(400);
      expect((await get("/api/v2/drops?type=trending")).status).toBe(400);
      expect((await get("/api/v2/drops?chains=ethereum,narnia")).status).toBe(400);
      expect((await get("/api/v2/drops?chains=monad")).body).toEqual({ drops: [] });
      expect((await get("/api/v2/drops/no-such-drop")).status).toBe(404);
    });

    it("lays times out relative to the clock it is given, stable within the hour", async () => {
      const at = Date.parse("2031-05-17T10:20:00Z");
      let clock = at;
      const shifted = await createMarketplaceSim({ now: () => clock });
      try {
        const live = await getJson<DropDetailedWire>(`${shifted.url}/api/v2/drops/neon-harbor-passes`, API_KEY);
        expect(classify(live.body, at)).toBe("live");
        expect(live.body.active_stage!.start_time.startsWith("2031-05-16")).toBe(true);
        for (const slug of allDropSlugs) {
          const d = await getJson<DropDetailedWire>(`${shifted.url}/api/v2/drops/${slug}`, API_KEY);
          expect(classify(d.body, at), slug).toBe(kindOfSlug(slug));
        }
        const before = await getJson(`${shifted.url}/api/v2/drops?type=upcoming&limit=100`, API_KEY);
        clock = at + 35 * 60_000;
        const after = await getJson(`${shifted.url}/api/v2/drops?type=upcoming&limit=100`, API_KEY);
        expect(after.body).toEqual(before.body);
        clock = at + 3 * 3_600_000;
        const later = await getJson<DropDetailedWire>(`${shifted.url}/api/v2/drops/quiet-orbit`, API_KEY);
        expect(classify(later.body, clock)).toBe("upcoming");
        expect(later.body.next_stage!.start_time).not.toBe(
          (await getJson<DropDetailedWire>(`${sim.url}/api/v2/drops/quiet-orbit`, API_KEY)).body.next_stage!.start_time,
        );
      } finally {
        await shifted.close();
      }
    });
  });

  describe("eligibility", () => {
    const path = (slug: string) => `/api/v2/drops/${slug}/eligibility`;
    const as = (wallet: string, scopes?: string[]) => ({
      ...API_KEY,
      authorization: `Bearer ${simWalletAccessToken(wallet, scopes)}`,
    });

    it("needs the wallet's bearer token with the read:eligibility scope", async () => {
      expect((await get(path("quiet-orbit"))).status).toBe(401);
      expect((await get(path("quiet-orbit"), { ...API_KEY, authorization: "Bearer nonsense" })).status).toBe(401);
      const forbidden = await get(path("quiet-orbit"), as(whale, ["read:favorites"]));
      expect(forbidden.status).toBe(403);
      // The 403's body is what OpenSea's document declares for it.
      const schema = schemaValidator(responseSchemaName("/api/v2/drops/{slug}/eligibility", "403"));
      expect(schema(forbidden.body), JSON.stringify(schema.errors)).toBe(true);
      expect((await get(path("no-such-drop"), as(whale))).status).toBe(404);
    });

    it("answers per wallet and stage as the facts say, for every demo wallet", async () => {
      for (const wallet of DEMO_WALLETS) {
        const { eligible, ineligible } = facts.eligibility[wallet]!;
        for (const [slugs, expected] of [
          [eligible, true],
          [ineligible, false],
        ] as const) {
          for (const slug of slugs) {
            const detail = (await get<DropDetailedWire>(`/api/v2/drops/${slug}`)).body;
            const answer = (await get<{ stages: DropStageEligibilityWire[] }>(path(slug), as(wallet))).body;
            expect(answer.stages.map((s) => s.stage_uuid)).toEqual(detail.stages.map((s) => s.uuid));
            const now = Date.now();
            const openRestricted = detail.stages.filter(
              (s) =>
                s.stage_type !== "public_sale" && (s.end_time === OPEN_ENDED_STAGE_END || Date.parse(s.end_time) > now),
            );
            expect(openRestricted.length).toBeGreaterThan(0);
            const eligibleOnOne = openRestricted.some(
              (s) => answer.stages.find((a) => a.stage_uuid === s.uuid)!.is_eligible,
            );
            expect(eligibleOnOne, `${wallet} on ${slug}`).toBe(expected);
            for (const s of detail.stages.filter((x) => x.stage_type === "public_sale")) {
              expect(answer.stages.find((a) => a.stage_uuid === s.uuid)!.is_eligible).toBe(true);
            }
          }
        }
      }
      expect(facts.eligibility[DEMO_WALLETS[0]!]!.eligible.length).toBeGreaterThanOrEqual(3);
      expect(facts.eligibility[DEMO_WALLETS[1]!]!.eligible.length).toBeGreaterThanOrEqual(1);
      expect(facts.eligibility[DEMO_WALLETS[2]!]!.eligible.length).toBeGreaterThanOrEqual(1);
    });

    it("is deterministic for any other wallet, and undated drops have no stages", async () => {
      const stranger = "0x1234567890abcdef1234567890abcdef12345678";
      const a = await get(path("quiet-orbit"), as(stranger));
      const b = await get(path("quiet-orbit"), as(stranger.toUpperCase().replace("0X", "0x")));
      expect(a.status).toBe(200);
      expect(b.body).toEqual(a.body);
      expect((await get(path(facts.drops.undated[0]!), as(stranger))).body).toEqual({ stages: [] });
    });
  });

  describe("wallets", () => {
    it("pages the whale's NFTs (limit 50 by default) and filters by collection", async () => {
      const seen: NftWire[] = [];
      let next: string | undefined;
      let pages = 0;
      do {
        const res = await get<{ nfts: NftWire[]; next?: string }>(
          `/api/v2/chain/ethereum/account/${whale}/nfts${next ? `?next=${encodeURIComponent(next)}` : ""}`,
        );
        expect(res.body.nfts.length).toBeLessThanOrEqual(50);
        seen.push(...res.body.nfts);
        next = res.body.next;
        pages += 1;
      } while (next);
      expect(pages).toBeGreaterThan(1);
      expect(seen).toHaveLength(facts.wallets.nftCounts[whale]!.ethereum!);
      expect(new Set(seen.map((n) => n.collection)).size).toBeGreaterThanOrEqual(5);
      const filtered = await get<{ nfts: NftWire[] }>(
        `/api/v2/chain/ethereum/account/${whale.toLowerCase()}/nfts?collection=static-kittens&limit=200`,
      );
      expect(filtered.body.nfts.length).toBeGreaterThan(0);
      expect(filtered.body.nfts.every((n) => n.collection === "static-kittens")).toBe(true);
    });

    it("holds across chains; empty and unknown wallets hold nothing; bad input is a 400", async () => {
      for (const [chain, count] of Object.entries(facts.wallets.nftCounts[whale]!)) {
        const res = await get<{ nfts: NftWire[] }>(`/api/v2/chain/${chain}/account/${whale}/nfts?limit=200`);
        expect(res.body.nfts).toHaveLength(count);
      }
      expect(Object.keys(facts.wallets.nftCounts[whale]!).length).toBeGreaterThanOrEqual(4);
      const empty = facts.wallets.empty;
      expect((await get(`/api/v2/chain/ethereum/account/${empty}/nfts`)).body).toEqual({ nfts: [] });
      expect((await get(`/api/v2/account/${empty}/offers_received`)).body).toEqual({ offers: [] });
      expect((await get(`/api/v2/chain/ethereum/account/0x${"ab".repeat(20)}/nfts`)).body).toEqual({ nfts: [] });
      expect((await get("/api/v2/chain/ethereum/account/not-an-address/nfts")).status).toBe(400);
      expect((await get(`/api/v2/chain/narnia/account/${whale}/nfts`)).status).toBe(400);
      expect((await get(`/api/v2/chain/ethereum/account/${whale}/nfts?limit=201`)).status).toBe(400);
    });

    it("lists offers received with filters, sorts and paging", async () => {
      const all = (await get<{ offers: OfferWire[] }>(`/api/v2/account/${whale}/offers_received?limit=200`)).body
        .offers;
      expect(all).toHaveLength(facts.wallets.offersReceived[whale]!);
      expect(new Set(all.map((o) => o.chain)).size).toBeGreaterThan(1);
      expect(all.some((o) => o.asset?.identifier)).toBe(true); // item offers
      expect(all.some((o) => !o.asset && !o.criteria?.traits)).toBe(true); // collection offers
      const times = all.map((o) => o.order_created_at!);
      expect(times).toEqual([...times].sort((a, b) => b - a));
      const top = (
        await get<{ offers: OfferWire[] }>(`/api/v2/account/${whale}/offers_received?sort_by=TOP_ASSET_OFFER&limit=200`)
      ).body.offers;
      const units = top.map((o) => offerUnitPrice(o));
      expect(units).toEqual([...units].sort((a, b) => (b > a ? 1 : b < a ? -1 : 0)));
      const base = (await get<{ offers: OfferWire[] }>(`/api/v2/account/${whale}/offers_received?chains=base`)).body
        .offers;
      expect(base.length).toBeGreaterThan(0);
      expect(base.every((o) => o.chain === "base")).toBe(true);
      const first = await get<{ offers: OfferWire[]; next: string }>(
        `/api/v2/account/${whale}/offers_received?limit=5`,
      );
      const second = await get<{ offers: OfferWire[] }>(
        `/api/v2/account/${whale}/offers_received?limit=5&after=${encodeURIComponent(first.body.next)}`,
      );
      expect([...first.body.offers, ...second.body.offers]).toEqual(all.slice(0, 10));
    });
  });

  describe("collections", () => {
    const collection = async (slug: string) => {
      const [stats, listings, offers, all] = await Promise.all([
        get<{ total: { floor_price: number; floor_price_symbol: string; volume_symbol: string } }>(
          `/api/v2/collections/${slug}/stats`,
        ),
        get<{ listings: ListingWire[] }>(`/api/v2/listings/collection/${slug}/best?limit=200`),
        get<{ offers: OfferWire[] }>(`/api/v2/offers/collection/${slug}?limit=200`),
        get<{ offers: OfferWire[] }>(`/api/v2/offers/collection/${slug}/all?limit=200`),
      ]);
      return { stats: stats.body, listings: listings.body.listings, offers: offers.body.offers, all: all.body.offers };
    };
    const eth = (wei: bigint | string) => Number(BigInt(wei)) / 1e18;

    it("has floors, best listings cheapest first, and the stats floor is the cheapest listing", async () => {
      for (const slug of facts.collections.established) {
        const c = await collection(slug);
        const prices = c.listings.map((l) => BigInt(l.price.current.value));
        expect(prices).toEqual([...prices].sort((a, b) => (a > b ? 1 : a < b ? -1 : 0)));
        if (c.listings.length > 0) expect(eth(prices[0]!)).toBeCloseTo(c.stats.total.floor_price, 9);
        for (const l of c.listings) {
          const sum = l.protocol_data.parameters.consideration.reduce((s, i) => s + BigInt(i.startAmount), 0n);
          expect(sum).toBe(BigInt(l.price.current.value));
        }
      }
    });

    it("has collections with a bid at or above the floor", async () => {
      expect(facts.collections.bidAboveFloor).toContain("lumen-apes");
      expect(facts.collections.bidAtFloor).toContain("static-kittens");
      for (const slug of ["lumen-apes", "static-kittens"]) {
        const c = await collection(slug);
        const best = eth(offerUnitPrice(c.offers[0]!));
        expect(best).toBeGreaterThanOrEqual(c.stats.total.floor_price);
        expect(c.offers[0]!.price.currency).toBe("WETH");
      }
      const below = await collection("fern-gardeners");
      expect(eth(offerUnitPrice(below.offers[0]!))).toBeLessThan(below.stats.total.floor_price);
    });

    it("keeps the traps the facts name", async () => {
      const noListings = await collection("quiet-machines");
      expect(noListings.listings).toEqual([]);
      expect(noListings.stats.total).toMatchObject({ floor_price: 0, floor_price_symbol: "" });
      expect((await collection("harbor-cards")).all).toEqual([]);

      const trait = await collection(facts.collections.traitOfferAboveFloorOnly);
      const floor = trait.stats.total.floor_price;
      expect(eth(offerUnitPrice(trait.offers[0]!))).toBeLessThan(floor);
      expect(trait.offers.some((o) => o.criteria?.traits)).toBe(false);
      const traitOffer = trait.all.find((o) => o.criteria?.traits)!;
      expect(eth(offerUnitPrice(traitOffer))).toBeGreaterThan(floor);

      const multi = await collection(facts.collections.multiQuantityOffer);
      const partial = multi.offers[0]!;
      expect(partial.remaining_quantity).toBe(6);
      const ordered = partial.protocol_data!.parameters.consideration.find((item) => item.itemType >= 2)!;
      expect(ordered.startAmount).toBe("10");
      expect(eth(partial.price.value)).toBeCloseTo(10 * eth(offerUnitPrice(partial)), 12);
      expect(facts.collections.bidAboveFloor).toContain(facts.collections.multiQuantityOffer);

      const dup = await collection(facts.collections.duplicateListing);
      const ids = dup.listings.map((l) => l.asset!.identifier);
      expect(new Set(ids).size).toBe(ids.length - 1);

      const mixed = await collection(facts.collections.mixedCurrencyStats);
      expect(mixed.stats.total.floor_price_symbol).toBe("POL");
      expect(mixed.stats.total.volume_symbol).toBe("ETH");
    });

    it("answers 404 with OpenSea's error body for an unknown collection", async () => {
      for (const path of [
        "/api/v2/collections/no-such-thing",
        "/api/v2/collections/no-such-thing/stats",
        "/api/v2/listings/collection/no-such-thing/best",
        "/api/v2/offers/collection/no-such-thing",
        "/api/v2/offers/collection/no-such-thing/all",
      ]) {
        const res = await get<{ errors: string[] }>(path);
        expect(res.status).toBe(404);
        expect(res.body.errors[0]).toMatch(/not found/);
      }
    });
  });
});

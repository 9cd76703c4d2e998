import { describe, expect, it } from "vitest";
import { judgeStages, STALE_AFTER_DAYS } from "../src/tools/drops/judge.js";
import type { DropStageInfo } from "../src/upstream/marketplace/drop-shapes.js";
import { createMarketplaceDrops } from "../src/upstream/marketplace/drops.js";
import { createUpstreamClient } from "../src/upstream/upstream-client.js";

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 22, 12);

function stage(startH: number | null, endH: number | null, kind: DropStageInfo["kind"] = "public"): DropStageInfo {
  return {
    uuid: null,
    name: kind,
    kind,
    startsAt: startH === null ? null : new Date(NOW + startH * HOUR),
    endsAt: endH === null ? null : new Date(NOW + endH * HOUR),
    price: null,
    maxPerWallet: null,
    allowlistSize: null,
  };
}

describe("judgeStages: which drops are verifiably live or upcoming", () => {
  it("live: a stage has started and not ended; the live stage ending soonest is the one reported", () => {
    const verdict = judgeStages([stage(-10, 50, "allowlist"), stage(-5, 20)], NOW);
    expect(verdict).toMatchObject({ status: "live", stage: { kind: "public" } });
  });

  it("upcoming: nothing live, a stage still to come (between stages too)", () => {
    expect(judgeStages([stage(-48, -3, "allowlist"), stage(21, 120)], NOW)).toMatchObject({
      status: "upcoming",
      stage: { startsAt: new Date(NOW + 21 * HOUR) },
    });
  });

  it("ended: every dated stage is over", () => {
    expect(judgeStages([stage(-300, -150), stage(-100, -1)], NOW)).toEqual({ excluded: "ended" });
  });

  it("undated: no stage has a start date (or there are no stages)", () => {
    expect(judgeStages([], NOW)).toEqual({ excluded: "undated" });
    expect(judgeStages([stage(null, null)], NOW)).toEqual({ excluded: "undated" });
  });

  it(`stale: open-ended and started more than ${STALE_AFTER_DAYS} days ago, with nothing to come`, () => {
    const justFresh = judgeStages([stage(-(STALE_AFTER_DAYS * 24 - 1), null)], NOW);
    expect(justFresh).toMatchObject({ status: "live" });
    expect(judgeStages([stage(-(STALE_AFTER_DAYS * 24 + 1), null)], NOW)).toEqual({ excluded: "stale" });
    // A stale open stage does not hide a stage still to come.
    expect(judgeStages([stage(-400 * 24, null), stage(24, 48, "allowlist")], NOW)).toMatchObject({
      status: "upcoming",
    });
    // An old stage with an end date is not stale.
    expect(judgeStages([stage(-400 * 24, 24)], NOW)).toMatchObject({ status: "live" });
  });

  it("sold out: total supply at or above max supply, whatever the dates", () => {
    expect(judgeStages([stage(-5, 20)], NOW, { total: 777, max: 777 })).toEqual({ excluded: "sold_out" });
    expect(judgeStages([stage(-5, 20)], NOW, { total: 776, max: 777 })).toMatchObject({ status: "live" });
    expect(judgeStages([stage(-5, 20)], NOW, { total: 9999, max: null })).toMatchObject({ status: "live" });
  });
});

/** A marketplace that answers from a function of the request URL. */
function marketplace(answer: (url: URL) => unknown) {
  const urls: URL[] = [];
  const client = createUpstreamClient({
    name: "the marketplace",
    baseUrl: "http://marketplace.test",
    retries: 0,
    fetch: async (input) => {
      const url = new URL(String(input));
      urls.push(url);
      return new Response(JSON.stringify(answer(url)), { headers: { "content-type": "application/json" } });
    },
  });
  return { drops: createMarketplaceDrops(client), urls };
}

const listed = (slug: string, extra: Record<string, unknown> = {}) => ({
  collection_slug: slug,
  chain: "base",
  contract_address: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
  drop_type: "seadrop_v1_erc721",
  is_minting: true,
  opensea_url: `https://opensea.io/collection/${slug}`,
  ...extra,
});

describe("marketplace drops adapter", () => {
  it("accepts null or missing optional fields, reads a 'never' end as no end date, names known currencies", async () => {
    const { drops } = marketplace(() => ({
      ...listed("night-owls", { collection_name: null, image_url: null, is_minting: null, next_stage: null }),
      opensea_url: null,
      total_supply: "1200",
      max_supply: null,
      stages: [
        {
          uuid: "a",
          stage_type: "presale",
          label: null,
          price: "10000000000000000",
          price_currency_address: "0x0000000000000000000000000000000000000000",
          start_time: "2026-11-23T16:00:00Z",
          end_time: "2106-02-07T06:28:15Z",
          max_per_wallet: "2",
          allowlist_wallet_count: null,
        },
        {
          uuid: "b",
          stage_type: "public_sale",
          price: "25000000",
          price_currency_address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
          start_time: "2026-11-20T16:00:00Z",
          end_time: "2026-11-21T16:00:00Z",
          max_per_wallet: null,
        },
        {
          uuid: "c",
          stage_type: "mystery",
          price: "1",
          price_currency_address: "0x1111111111111111111111111111111111111111",
        },
      ],
    }));
    const detail = (await drops.detail("night-owls"))!;
    expect(detail.name).toBe("night-owls");
    expect(detail.contractAddress).toBe("0x5FbDB2315678afecb367f032d93F642f64180aa3");
    expect(detail.openseaUrl).toBe("https://opensea.io/collection/night-owls");
    expect(detail.imageUrl).toBeNull();
    expect([detail.totalSupply, detail.maxSupply]).toEqual([1200, null]);
    // In start order, undated last.
    expect(detail.stages.map((s) => s.uuid)).toEqual(["b", "a", "c"]);
    const [pub, presale, mystery] = detail.stages;
    expect(presale).toMatchObject({ kind: "allowlist", name: "Allowlist", endsAt: null, maxPerWallet: 2 });
    expect(presale!.price).toEqual({ amount: "10000000000000000", currency: "ETH", decimals: 18, usd: null });
    expect(pub!.price).toEqual({ amount: "25000000", currency: "USDC", decimals: 6, usd: 25 });
    expect(mystery).toMatchObject({ kind: "unknown", name: "mystery", price: null, startsAt: null });
  });

  it("follows next until enough drops were read, and no further than maxPages", async () => {
    const { drops, urls } = marketplace((url) => {
      const page = Number(url.searchParams.get("cursor") ?? "0");
      return { drops: [listed(`drop-${page}a`), listed(`drop-${page}b`)], next: String(page + 1) };
    });
    const enough = await drops.list({ feed: "upcoming", want: 5, maxPages: 10 });
    expect(enough.drops).toHaveLength(6);
    expect(enough.pages).toBe(3);
    expect(urls[0]!.searchParams.get("type")).toBe("upcoming");
    expect(urls[1]!.searchParams.get("cursor")).toBe("1");

    const bounded = await drops.list({ feed: "featured", chain: "base", want: 50, maxPages: 2 });
    expect(bounded).toMatchObject({ pages: 2, truncated: true });
    expect(urls.at(-1)!.searchParams.get("chains")).toBe("base");
  });
});

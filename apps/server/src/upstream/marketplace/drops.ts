/**
 * The marketplace's drops (OpenSea API v2) over the upstream client: the discovery feeds with their paging, a
 * drop's detail (stages and supply) and a wallet's per-stage eligibility, mapped to the types of ./drop-shapes.ts.
 */
import { type UpstreamClient, UpstreamStatusError } from "../upstream-client.js";
import {
  dropDetailWire,
  dropPageWire,
  type EligibilityRefusal,
  eligibilityWire,
  type MarketplaceDrop,
  type MarketplaceDropDetail,
  type MarketplaceDropFeed,
  type StageEligibility,
  toDrop,
  toDropDetail,
  toStageEligibility,
} from "./drop-shapes.js";

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                   Adapter                                                    */
/* ----------------------------------------------------------------------------------------------------------- */

export interface ListDropsQuery {
  feed: MarketplaceDropFeed;
  /** Only drops of this chain (`chains=<chain>`); omit for the unfiltered feed. */
  chain?: string;
  /** Stop paging once this many drops passing `keep` were read. */
  want: number;
  /** Which listed drops count towards `want` (default: all). */
  keep?: (drop: MarketplaceDrop) => boolean;
  /** Page size asked for (1-100; default 20). */
  pageSize?: number;
  /** Most pages read (default 5). */
  maxPages?: number;
}

export interface ListDropsResult {
  /** Every drop read, in feed order (hidden drops never come: the marketplace filters them out of its pages). */
  drops: MarketplaceDrop[];
  pages: number;
  /** True when paging stopped at `maxPages` with more pages left. */
  truncated: boolean;
}

export interface MarketplaceDrops {
  /** A discovery feed, page after page (following `next`) until `want` drops pass `keep`, bounded by `maxPages`. */
  list(query: ListDropsQuery): Promise<ListDropsResult>;
  /** A drop's detail (all stages and supply); null when the marketplace has no drop for the slug. */
  detail(slug: string): Promise<MarketplaceDropDetail | null>;
  /**
   * Per-stage eligibility of the wallet whose OAuth access token (`read:eligibility`) is `bearer`; a refusal
   * (401, 403, 404) is answered, not thrown. Outages throw the upstream client's 502/503/504.
   */
  eligibility(
    slug: string,
    bearer: string,
  ): Promise<{ stages: StageEligibility[] } | { refused: EligibilityRefusal; status: number }>;
}

const LIST_TTL_MS = 30_000;
const DETAIL_TTL_MS = 60_000;
const ELIGIBILITY_TTL_MS = 30_000;

export function createMarketplaceDrops(client: UpstreamClient): MarketplaceDrops {
  return {
    async list(query) {
      const pageSize = Math.min(100, Math.max(1, query.pageSize ?? 20));
      const maxPages = Math.max(1, query.maxPages ?? 5);
      const keep = query.keep ?? (() => true);
      const drops: MarketplaceDrop[] = [];
      let kept = 0;
      let cursor: string | undefined;
      let pages = 0;
      for (;;) {
        const page = await client.get("/api/v2/drops", {
          query: { type: query.feed, limit: pageSize, chains: query.chain, cursor },
          schema: dropPageWire,
          ttlMs: LIST_TTL_MS,
        });
        pages++;
        for (const wire of page?.drops ?? []) {
          const drop = toDrop(wire);
          drops.push(drop);
          if (keep(drop)) kept++;
        }
        cursor = page?.next;
        if (!cursor || kept >= query.want) return { drops, pages, truncated: false };
        if (pages >= maxPages) return { drops, pages, truncated: true };
      }
    },

    async detail(slug) {
      const wire = await client.get(`/api/v2/drops/${encodeURIComponent(slug)}`, {
        schema: dropDetailWire,
        ttlMs: DETAIL_TTL_MS,
        notFoundAsNull: true,
      });
      if (!wire) return null;
      return toDropDetail(wire);
    },

    async eligibility(slug, bearer) {
      try {
        const answer = await client.get(`/api/v2/drops/${encodeURIComponent(slug)}/eligibility`, {
          schema: eligibilityWire,
          ttlMs: ELIGIBILITY_TTL_MS,
          notFoundAsNull: true,
          headers: { authorization: `Bearer ${bearer}` },
        });
        if (!answer) return { refused: "not_found", status: 404 };
        return { stages: answer.stages.map(toStageEligibility) };
      } catch (error) {
        if (error instanceof UpstreamStatusError && error.upstreamStatus === 403) {
          // OpenSea's API declares a 403 of this route to carry a DropEligibilityResponse: stages it does say
          // are read as such; a body without any is a refusal.
          const said = eligibilityWire.safeParse(error.upstreamBody);
          if (said.success && said.data.stages.length > 0) return { stages: said.data.stages.map(toStageEligibility) };
          return { refused: "forbidden", status: 403 };
        }
        if (error instanceof UpstreamStatusError && error.upstreamStatus === 401) {
          return { refused: "unauthorized", status: 401 };
        }
        throw error;
      }
    },
  };
}

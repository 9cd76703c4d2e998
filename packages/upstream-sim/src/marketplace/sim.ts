/**
 * The marketplace simulator: the OpenSea API v2 GET routes the market tools read, answering from the fixtures in
 * OpenSea's wire format (opensea-api.json), behind an `x-api-key` check.
 */
import {
  BadRequest,
  cdnErrorPage,
  decodeCursor,
  intParam,
  isEvmAddress,
  json,
  listParam,
  page,
} from "../core/http-helpers.js";
import {
  type Route,
  type RouteContext,
  type RouteResult,
  type SimServer,
  type SimServerOptions,
  startSimServer,
} from "../core/sim-server.js";
import { isOpenSeaChain, OPENSEA_CHAIN_IDENTIFIERS } from "./chains.js";
import { DROP_FEEDS, type DropFeed, dropEligibility, feedEntries } from "./drops.js";
import { type MarketplaceFixture, marketplaceFixture, parseWalletAccessToken } from "./fixture.js";
import { offerUnitPrice } from "./market.js";
import type { OfferWire } from "./wire.js";

export interface MarketplaceSimOptions extends SimServerOptions {
  /** Accept only this API key (401 for another). Default: any non-empty `x-api-key`. */
  apiKey?: string;
}

export interface MarketplaceSim extends SimServer {
  /** The fixture the simulator answers from right now (it depends on the clock's hour). */
  fixture(): MarketplaceFixture;
}

/** The routes served, as templates (also usable as fault and request-log patterns). */
export const MARKETPLACE_ROUTES = {
  drops: "/api/v2/drops",
  drop: "/api/v2/drops/{slug}",
  dropEligibility: "/api/v2/drops/{slug}/eligibility",
  accountNfts: "/api/v2/chain/{chain}/account/{address}/nfts",
  offersReceived: "/api/v2/account/{address}/offers_received",
  collection: "/api/v2/collections/{slug}",
  collectionStats: "/api/v2/collections/{slug}/stats",
  bestListings: "/api/v2/listings/collection/{slug}/best",
  collectionOffers: "/api/v2/offers/collection/{slug}",
  allOffers: "/api/v2/offers/collection/{slug}/all",
} as const;

const errors = (status: number, ...messages: string[]) => json(status, { errors: messages });

function guard(handler: (ctx: RouteContext) => RouteResult): (ctx: RouteContext) => RouteResult {
  return (ctx) => {
    try {
      return handler(ctx);
    } catch (error) {
      if (error instanceof BadRequest) return errors(400, error.message);
      throw error;
    }
  };
}

function chainsParam(query: URLSearchParams, name: string): string[] {
  const chains = listParam(query, name);
  for (const chain of chains) {
    if (!isOpenSeaChain(chain)) {
      throw new BadRequest(
        `${name}: unknown chain '${chain}'; expected one of ${OPENSEA_CHAIN_IDENTIFIERS.join(", ")}`,
      );
    }
  }
  return [...new Set(chains)];
}

function walletParam(value: string): string {
  if (!isEvmAddress(value)) throw new BadRequest(`address: '${value}' is not a valid address`);
  return value.toLowerCase();
}

export function marketplaceRoutes(now: () => number): Route[] {
  class NotFound extends Error {}
  const fx = () => marketplaceFixture(now());
  const collectionOr404 = (slug: string) => {
    const col = fx().collections.get(slug);
    if (!col) throw new NotFound(`Collection with slug '${slug}' not found`);
    return col;
  };
  const withNotFound =
    (handler: (ctx: RouteContext) => RouteResult) =>
    (ctx: RouteContext): RouteResult => {
      try {
        return guard(handler)(ctx);
      } catch (error) {
        if (error instanceof NotFound) return errors(404, error.message);
        throw error;
      }
    };

  return [
    {
      template: MARKETPLACE_ROUTES.drops,
      handler: guard(({ query }) => {
        const type = query.get("type") || "featured";
        if (!(DROP_FEEDS as readonly string[]).includes(type)) {
          throw new BadRequest(`type: must be one of ${DROP_FEEDS.join(", ")}`);
        }
        const limit = intParam(query, "limit", 20, 1, 100);
        const chains = chainsParam(query, "chains");
        const scope = `drops:${type}:${[...chains].sort().join(",")}`;
        const offset = decodeCursor(query.get("cursor"), scope, "cursor");
        const entries = feedEntries(fx().drops, type as DropFeed, chains);
        const { items, next } = page(entries, offset, limit, scope);
        // Hidden drops count against the page and are then filtered out: a page can be short, even empty.
        const drops = items.filter((d) => !d.spec.hidden).map((d) => d.summary);
        return json(200, next ? { drops, next } : { drops });
      }),
    },
    {
      template: MARKETPLACE_ROUTES.drop,
      handler: guard(({ params }) => {
        const drop = fx().drops.bySlug.get(params.slug!);
        if (!drop || drop.spec.hidden) return errors(404, `Drop not found for collection slug '${params.slug}'`);
        return json(200, drop.detail);
      }),
    },
    {
      template: MARKETPLACE_ROUTES.dropEligibility,
      handler: guard(({ params, headers }) => {
        const auth = headers.authorization;
        const match = typeof auth === "string" ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
        if (!match) return json(401, { detail: "Wallet authorization required: send Authorization: Bearer <token>." });
        const token = parseWalletAccessToken(match[1]!);
        if (!token) return json(401, { detail: "Invalid or expired access token." });
        // OpenSea's document declares this route's 403 as a DropEligibilityResponse: no stage is said here.
        if (!token.scopes.includes("read:eligibility")) return json(403, { stages: [] });
        const drop = fx().drops.bySlug.get(params.slug!);
        if (!drop || drop.spec.hidden) return errors(404, `Drop not found for collection slug '${params.slug}'`);
        return json(200, { stages: dropEligibility(drop, token.wallet) });
      }),
    },
    {
      template: MARKETPLACE_ROUTES.accountNfts,
      handler: guard(({ params, query }) => {
        const chain = params.chain!;
        if (!isOpenSeaChain(chain)) throw new BadRequest(`chain: unknown chain '${chain}'`);
        if (chain === "solana") throw new BadRequest("chain: the simulator serves EVM chains only");
        const wallet = walletParam(params.address!);
        const limit = intParam(query, "limit", 50, 1, 200);
        const collection = query.get("collection");
        const scope = `nfts:${chain}:${wallet}:${collection ?? ""}`;
        const offset = decodeCursor(query.get("next"), scope, "next");
        const all = fx().wallets.get(wallet)?.nfts.get(chain) ?? [];
        const nfts = collection ? all.filter((n) => n.collection === collection) : all;
        const { items, next } = page(nfts, offset, limit, scope);
        return json(200, next ? { nfts: items, next } : { nfts: items });
      }),
    },
    {
      template: MARKETPLACE_ROUTES.offersReceived,
      handler: guard(({ params, query }) => {
        const wallet = walletParam(params.address!);
        const limit = intParam(query, "limit", 50, 1, 200);
        const slugs = listParam(query, "collection_slugs");
        const chains = chainsParam(query, "chains");
        const sortBy = query.get("sort_by") || "START_TIME";
        if (sortBy !== "START_TIME" && sortBy !== "TOP_ASSET_OFFER") {
          throw new BadRequest("sort_by: must be START_TIME or TOP_ASSET_OFFER");
        }
        const direction = query.get("sort_direction") || "desc";
        if (direction !== "asc" && direction !== "desc") throw new BadRequest("sort_direction: must be asc or desc");
        const scope = `received:${wallet}:${[...slugs].sort()}:${[...chains].sort()}:${sortBy}:${direction}`;
        const offset = decodeCursor(query.get("after"), scope, "after");
        let offers: OfferWire[] = fx().wallets.get(wallet)?.offersReceived ?? [];
        if (slugs.length > 0) offers = offers.filter((o) => slugs.includes(o.criteria?.collection?.slug ?? ""));
        if (chains.length > 0) offers = offers.filter((o) => chains.includes(o.chain));
        const key = (o: OfferWire) => (sortBy === "START_TIME" ? BigInt(o.order_created_at ?? 0) : offerUnitPrice(o));
        offers = [...offers].sort((a, b) => {
          const d = key(a) - key(b);
          const c = d > 0n ? 1 : d < 0n ? -1 : 0;
          return direction === "asc" ? c : -c;
        });
        const { items, next } = page(offers, offset, limit, scope);
        return json(200, next ? { offers: items, next } : { offers: items });
      }),
    },
    {
      template: MARKETPLACE_ROUTES.collection,
      handler: withNotFound(({ params }) => json(200, collectionOr404(params.slug!).detail)),
    },
    {
      template: MARKETPLACE_ROUTES.collectionStats,
      handler: withNotFound(({ params }) => json(200, collectionOr404(params.slug!).stats)),
    },
    {
      template: MARKETPLACE_ROUTES.bestListings,
      handler: withNotFound(({ params, query }) => {
        const col = collectionOr404(params.slug!);
        const limit = intParam(query, "limit", 100, 1, 200);
        const traits = query.get("traits");
        if (traits) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(traits);
          } catch {
            throw new BadRequest("traits: must be a JSON array of {traitType, value}");
          }
          if (!Array.isArray(parsed)) throw new BadRequest("traits: must be a JSON array of {traitType, value}");
          // Fixture listings carry no traits: a trait filter matches nothing.
          if (parsed.length > 0) return json(200, { listings: [] });
        }
        const scope = `best:${col.spec.slug}`;
        const { items, next } = page(col.listings, decodeCursor(query.get("next"), scope, "next"), limit, scope);
        return json(200, next ? { listings: items, next } : { listings: items });
      }),
    },
    {
      template: MARKETPLACE_ROUTES.collectionOffers,
      handler: withNotFound(({ params, query }) => {
        const col = collectionOr404(params.slug!);
        const limit = intParam(query, "limit", 100, 1, 200);
        const scope = `offers:${col.spec.slug}`;
        const { items, next } = page(
          col.collectionOffers,
          decodeCursor(query.get("next"), scope, "next"),
          limit,
          scope,
        );
        return json(200, next ? { offers: items, next } : { offers: items });
      }),
    },
    {
      template: MARKETPLACE_ROUTES.allOffers,
      handler: withNotFound(({ params, query }) => {
        const col = collectionOr404(params.slug!);
        const limit = intParam(query, "limit", 100, 1, 200);
        const maker = query.get("maker")?.toLowerCase();
        const scope = `alloffers:${col.spec.slug}:${maker ?? ""}`;
        const offers = maker
          ? col.allOffers.filter((o) => o.protocol_data.parameters.offerer === maker)
          : col.allOffers;
        const { items, next } = page(offers, decodeCursor(query.get("next"), scope, "next"), limit, scope);
        return json(200, next ? { offers: items, next } : { offers: items });
      }),
    },
  ];
}

/** Starts the marketplace simulator (OpenSea API v2) on 127.0.0.1 and a free port unless told otherwise. */
export async function createMarketplaceSim(options: MarketplaceSimOptions = {}): Promise<MarketplaceSim> {
  let server: SimServer | undefined;
  const now = () => server?.now() ?? Date.now();
  server = await startSimServer(
    {
      name: "marketplace-sim",
      routes: marketplaceRoutes(() => now()),
      authorize: ({ headers }) => {
        const key = headers["x-api-key"];
        if (typeof key !== "string" || key.trim() === "") {
          return json(401, { detail: "Authentication credentials were not provided." });
        }
        if (options.apiKey !== undefined && key !== options.apiKey) return json(401, { detail: "Invalid API key" });
        return undefined;
      },
      errorBody: (status, retryAfter) => {
        if (status === 429) {
          const detail =
            retryAfter === undefined
              ? "Request was throttled."
              : `Request was throttled. Expected available in ${retryAfter} second${retryAfter === 1 ? "" : "s"}.`;
          return { contentType: "application/json", text: JSON.stringify({ detail }) };
        }
        if (status >= 502)
          return { contentType: "text/html; charset=UTF-8", text: cdnErrorPage(status, "api.opensea.io") };
        return { contentType: "application/json", text: JSON.stringify({ errors: ["Internal server error"] }) };
      },
      notFound: () => json(404, { detail: "Not found." }),
    },
    options,
  );
  const sim = server;
  return Object.assign(sim, { fixture: () => marketplaceFixture(sim.now()) });
}

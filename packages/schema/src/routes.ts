import type { z } from "zod";
import type { ErrorCode } from "./errors.js";
import { examples } from "./examples.js";
import type { Clearance } from "./primitives.js";
import { allowlistScanRequestSchema, allowlistScanResponseSchema } from "./tools/allowlist-scan.js";
import { altchainRadarRequestSchema, altchainRadarResponseSchema } from "./tools/altchain-radar.js";
import { b20RadarRequestSchema, b20RadarResponseSchema } from "./tools/b20-radar.js";
import { dropRadarRequestSchema, dropRadarResponseSchema } from "./tools/drop-radar.js";
import { intelRequestSchema, intelResponseSchema } from "./tools/intel.js";
import { offerRadarRequestSchema, offerRadarResponseSchema } from "./tools/offer-radar.js";
import { portfolioRequestSchema, portfolioResponseSchema } from "./tools/portfolio.js";

/** What a route of the table says about itself: path, method, contracts, price, clearance, words for the docs. */
export interface ToolRouteDefinition {
  /** Route path; the same path answers POST (JSON body) and GET (query parameters) unless `method` says one. */
  path: `/${string}`;
  /** The one method of a route whose POST and GET do different things (`/dispatch`). */
  method?: "post" | "get";
  /** Status of a successful answer when it is not 200 (202 for a queued mission). */
  successStatus?: 200 | 202;
  /** Only revealed agents may use the route; an unrevealed token gets 403 `agent_not_revealed`. */
  revealedOnly?: boolean;
  /**
   * The call pays for work done later (a queued mission): it is charged its price point on every scheme, metered ones
   * too, since no work is counted when it answers (docs/api.md, "Prices by the work done").
   */
  paidAhead?: boolean;
  /**
   * What the tool finds out only while it runs and answers 404 for, uncharged: nothing it was asked about exists
   * (docs/decisions.md, "Only answers are paid").
   */
  notFound?: { code: ErrorCode; when: string };
  operationId: `service${string}`;
  /** Slug of the tool's ERC-8257 manifest. */
  slug: string;
  summary: string;
  description: string;
  /** Lowest clearance a signed-in holder needs; it is also the clearance that earns the discounted price. */
  minimumClearance: Clearance;
  tags: readonly string[];
  request: z.ZodObject;
  response: z.ZodObject;
  /** Sample request body (payment catalog `input`, OpenAPI example). */
  sampleInput: Record<string, unknown>;
  /** Sample 200 body (OpenAPI example); tests check it against `response`. */
  sampleOutput: Record<string, unknown>;
}

/**
 * The route table of the paid tools, keyed by the SDK's method names. Server, SDK, OpenAPI document,
 * payment catalog and tool manifests are all generated from it.
 */
export const toolRoutes = {
  intel: {
    path: "/intel",
    revealedOnly: true,
    operationId: "serviceIntel",
    slug: "intel",
    summary: "Agent intel",
    description:
      "Agent profile, signal analysis and mission brief for a token. Revealed agents only: an unrevealed agent has " +
      "no traits or rank yet, and is refused before any price is asked. Requires holding a token of the collection.",
    minimumClearance: "Holder",
    tags: ["agents", "intel"],
    request: intelRequestSchema,
    response: intelResponseSchema,
    sampleInput: { tokenId: 7 },
    sampleOutput: examples.intel,
  },
  dropRadar: {
    path: "/drop-radar",
    operationId: "serviceDropRadar",
    slug: "drop-radar",
    summary: "NFT drop radar",
    description:
      "Scans marketplace NFT drops and mint stages. Returns only drops that are verifiably active or upcoming: ended " +
      "drops, undated drops and stale open-ended drops are excluded, whatever the feed. Requires holding a token of the collection.",
    minimumClearance: "Holder",
    tags: ["nft", "drops", "radar"],
    request: dropRadarRequestSchema,
    response: dropRadarResponseSchema,
    sampleInput: { tokenId: 7, type: "upcoming", limit: 10 },
    sampleOutput: examples.dropRadar,
  },
  b20Radar: {
    path: "/b20-radar",
    operationId: "serviceB20Radar",
    slug: "b20-radar",
    summary: "B20 token radar (Base)",
    description:
      "Watches the layer-2 chain's native B20 token standard. Without `address`, surfaces newly deployed B20 tokens " +
      "from the factory precompile; with `address`, inspects one B20 token (name, symbol, variant, decimals, currency, " +
      "supply) with market data. Requires holding a token of the collection.",
    minimumClearance: "Holder",
    tags: ["tokens", "b20", "base", "radar"],
    request: b20RadarRequestSchema,
    response: b20RadarResponseSchema,
    sampleInput: { tokenId: 7, blocksBack: 43200, limit: 10 },
    sampleOutput: examples.b20Radar,
  },
  altchainRadar: {
    path: "/altchain-radar",
    operationId: "serviceAltchainRadar",
    slug: "altchain-radar",
    summary: "Second-chain token radar",
    description:
      "Radar for a second chain: the most active community tokens and tokenized assets, ranked by 24h volume, with " +
      "liquidity, market cap and price action; with `address`, one token (404 `market_not_found`, uncharged, when no " +
      "pair trades it). Rejects unknown body properties. Requires Elite (Epic+) clearance.",
    notFound: { code: "market_not_found", when: "no pair on the chain trades the `address` asked about" },
    minimumClearance: "Elite",
    tags: ["tokens", "altchain", "radar"],
    request: altchainRadarRequestSchema,
    response: altchainRadarResponseSchema,
    sampleInput: { tokenId: 5, limit: 15 },
    sampleOutput: examples.altchainRadar,
  },
  portfolio: {
    path: "/portfolio",
    operationId: "servicePortfolio",
    slug: "portfolio",
    summary: "Wallet portfolio",
    description:
      "Wallet portfolio: NFT holdings, received offers and estimated value. Requires a Rare-tier or higher agent token.",
    minimumClearance: "Rare",
    tags: ["nft", "portfolio", "wallet"],
    request: portfolioRequestSchema,
    response: portfolioResponseSchema,
    sampleInput: { tokenId: 2, chain: "ethereum", nftLimit: 25 },
    sampleOutput: examples.portfolio,
  },
  allowlistScan: {
    path: "/allowlist-scan",
    operationId: "serviceAllowlistScan",
    slug: "allowlist-scan",
    summary: "Allowlist scan",
    description:
      "Batch-scans verifiably active and upcoming drops for the wallet's mint eligibility; ended, undated and stale " +
      "open-ended drops are excluded. `eligibleOnly: false` (default) lists ineligible drops in `ineligible`; " +
      "`true` omits that array. Requires a Rare-tier or higher agent token.",
    minimumClearance: "Rare",
    tags: ["nft", "drops", "allowlist"],
    request: allowlistScanRequestSchema,
    response: allowlistScanResponseSchema,
    sampleInput: { tokenId: 2, type: "all", limit: 25 },
    sampleOutput: examples.allowlistScan,
  },
  offerRadar: {
    path: "/offer-radar",
    operationId: "serviceOfferRadar",
    slug: "offer-radar",
    summary: "Collection offer radar",
    description:
      "Collection offer and listing radar: floor, best listings and collection offers for up to 10 slugs, ranked by " +
      "opportunity (bids at or above floor first). A slug the marketplace does not know is reported in its entry; " +
      "when it knows none of them, the call answers 404 `collection_not_found` and costs nothing. Requires an " +
      "Epic-tier or higher agent token (Elite clearance).",
    notFound: { code: "collection_not_found", when: "the marketplace knows none of the slugs" },
    minimumClearance: "Elite",
    tags: ["nft", "offers", "radar"],
    request: offerRadarRequestSchema,
    response: offerRadarResponseSchema,
    sampleInput: { tokenId: 5, slugs: ["base-bloomers", "static-kittens"] },
    sampleOutput: examples.offerRadar,
  },
} as const satisfies Record<string, ToolRouteDefinition>;

/** The name of a tool of the route table (`intel`, `dropRadar`, ...), as the SDK's methods are named. */
export type ToolName = keyof typeof toolRoutes;

/** Every tool's name, in the order of the route table. */
export const toolNames = Object.keys(toolRoutes) as ToolName[];

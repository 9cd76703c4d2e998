import type { PaidRouteName, ToolOutput, ToolParams } from "@agent-tools/schema";
import type { Address } from "viem";
import type { B20Scanner } from "../chain/b20-scanner.js";
import type { CollectionIndex, IndexedToken } from "../chain/collection-index.js";
import type { MissionQueue } from "../store/mission-queue.js";
import type { EligibilityTokens } from "../upstream/eligibility-tokens.js";
import type { UpstreamClient } from "../upstream/upstream-client.js";

/** What a tool gets besides its validated input; tools never see the HTTP request or response. */
export interface ToolContext {
  /** The SIWE-authenticated caller, when the call was signed in; absent for anonymous callers. */
  caller?: Address;
  /** The agent token named by `tokenId` (it exists; it may be unrevealed). */
  token: IndexedToken;
  /** The collection as of this request (already synced). */
  collection: CollectionIndex;
  /** The clock, passed in so tests can fix it. */
  now: () => Date;
  /** The verified payment of the call (absent when a queued mission runs: its call was paid when queued). */
  payment?: { key: string; payer: Address };
}

/**
 * A tool: validated input in, the route's response out. A tool fails by throwing an ServiceError (4xx, or
 * 502/503/504 for upstream trouble); a failed tool call is never charged.
 */
export type Tool<N extends PaidRouteName> = (params: ToolParams<N>, context: ToolContext) => Promise<ToolOutput<N>>;

/** The tools of the paid routes, by route name (a route without one answers 501 after its checks). */
export type ToolSet = { [N in PaidRouteName]?: Tool<N> };

/** What the market tools read from: the marketplace, the market-data aggregator and the B20 chain. */
export interface ToolDeps {
  marketplace: UpstreamClient;
  marketData: UpstreamClient;
  b20: B20Scanner;
  /** DexScreener chain id of the B20 chain (Base: "base"). */
  b20ChainId: string;
  /** DexScreener chain id of the second chain the altchain radar watches (for example "bsc"). */
  altchainId: string;
  /**
   * OAuth token with `read:eligibility` for a wallet that authorized the service at the marketplace; the
   * marketplace answers eligibility only for such wallets.
   */
  eligibilityToken: EligibilityTokens;
  /** The mission queue, and a way to have due missions run now; without it `/dispatch` is not served. */
  missions?: { queue: MissionQueue; wake: () => void };
}

import type { B20Scanner } from "../chain/b20-scanner.js";
import type { ToolSet } from "../routes/tools.js";
import type { UpstreamClient } from "../upstream/upstream-client.js";
import { intelTool } from "./intel.js";

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
  eligibilityToken: (wallet: string) => string | undefined;
}

/** The tools the service runs, by route name. */
export function createTools(_deps: ToolDeps): ToolSet {
  return {
    intel: intelTool,
  };
}

import type { B20Scanner } from "../chain/b20-scanner.js";
import type { MissionQueue } from "../store/mission-queue.js";
import type { UpstreamClient } from "../upstream/upstream-client.js";
import { createAllowlistScanTool } from "./allowlist-scan.js";
import { createAltchainRadarTool } from "./altchain-radar.js";
import { createB20RadarTool } from "./b20-radar.js";
import { createDispatchTool } from "./dispatch.js";
import { createDropRadarTool } from "./drop-radar.js";
import { intelTool } from "./intel.js";
import { createListMissionsTool } from "./list-missions.js";
import { createOfferRadarTool } from "./offer-radar.js";
import { createPortfolioTool } from "./portfolio.js";
import type { ToolSet } from "./types.js";

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
  /** The mission queue, and a way to have due missions run now; without it `/dispatch` is not served. */
  missions?: { queue: MissionQueue; wake: () => void };
}

/** The tools the service runs, by route name. */
export function createTools(deps: ToolDeps): ToolSet {
  return {
    intel: intelTool,
    dropRadar: createDropRadarTool(deps),
    allowlistScan: createAllowlistScanTool(deps),
    b20Radar: createB20RadarTool(deps),
    altchainRadar: createAltchainRadarTool(deps),
    portfolio: createPortfolioTool(deps),
    offerRadar: createOfferRadarTool(deps),
    ...(deps.missions
      ? {
          dispatch: createDispatchTool({ missions: deps.missions.queue, wake: deps.missions.wake }),
          missions: createListMissionsTool({ missions: deps.missions.queue }),
        }
      : {}),
  };
}

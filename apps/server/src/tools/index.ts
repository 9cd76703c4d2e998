import { createAllowlistScanTool } from "./allowlist-scan.js";
import { createAltchainRadarTool } from "./altchain-radar.js";
import { createB20RadarTool } from "./b20-radar.js";
import { createDispatchTool } from "./dispatch.js";
import { createDropRadarTool } from "./drop-radar.js";
import { intelTool } from "./intel.js";
import { createListMissionsTool } from "./list-missions.js";
import { createOfferRadarTool } from "./offer-radar.js";
import { createPortfolioTool } from "./portfolio.js";
import type { ToolDeps, ToolSet } from "./types.js";

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

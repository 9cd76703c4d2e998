import type { ToolSet } from "../routes/tools.js";
import { intelTool } from "./intel.js";

/** The tools the service runs, by route name. */
export const tools: ToolSet = {
  intel: intelTool,
};

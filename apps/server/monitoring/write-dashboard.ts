/** Writes deploy/grafana/agent-tools.json from its typed source (monitoring/grafana-dashboard.ts). */
import { writeFileSync } from "node:fs";
import { grafanaDashboard } from "./grafana-dashboard.js";

export const DASHBOARD_FILE = new URL("../../../deploy/grafana/agent-tools.json", import.meta.url);

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(DASHBOARD_FILE, `${JSON.stringify(grafanaDashboard, null, 2)}\n`);
  console.log(`wrote ${DASHBOARD_FILE.pathname}`);
}

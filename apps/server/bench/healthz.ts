/** Line 1: `GET /healthz` of our app next to a bare Express 5 app answering `{ ok: true }`. */
import { alternate, combine, type LoadResult, load, type ServerCpu } from "./load.js";
import type { HostInfo } from "./protocol.js";

const WARM_UP_SECONDS = 1;
/** Two rounds of 2 s per app, alternating. */
const ROUNDS = 2;
const SECONDS_PER_ROUND = 2;

export async function benchHealthz(
  host: HostInfo,
  serverCpu: ServerCpu,
): Promise<{ bare: LoadResult; ours: LoadResult }> {
  const urls = { bare: `${host.urls.bare}/healthz`, ours: `${host.urls.ours}/healthz` };
  for (const url of Object.values(urls)) await load({ url, expect: 200, seconds: WARM_UP_SECONDS });
  const measure = (url: string) => () => load({ url, expect: 200, seconds: SECONDS_PER_ROUND, serverCpu });
  const runs = await alternate(ROUNDS, { bare: measure(urls.bare), ours: measure(urls.ours) });
  return { bare: combine(runs.bare), ours: combine(runs.ours) };
}

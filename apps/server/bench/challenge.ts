/**
 * Line 2: the 402 challenge of an anonymous `POST /intel {"tokenId":7}` without payment, ours next to plain
 * `@x402/express` with a static price.
 */
import { alternate, combine, type LoadOptions, type LoadResult, load, type ServerCpu } from "./load.js";
import { INTEL_BODY } from "./payments.js";
import type { HostInfo } from "./protocol.js";

const WARM_UP_SECONDS = 1;
/** Two rounds of 2 s per app, alternating. */
const ROUNDS = 2;
const SECONDS_PER_ROUND = 2;

export async function benchChallenge(
  host: HostInfo,
  serverCpu: ServerCpu,
): Promise<{ reference: LoadResult; ours: LoadResult }> {
  const request = (base: string): LoadOptions => ({
    url: `${base}/intel`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: INTEL_BODY,
    expect: 402,
  });
  const requests = { reference: request(host.urls.reference), ours: request(host.urls.ours) };
  for (const options of Object.values(requests)) await load({ ...options, seconds: WARM_UP_SECONDS });
  const measure = (options: LoadOptions) => () => load({ ...options, seconds: SECONDS_PER_ROUND, serverCpu });
  const runs = await alternate(ROUNDS, { reference: measure(requests.reference), ours: measure(requests.ours) });
  return { reference: combine(runs.reference), ours: combine(runs.ours) };
}

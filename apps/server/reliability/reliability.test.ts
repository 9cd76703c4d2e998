/**
 * The reliability suite (`pnpm test:reliability`): the built server under hostile input, payment abuse with real
 * signatures, upstream faults, SIGKILL under paid load and a soak, against real processes. `RELIABILITY=full` runs
 * the long version (10,000 fuzz requests, a 60 s soak); the default is sized for CI. One summary line at the end.
 */

import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { errorBodySchema, paymentRequiredSchema } from "@agent-tools/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Environment, startEnvironment } from "./environment.js";
import { fuzzCases } from "./fuzz-cases.js";
import { eachLimit, rawRequest } from "./raw-request.js";

const FULL = process.env.RELIABILITY === "full";
const SCALE = {
  fuzz: FULL ? 10_000 : 2_000,
  soakSeconds: FULL ? 60 : 15,
  kills: FULL ? 4 : 2,
};
const SEED = Number(process.env.RELIABILITY_SEED ?? 20261123);

let env: Environment;
const summary: Record<string, string> = {};

beforeAll(async () => {
  env = await startEnvironment();
}, 180_000);
afterAll(async () => {
  await env?.close();
  const line = ["fuzz", "payment", "faults", "crash", "soak"]
    .map((phase) => summary[phase] ?? `${phase} not run`)
    .join(", ");
  console.log(`reliability: ${line}`);
});

describe("fuzz", () => {
  it(`answers ${SCALE.fuzz} hostile requests without a 5xx, each in the documented shape, and stays healthy`, async () => {
    const doc = await (await fetch(`${env.server.url}/openapi.json`)).json();
    const cases = fuzzCases(doc, SCALE.fuzz, SEED);
    const serverErrors: string[] = [];
    const badShapes: string[] = [];
    const dropped: string[] = [];
    const seen = new Map<string, number>();
    await eachLimit(cases, 16, async (c) => {
      const answer = await rawRequest(env.server.url, c).catch((error: Error) => {
        dropped.push(`${c.kind}: ${c.method} ${c.path.slice(0, 120)} -> ${error.message}`);
        return undefined;
      });
      if (!answer) return;
      const reason = answer.status === 402 ? (/"error":"([a-z_0-9]+)/.exec(answer.text)?.[1] ?? "") : "";
      const code = /"code":"([a-z_]+)"/.exec(answer.text)?.[1] ?? "";
      const key = `${answer.status} ${reason || code}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      const what = `${c.kind}: ${c.method} ${c.path.slice(0, 120)} -> ${answer.status} ${answer.text.slice(0, 200)}`;
      if (answer.status >= 500) serverErrors.push(what);
      if (answer.status >= 400) {
        let body: unknown;
        try {
          body = JSON.parse(answer.text);
        } catch {
          body = undefined;
        }
        const shaped =
          answer.status === 402
            ? paymentRequiredSchema.safeParse(body).success
            : errorBodySchema.safeParse(body).success;
        if (!shaped) badShapes.push(what);
      }
    });
    summary.fuzz = `fuzz ${serverErrors.length}/${cases.length} 5xx`;
    const report = join(tmpdir(), `agent-tools-fuzz-${SEED}.txt`);
    // What the server logged of its failures, one line per distinct message.
    const logged = [
      ...new Set(
        env.server
          .output()
          .split("\n")
          .filter((line) => line.includes('"level":50'))
          .map((line) => /"message":"([^"]*)"/.exec(line)?.[1] ?? line.slice(0, 300)),
      ),
    ];
    const answers = [...seen].sort((a, b) => b[1] - a[1]).map(([key, n]) => `${n} ${key}`);
    writeFileSync(
      report,
      [...serverErrors, ...dropped, ...badShapes, "--- logged", ...logged, "--- answers", ...answers].join("\n"),
    );
    expect(serverErrors.slice(0, 20), `${serverErrors.length} answers 5xx (seed ${SEED}; all in ${report})`).toEqual(
      [],
    );
    expect(dropped.slice(0, 20), `${dropped.length} requests got no answer (seed ${SEED})`).toEqual([]);
    expect(badShapes.slice(0, 20), `${badShapes.length} answers not in the documented shape (seed ${SEED})`).toEqual(
      [],
    );
    expect((await fetch(`${env.server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${env.server.url}/agents/info/1`)).status).toBe(200);
  });
});

/**
 * One load run: autocannon keeping its connections busy, or, at a given rate, requests sent at even intervals
 * whatever the answers do (an open loop: autocannon's `overallRate` starts every connection at once, so its
 * arrivals come in bursts as large as the connection count). Rates and latencies are computed here from every
 * response (autocannon's own figures round latencies to whole milliseconds and count every status): only answers
 * with the expected status count, and latencies are those of the counted answers.
 */
import { Agent, request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";

export const CONNECTIONS = 10;

/** Reads the CPU time (µs) the servers' process has used so far. */
export type ServerCpu = () => Promise<number>;

export interface LoadOptions {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** The status that counts as a success (200, or 402 for a challenge). */
  expect: number;
  /** Run for this long... */
  seconds?: number;
  /** ...or send exactly this many requests. */
  amount?: number;
  /** Extra headers of each request (called once per request sent), e.g. a distinct PAYMENT-SIGNATURE. */
  perRequest?: () => Record<string, string>;
  /** The body of each request (called once per request sent), e.g. an MCP call carrying a distinct payment. */
  perRequestBody?: () => string;
  /** Sees each answer's status, headers and body. */
  onAnswer?: (status: number, headers: Record<string, string | string[]>, body: string) => void;
  /** Reads the servers' process CPU time (µs), to charge the run's CPU time to its answers. */
  serverCpu?: ServerCpu;
  /** Connections kept busy at once (default {@link CONNECTIONS}); at a rate, the most open at once. */
  connections?: number;
  /**
   * Requests per second, sent at even intervals whatever the answers do; each latency counts from the moment its
   * request was due (default: as fast as answers come, on busy connections).
   */
  overallRate?: number;
}

export interface LoadResult {
  /** Answers with the expected status. */
  ok: number;
  /** Expected answers per second of the run. */
  rps: number;
  p50: number;
  p99: number;
  /** Latencies (ms) of the counted answers, sorted. */
  latencies: number[];
  /** Answers by status, and socket errors / timeouts. */
  statuses: Record<string, number>;
  errors: number;
  seconds: number;
  /** CPU time (µs) of the servers' process (all threads) during the run, when measured. */
  cpuMicros?: number;
  /** The same per counted answer, in ms. */
  cpuMsPerAnswer?: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summarize(
  latencies: number[],
  statuses: Record<string, number>,
  errors: number,
  seconds: number,
  cpuMicros: number | undefined,
): LoadResult {
  latencies.sort((a, b) => a - b);
  const ok = latencies.length;
  return {
    ok,
    rps: seconds > 0 ? ok / seconds : 0,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    latencies,
    statuses,
    errors,
    seconds,
    ...(cpuMicros === undefined ? {} : { cpuMicros, cpuMsPerAnswer: ok ? cpuMicros / 1000 / ok : Number.NaN }),
  };
}

/** One result from several runs of the same thing (answers, time and CPU added up). */
export function combine(results: LoadResult[]): LoadResult {
  const statuses: Record<string, number> = {};
  for (const result of results) {
    for (const [status, count] of Object.entries(result.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
  }
  const measured = results.every((r) => r.cpuMicros !== undefined);
  return summarize(
    results.flatMap((r) => r.latencies),
    statuses,
    results.reduce((sum, r) => sum + r.errors, 0),
    results.reduce((sum, r) => sum + r.seconds, 0),
    measured ? results.reduce((sum, r) => sum + r.cpuMicros!, 0) : undefined,
  );
}

/**
 * Measures the sides of a comparison in alternating rounds (a, b, a, b...) and combines each side's rounds, so
 * a machine that gets faster or slower during the bench does not favour the side measured first.
 */
export async function alternate<K extends string, T>(
  rounds: number,
  sides: Record<K, (round: number) => Promise<T>>,
): Promise<Record<K, T[]>> {
  const results = Object.fromEntries(Object.keys(sides).map((key) => [key, [] as T[]])) as Record<K, T[]>;
  for (let round = 0; round < rounds; round++) {
    for (const key of Object.keys(sides) as K[]) results[key].push(await sides[key](round));
  }
  return results;
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  const { serverCpu } = options;
  const before = serverCpu ? await serverCpu() : 0;
  const { latencies, statuses, errors, seconds } = await (options.overallRate
    ? paced(options, options.overallRate)
    : run(options));
  const cpuMicros = serverCpu ? (await serverCpu()) - before : undefined;
  return summarize(latencies, statuses, errors, seconds, cpuMicros);
}

function run(options: LoadOptions): Promise<Run> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let last = 0;
  const { perRequest, perRequestBody, onAnswer } = options;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections ?? CONNECTIONS,
        ...(options.overallRate ? { overallRate: options.overallRate } : {}),
        ...(options.amount ? { amount: options.amount } : { duration: options.seconds ?? 4 }),
        requests: [
          {
            method: options.method ?? "GET",
            headers: options.headers ?? {},
            ...(options.body ? { body: options.body } : {}),
            ...(perRequest || perRequestBody
              ? {
                  setupRequest: (request) => ({
                    ...request,
                    headers: { ...request.headers, ...perRequest?.() },
                    ...(perRequestBody ? { body: perRequestBody() } : {}),
                  }),
                }
              : {}),
            ...(onAnswer ? { onResponse: (status, body, _context, headers) => onAnswer(status, headers, body) } : {}),
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error);
        resolve({ latencies, statuses, errors: result.errors + result.timeouts, seconds: (last - started) / 1000 });
      },
    );
    instance.on("response", (_client, status, _bytes, ms) => {
      last = performance.now();
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status === options.expect) latencies.push(ms);
    });
  });
}

type Run = { latencies: number[]; statuses: Record<string, number>; errors: number; seconds: number };

/** Requests at `rate` per second, each sent when due on a socket of a pool of `connections`. */
async function paced(options: LoadOptions, rate: number): Promise<Run> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  const target = new URL(options.url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections ?? CONNECTIONS });
  const amount = options.amount ?? Math.round(rate * (options.seconds ?? 4));
  const started = performance.now();
  let last = started;
  const send = (due: number) =>
    new Promise<void>((resolve) => {
      const body = options.perRequestBody?.() ?? options.body;
      const sent = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: `${target.pathname}${target.search}`,
          method: options.method ?? "GET",
          headers: {
            ...options.headers,
            ...options.perRequest?.(),
            ...(body === undefined ? {} : { "content-length": Buffer.byteLength(body) }),
          },
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => chunks.push(chunk));
          answer.on("end", () => {
            last = performance.now();
            const status = answer.statusCode ?? 0;
            statuses[status] = (statuses[status] ?? 0) + 1;
            if (status === options.expect) latencies.push(last - due);
            options.onAnswer?.(
              status,
              answer.headers as Record<string, string | string[]>,
              Buffer.concat(chunks).toString(),
            );
            resolve();
          });
        },
      );
      sent.on("error", () => {
        errors++;
        resolve();
      });
      sent.end(body);
    });
  const answers: Promise<void>[] = [];
  for (let i = 0; i < amount; i++) {
    const due = started + (i * 1000) / rate;
    const early = due - performance.now();
    if (early > 0) await sleep(early);
    answers.push(send(due));
  }
  await Promise.all(answers);
  agent.destroy();
  return { latencies, statuses, errors, seconds: (last - started) / 1000 };
}

/**
 * What an operator scrapes (`GET /metrics` on `METRICS_PORT`, Prometheus text format, prom-client): requests by
 * route and status, paid calls and the amounts settled, refusals by reason, upstream calls, retries, cache hits and
 * circuits, missions, and how far the collection snapshot trails the chain (docs/decisions.md, "Metrics").
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { ChannelTotals } from "../store/channels.js";
import type { UpstreamObserver } from "../upstream/upstream-client.js";

export interface ServiceMetrics {
  registry: Registry;
  requestDuration: Histogram<"method" | "route" | "status">;
  /** Paid calls by route, price point and outcome: `settled`, `refused` (402), `released` (the tool failed). */
  paidCalls: Counter<"route" | "price_point" | "outcome">;
  /** Amounts settled, in the asset's smallest unit, by route and price point. */
  settledAmount: Counter<"route" | "price_point">;
  refusals: Counter<"reason">;
  /** Requests that went on to the next facilitator (over HTTP), by the facilitator left and the operation. */
  facilitatorFailovers: Counter<"facilitator" | "operation">;
  /** Settlements per transaction the built-in facilitator sent (1: sent alone). */
  settlementBatchSize: Histogram;
  /** The payment chain's block interval as learned from the receipts (0: not seen mining on a clock). */
  settlementBlockInterval: Gauge;
  /** Batches that left for a block and were mined in a later one. */
  settlementBlocksMissed: Counter;
  missions: Counter<"tool" | "outcome">;
  /** An upstream client's observer: its requests, retries, cache hits and circuit. */
  upstream(name: string): UpstreamObserver;
}

/**
 * Reads taken at scrape time: the mission queue by status, the collection snapshot's lag in blocks, and the payment
 * claims pending, by age.
 */
export interface ScrapeReads {
  missionQueue(): Promise<Record<string, number>>;
  collectionLagBlocks(): Promise<number>;
  /** Pending claims younger and older than {@link PENDING_CLAIM_STALE_MS}. */
  pendingSettlements(): Promise<{ recent: number; older: number }>;
  /** Money on the payment channels, when the service takes them (docs/channels.md). */
  channelTotals?(): Promise<ChannelTotals>;
}

const PREFIX = "agent_tools_";

/**
 * When a pending payment claim counts as unresolved: a call holds its claim for the length of the call, and the
 * reconciler resolves a claim left by a call cut short within a minute or two (a claim whose authorization has not
 * expired yet waits for it, at most the quote's timeout). Ten minutes is past all of these.
 */
export const PENDING_CLAIM_STALE_MS = 10 * 60_000;

export function createServiceMetrics(reads: ScrapeReads): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: PREFIX });
  const registers = [registry];
  const upstreamRequests = new Counter({
    name: `${PREFIX}upstream_requests_total`,
    help: "Upstream requests by upstream and outcome (ok, error, timeout, unavailable; over_budget: not sent, the key's budget was spent).",
    labelNames: ["upstream", "outcome"] as const,
    registers,
  });
  const upstreamRetries = new Counter({
    name: `${PREFIX}upstream_retries_total`,
    help: "Upstream requests sent again after a failure.",
    labelNames: ["upstream"] as const,
    registers,
  });
  const upstreamCacheHits = new Counter({
    name: `${PREFIX}upstream_cache_hits_total`,
    help: "Upstream reads answered from the cache.",
    labelNames: ["upstream"] as const,
    registers,
  });
  const upstreamCircuitOpen = new Gauge({
    name: `${PREFIX}upstream_circuit_open`,
    help: "1 while the upstream's circuit breaker refuses calls.",
    labelNames: ["upstream"] as const,
    registers,
  });
  new Gauge({
    name: `${PREFIX}mission_queue`,
    help: "Missions in the queue by status.",
    labelNames: ["status"] as const,
    registers,
    async collect() {
      const counts = (await reads.missionQueue().catch(() => undefined)) ?? {};
      for (const [status, n] of Object.entries(counts)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: `${PREFIX}pending_settlements`,
    help: "Payment claims pending: age=under_10m (calls running, or cut short and being resolved), age=over_10m (cut short and not resolved: the reconciler is stuck).",
    labelNames: ["age"] as const,
    registers,
    async collect() {
      const pending = await reads.pendingSettlements().catch(() => undefined);
      if (!pending) return;
      this.set({ age: "under_10m" }, pending.recent);
      this.set({ age: "over_10m" }, pending.older);
    },
  });
  if (reads.channelTotals) {
    // Both gauges of one scrape read the store once.
    const read = reads.channelTotals;
    let last: { at: number; totals: Promise<ChannelTotals> } | undefined;
    const channelTotals = () => {
      if (!last || Date.now() - last.at > 1000) last = { at: Date.now(), totals: read() };
      return last.totals;
    };
    new Gauge({
      name: `${PREFIX}channel_amount_usd`,
      help: "Money on the payment channels, in USD: deposited, charged (calls answered), claimed on chain, swept to payTo, refunded to payers, and unclaimed (charged, still to claim before a withdrawal ends).",
      labelNames: ["kind"] as const,
      registers,
      async collect() {
        const totals = await channelTotals().catch(() => undefined);
        if (!totals) return;
        for (const kind of ["deposited", "charged", "claimed", "swept", "refunded", "unclaimed"] as const) {
          this.set({ kind }, Number(totals[kind]) / 1e6);
        }
      },
    });
    new Gauge({
      name: `${PREFIX}channels`,
      help: "Payment channels the service has taken vouchers on.",
      registers,
      async collect() {
        const totals = await channelTotals().catch(() => undefined);
        if (totals) this.set(totals.channels);
      },
    });
  }
  new Gauge({
    name: `${PREFIX}collection_lag_blocks`,
    help: "Blocks between the collection chain's head and the snapshot requests read.",
    registers,
    async collect() {
      const lag = await reads.collectionLagBlocks().catch(() => undefined);
      if (lag !== undefined) this.set(lag);
    },
  });

  return {
    registry,
    requestDuration: new Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: "HTTP requests by method, route (the matched pattern) and status.",
      labelNames: ["method", "route", "status"] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    paidCalls: new Counter({
      name: `${PREFIX}paid_calls_total`,
      help: "Paid calls by route, price point and outcome (settled, refused, released).",
      labelNames: ["route", "price_point", "outcome"] as const,
      registers,
    }),
    settledAmount: new Counter({
      name: `${PREFIX}settled_amount_total`,
      help: "Amounts settled, in the payment asset's smallest unit, by route and price point.",
      labelNames: ["route", "price_point"] as const,
      registers,
    }),
    refusals: new Counter({
      name: `${PREFIX}payment_refusals_total`,
      help: "Paid calls answered 402, by refusal reason (settlement failures included).",
      labelNames: ["reason"] as const,
      registers,
    }),
    facilitatorFailovers: new Counter({
      name: `${PREFIX}facilitator_failovers_total`,
      help: "Facilitator requests that went on to the next facilitator, by the one left and the operation.",
      labelNames: ["facilitator", "operation"] as const,
      registers,
    }),
    settlementBatchSize: new Histogram({
      name: `${PREFIX}settlement_batch_size`,
      help: "Settlements carried by each transaction the built-in facilitator sent (1: sent alone).",
      buckets: [1, 2, 5, 10, 20, 50, 100, 200],
      registers,
    }),
    settlementBlockInterval: new Gauge({
      name: `${PREFIX}settlement_block_interval_seconds`,
      help: "The payment chain's block interval as the built-in facilitator learned it from its receipts, when a batch last formed; 0 while the chain is not seen mining on a clock.",
      registers,
    }),
    settlementBlocksMissed: new Counter({
      name: `${PREFIX}settlement_blocks_missed_total`,
      help: "Batches that left to make a block and were mined in a later one (each makes the next batches leave earlier).",
      registers,
    }),
    missions: new Counter({
      name: `${PREFIX}missions_total`,
      help: "Mission attempts by tool and outcome (done, retry, failed).",
      labelNames: ["tool", "outcome"] as const,
      registers,
    }),
    upstream(name) {
      const upstream = name;
      upstreamCircuitOpen.set({ upstream }, 0);
      return {
        request: (outcome) => upstreamRequests.inc({ upstream, outcome }),
        retry: () => upstreamRetries.inc({ upstream }),
        cacheHit: () => upstreamCacheHits.inc({ upstream }),
        circuit: (open) => upstreamCircuitOpen.set({ upstream }, open ? 1 : 0),
      };
    },
  };
}

/**
 * The Grafana dashboard of deploy/grafana/agent-tools.json, typed by Grafana's own schema package: the JSON is this
 * object written out (`pnpm --filter @agent-tools/server dashboard`), and a test checks that the two agree and that
 * every query names only metrics the service exports (test/metrics.test.ts).
 */
import type { Dashboard, Panel, RowPanel } from "@grafana/schema";

/** The Prometheus data source picked when the dashboard is imported (Grafana's `${datasource}` variable). */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, kept as written
export const DATASOURCE = { type: "prometheus", uid: "${datasource}" };
/** Every query keeps to the instances picked in the dashboard's `instance` variable. */
const on = (extra = "") => `{instance=~"$instance"${extra ? `,${extra}` : ""}}`;

type Target = [expr: string, legend: string];
interface PanelSpec {
  title: string;
  description: string;
  targets: Target[];
  unit: string;
  x: number;
  w: number;
  kind?: "timeseries" | "stat";
  stacked?: boolean;
  decimals?: number;
}

/** Lays the panels out in rows of 8 units high, a row title above each. */
function layout(rows: [title: string, panels: PanelSpec[][]][]): (Panel | RowPanel)[] {
  const panels: (Panel | RowPanel)[] = [];
  let y = 0;
  let id = 1;
  for (const [title, lines] of rows) {
    panels.push({ id: id++, type: "row", title, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] });
    y += 1;
    for (const line of lines) {
      for (const spec of line) panels.push(panelOf(spec, id++, y));
      y += 8;
    }
  }
  return panels;
}

function panelOf(spec: PanelSpec, id: number, y: number): Panel {
  const kind = spec.kind ?? "timeseries";
  return {
    id,
    type: kind,
    title: spec.title,
    description: spec.description,
    datasource: DATASOURCE,
    gridPos: { h: 8, w: spec.w, x: spec.x, y },
    targets: spec.targets.map(([expr, legendFormat], i) => ({
      refId: String.fromCharCode(65 + i),
      expr,
      legendFormat,
      datasource: DATASOURCE,
    })),
    fieldConfig: {
      defaults: {
        unit: spec.unit,
        ...(spec.decimals !== undefined ? { decimals: spec.decimals } : {}),
        ...(kind === "timeseries"
          ? {
              custom: {
                drawStyle: "line",
                lineWidth: 1,
                fillOpacity: spec.stacked ? 30 : 10,
                stacking: { mode: spec.stacked ? "normal" : "none", group: "A" },
              },
            }
          : {}),
      },
      overrides: [],
    },
    options:
      kind === "timeseries"
        ? {
            legend: { displayMode: "list", placement: "bottom", showLegend: true },
            tooltip: { mode: "multi", sort: "desc" },
          }
        : {
            reduceOptions: { calcs: ["lastNotNull"], fields: "", values: false },
            colorMode: "value",
            graphMode: "area",
            textMode: "auto",
          },
  };
}

const perSecond = (expr: string) => `rate(${expr}[$__rate_interval])`;

export const grafanaDashboard: Dashboard = {
  title: "Agent Tools",
  uid: "agent-tools",
  description:
    "Revenue by route and price point, paid calls, refusals, pending claims, requests, upstreams, missions and the " +
    "collection snapshot, from the metrics the service exports on METRICS_PORT.",
  tags: ["agent-tools", "x402"],
  timezone: "utc",
  editable: true,
  graphTooltip: 1,
  schemaVersion: 39,
  version: 1,
  refresh: "30s",
  time: { from: "now-24h", to: "now" },
  templating: {
    list: [
      { name: "datasource", label: "Prometheus", type: "datasource", query: "prometheus", hide: 0 },
      {
        name: "instance",
        label: "Instance",
        type: "query",
        datasource: DATASOURCE,
        query: "label_values(agent_tools_process_start_time_seconds, instance)",
        includeAll: true,
        multi: true,
        allValue: ".*",
        refresh: 2,
        hide: 0,
      },
    ],
  },
  annotations: { list: [] },
  links: [],
  panels: layout([
    [
      "Revenue",
      [
        [
          {
            title: "Revenue in the time range",
            description: "Settled payments in USD over the dashboard's time range, all routes.",
            targets: [[`sum(increase(agent_tools_settled_amount_total${on()}[$__range])) / 1e6`, "USD"]],
            unit: "currencyUSD",
            x: 0,
            w: 6,
            kind: "stat",
            decimals: 2,
          },
          {
            title: "Paid calls settled in the time range",
            description: "Paid calls whose payment was settled.",
            targets: [[`sum(increase(agent_tools_paid_calls_total${on('outcome="settled"')}[$__range]))`, "calls"]],
            unit: "short",
            x: 6,
            w: 6,
            kind: "stat",
            decimals: 0,
          },
          {
            title: "Revenue by price point",
            description: "USD settled in the time range at the standard price and at the holder price.",
            targets: [
              [
                `sum by (price_point) (increase(agent_tools_settled_amount_total${on()}[$__range])) / 1e6`,
                "{{price_point}}",
              ],
            ],
            unit: "currencyUSD",
            x: 12,
            w: 12,
            kind: "stat",
            decimals: 2,
          },
        ],
        [
          {
            title: "Revenue per route (USD per hour)",
            description: "USD settled per hour, by paid route.",
            targets: [[`sum by (route) (increase(agent_tools_settled_amount_total${on()}[1h])) / 1e6`, "{{route}}"]],
            unit: "currencyUSD",
            x: 0,
            w: 12,
            stacked: true,
          },
          {
            title: "Paid calls by outcome",
            description:
              "Paid calls per second: settled, refused (402) or released (the tool failed; nothing charged).",
            targets: [[`sum by (outcome) (${perSecond(`agent_tools_paid_calls_total${on()}`)})`, "{{outcome}}"]],
            unit: "reqps",
            x: 12,
            w: 12,
            stacked: true,
          },
        ],
      ],
    ],
    [
      "Payments refused and settlement",
      [
        [
          {
            title: "Refusals by reason",
            description:
              "402 answers per second by refusal reason; settlement_failed means a payment could not be settled.",
            targets: [[`sum by (reason) (${perSecond(`agent_tools_payment_refusals_total${on()}`)})`, "{{reason}}"]],
            unit: "reqps",
            x: 0,
            w: 12,
            stacked: true,
          },
          {
            title: "Pending payment claims",
            description:
              "Claims pending: under_10m are calls running (or cut short and being resolved); over_10m are not " +
              "being resolved.",
            targets: [[`sum by (age) (agent_tools_pending_settlements${on()})`, "{{age}}"]],
            unit: "short",
            x: 12,
            w: 6,
          },
          {
            title: "Facilitator failovers",
            description: "Requests that went on to the next facilitator, by the one left.",
            targets: [
              [
                `sum by (facilitator, operation) (${perSecond(`agent_tools_facilitator_failovers_total${on()}`)})`,
                "{{facilitator}} {{operation}}",
              ],
            ],
            unit: "reqps",
            x: 18,
            w: 6,
          },
        ],
        [
          {
            title: "Settlements per transaction",
            description:
              "Settlements the built-in facilitator sent per transaction, on average: near 1 on a busy service, " +
              "batches do not form (docs/decisions.md, Settlements in batches).",
            targets: [
              [
                `sum(${perSecond(`agent_tools_settlement_batch_size_sum${on()}`)}) / sum(${perSecond(`agent_tools_settlement_batch_size_count${on()}`)})`,
                "settlements per transaction",
              ],
            ],
            unit: "short",
            x: 0,
            w: 12,
          },
          {
            title: "Payment chain's block clock",
            description:
              "The block interval the built-in facilitator learned from its receipts (0: not seen mining on a " +
              "clock, batches then wait only for calls on their way), and batches per second that missed the " +
              "block they left for (docs/decisions.md, Settlements in batches).",
            targets: [
              [`max by (instance) (agent_tools_settlement_block_interval_seconds${on()})`, "interval (s) {{instance}}"],
              [`sum(${perSecond(`agent_tools_settlement_blocks_missed_total${on()}`)})`, "missed blocks per second"],
            ],
            unit: "short",
            x: 12,
            w: 12,
          },
        ],
      ],
    ],
    [
      "Requests",
      [
        [
          {
            title: "Requests by route and status",
            description: "HTTP requests per second by matched route and status.",
            targets: [
              [
                `sum by (route, status) (${perSecond(`agent_tools_http_request_duration_seconds_count${on()}`)})`,
                "{{route}} {{status}}",
              ],
            ],
            unit: "reqps",
            x: 0,
            w: 12,
          },
          {
            title: "Latency by route (p50, p95)",
            description: "Time to answer, by matched route.",
            targets: [0.5, 0.95].map(
              (q): Target => [
                `histogram_quantile(${q}, sum by (le, route) (${perSecond(`agent_tools_http_request_duration_seconds_bucket${on()}`)}))`,
                `p${q * 100} {{route}}`,
              ],
            ),
            unit: "s",
            x: 12,
            w: 12,
          },
        ],
      ],
    ],
    [
      "Upstreams",
      [
        [
          {
            title: "Upstream requests by outcome",
            description:
              "Requests to the marketplace and market-data APIs: ok, error, timeout, unavailable, over_budget (not " +
              "sent: the key's budget was spent).",
            targets: [
              [
                `sum by (upstream, outcome) (${perSecond(`agent_tools_upstream_requests_total${on()}`)})`,
                "{{upstream}} {{outcome}}",
              ],
            ],
            unit: "reqps",
            x: 0,
            w: 12,
          },
          {
            title: "Circuits open",
            description: "1 while an upstream's circuit breaker refuses calls.",
            targets: [[`max by (upstream) (agent_tools_upstream_circuit_open${on()})`, "{{upstream}}"]],
            unit: "short",
            x: 12,
            w: 6,
          },
          {
            title: "Retries and cache hits",
            description: "Upstream requests sent again, and reads answered from the cache.",
            targets: [
              [`sum by (upstream) (${perSecond(`agent_tools_upstream_retries_total${on()}`)})`, "retries {{upstream}}"],
              [
                `sum by (upstream) (${perSecond(`agent_tools_upstream_cache_hits_total${on()}`)})`,
                "cache hits {{upstream}}",
              ],
            ],
            unit: "reqps",
            x: 18,
            w: 6,
          },
        ],
      ],
    ],
    [
      "Missions and the collection",
      [
        [
          {
            title: "Mission queue",
            description: "Missions by status.",
            targets: [[`sum by (status) (agent_tools_mission_queue${on()})`, "{{status}}"]],
            unit: "short",
            x: 0,
            w: 8,
          },
          {
            title: "Mission attempts",
            description: "Attempts per second by outcome (done, retry, failed).",
            targets: [[`sum by (outcome) (${perSecond(`agent_tools_missions_total${on()}`)})`, "{{outcome}}"]],
            unit: "reqps",
            x: 8,
            w: 8,
          },
          {
            title: "Collection lag",
            description: "Blocks between the collection chain's head and the snapshot requests read.",
            targets: [[`max by (instance) (agent_tools_collection_lag_blocks${on()})`, "{{instance}}"]],
            unit: "short",
            x: 16,
            w: 8,
          },
        ],
      ],
    ],
    [
      "Process",
      [
        [
          {
            title: "Memory",
            description: "Resident memory and heap used, per instance.",
            targets: [
              [`agent_tools_process_resident_memory_bytes${on()}`, "rss {{instance}}"],
              [`agent_tools_nodejs_heap_size_used_bytes${on()}`, "heap {{instance}}"],
            ],
            unit: "bytes",
            x: 0,
            w: 8,
          },
          {
            title: "CPU",
            description: "CPU seconds per second, per instance.",
            targets: [[perSecond(`agent_tools_process_cpu_seconds_total${on()}`), "{{instance}}"]],
            unit: "percentunit",
            x: 8,
            w: 8,
          },
          {
            title: "Event loop lag (p99)",
            description: "How late the event loop runs, per instance.",
            targets: [[`agent_tools_nodejs_eventloop_lag_p99_seconds${on()}`, "{{instance}}"]],
            unit: "s",
            x: 16,
            w: 8,
          },
        ],
      ],
    ],
  ]),
};

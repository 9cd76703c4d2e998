import type { RequestListener } from "node:http";
import { A2A_AGENT_CARD_PATH, A2A_PATH, API_VERSION, buildOpenApiDocument, MCP_PATH } from "@agent-tools/schema";
import express, { type Express } from "express";
import type { Logger } from "pino";
import { createAgentRecords } from "../agents/agent-records.js";
import type { AgentRegistryReader } from "../chain/agent-registry.js";
import type { CollectionIndex } from "../chain/collection-index.js";
import { type Config, DEFAULT_LIMITS } from "../config/config.js";
import { createCallLimiter, type RateCounter } from "../limits/call-limiter.js";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import { createPaidCalls } from "../paid-call/paid-call.js";
import type { PaymentService } from "../paid-call/payment-service.js";
import type { RefusalCounts } from "../paid-call/refusal-counts.js";
import type { RecordRefund } from "../schemes/exact/record-refund.js";
import type { A2aTaskStore } from "../store/a2a-tasks.js";
import type { ToolSet } from "../tools/types.js";
import { a2aEndpoint } from "../transports/a2a/a2a-endpoint.js";
import { errorHandler, notFound } from "../transports/http/middleware/errors.js";
import { ipLimits } from "../transports/http/middleware/ip-limits.js";
import { jsonBody } from "../transports/http/middleware/json-body.js";
import { requestLog } from "../transports/http/middleware/request-log.js";
import { isLoopbackHost, sameSiteOnly } from "../transports/http/middleware/same-site.js";
import { agentRoutes } from "../transports/http/routes/agents.js";
import { discoveryRoutes } from "../transports/http/routes/discovery.js";
import { answerHealth, healthRoutes } from "../transports/http/routes/health.js";
import { openApiRoutes } from "../transports/http/routes/openapi.js";
import { operatorRoutes } from "../transports/http/routes/operator.js";
import type { OperatorConsoleDeps } from "../transports/http/routes/operator-console.js";
import { referenceRoutes } from "../transports/http/routes/reference.js";
import { toolRoutesRouter } from "../transports/http/routes/tools.js";
import { mcpEndpoint, mcpMethodNotAllowed } from "../transports/mcp/mcp-endpoint.js";

/** Everything the app needs from outside; tests pass their own. */
export interface AppDeps {
  config: Pick<Config, "publicUrl" | "payment" | "anonymousAccess"> &
    Partial<Pick<Config, "l1" | "operatorAddress" | "limits" | "trustProxy" | "host">>;
  logger: Logger;
  /** The collection chain (L1) readers; without them the agent routes are not mounted. */
  chain?: { collection: CollectionIndex; registry: AgentRegistryReader };
  /** Payment settings and facilitator; with `chain`, they enable the paid tool routes. */
  payments?: PaymentService;
  tools?: ToolSet;
  /** Request, payment and refusal counts for `/metrics` (METRICS_PORT). */
  metrics?: ServiceMetrics;
  /** Counts the paid calls refused, by reason, metrics or not (the operator console reads them). */
  refusalCounts?: RefusalCounts;
  /** Where the per-address rate is counted (default: in this process; on Postgres, for every instance). */
  rates?: RateCounter;
  /** The A2A endpoint's tasks; with `payments`, they enable the agent card and `/a2a`. */
  a2aTasks?: A2aTaskStore;
  /** What the operator console reads beside the ledger; with `payments`, they enable `/operator`. */
  console?: OperatorConsoleDeps;
  /** Books the refunds an operator made (on the payment chain); with `payments`, it enables `POST /operator/refunds`. */
  recordRefund?: RecordRefund;
}

/** Builds the Express app from its collaborators; no module-level state. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  // Who the client is, for per-address limits: the socket's peer, or what trusted proxies say (TRUST_PROXY).
  app.set("trust proxy", deps.config.trustProxy ?? false);

  // Method, path and status only: payment and sign-in headers are credentials and never logged.
  app.use(requestLog(deps.logger, deps.metrics));
  app.use(jsonBody());

  // The routes asked most come first: health, the agents' public records, the paid tools.
  app.use(healthRoutes());
  if (deps.chain) {
    app.use(agentRoutes({ ...deps.chain, publicUrl: deps.config.publicUrl }));
    if (deps.payments) {
      const paidCalls = createPaidCalls({
        payments: deps.payments,
        collection: deps.chain.collection,
        ...(deps.metrics ? { metrics: deps.metrics } : {}),
        ...(deps.refusalCounts ? { refusalCounts: deps.refusalCounts } : {}),
      });
      const perIp = createCallLimiter(deps.config.limits?.perIp ?? DEFAULT_LIMITS.perIp, {
        name: "ip",
        ...(deps.rates ? { rates: deps.rates } : {}),
      });
      app.use(
        toolRoutesRouter({
          tools: deps.tools ?? {},
          paidCalls,
          collection: deps.chain.collection,
          now: deps.payments.now,
          perIp,
        }),
      );
      // The same tools and paid calls over MCP, under the same per-address limits (docs/architecture.md, "MCP"),
      // for requests naming this service only (DNS rebinding).
      const sameSite = sameSiteOnly({
        publicUrl: deps.config.publicUrl,
        listensOnLoopback: isLoopbackHost(deps.config.host ?? "127.0.0.1"),
      });
      app.post(
        MCP_PATH,
        sameSite,
        ipLimits(perIp),
        mcpEndpoint({
          paidCalls,
          tools: deps.tools ?? {},
          collection: deps.chain.collection,
          records: createAgentRecords({ ...deps.chain, publicUrl: deps.config.publicUrl }),
          now: deps.payments.now,
          logger: deps.logger.child({ component: "mcp" }),
          serverInfo: { name: "agent-tools", version: API_VERSION },
          publicUrl: deps.config.publicUrl,
        }),
      );
      app.get(MCP_PATH, sameSite, mcpMethodNotAllowed);
      app.delete(MCP_PATH, sameSite, mcpMethodNotAllowed);
      if (deps.a2aTasks) {
        // The same paid calls as skills of an A2A agent, under the same limits (docs/architecture.md, "A2A").
        const a2a = a2aEndpoint({
          paidCalls,
          tools: deps.tools ?? {},
          collection: deps.chain.collection,
          now: deps.payments.now,
          logger: deps.logger.child({ component: "a2a" }),
          publicUrl: deps.config.publicUrl,
          payment: deps.config.payment,
          tasks: deps.a2aTasks,
        });
        app.use(A2A_AGENT_CARD_PATH, a2a.agentCard);
        app.use(A2A_PATH, sameSite, ipLimits(perIp), a2a.jsonRpc);
      }
      app.use(
        operatorRoutes({
          payments: deps.payments,
          operator: deps.config.operatorAddress ?? deps.config.payment.payTo,
          logger: deps.logger.child({ component: "operator" }),
          publicUrl: deps.config.publicUrl,
          ...(deps.console ? { console: deps.console } : {}),
          ...(deps.recordRefund ? { recordRefund: deps.recordRefund } : {}),
        }),
      );
    }
  }
  const openapi = buildOpenApiDocument({ serverUrl: deps.config.publicUrl, payment: deps.config.payment });
  app.use(openApiRoutes(openapi));
  app.use(
    discoveryRoutes({
      publicUrl: deps.config.publicUrl,
      payment: deps.config.payment,
      ...(deps.config.l1 ? { collection: deps.config.l1.collection } : {}),
      ...(deps.payments?.receipts ? { receiptSigner: deps.payments.receipts.signer } : {}),
    }),
  );
  app.use(referenceRoutes());

  app.use(notFound());
  app.use(errorHandler(deps.logger));
  return app;
}

/**
 * The app behind a fast path for `GET /healthz`: health probes (load balancers ask every few seconds) are answered
 * before the app, unlogged. The app answers the same on its own route (docs/architecture.md, "Request path").
 */
export function withHealthCheck(app: Express): RequestListener {
  return (req, res) => {
    if (req.method === "GET" && req.url === "/healthz") return answerHealth(res);
    app(req, res);
  };
}

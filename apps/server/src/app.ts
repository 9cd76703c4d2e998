import { buildOpenApiDocument } from "@agent-tools/schema";
import express, { type Express } from "express";
import type { Logger } from "pino";
import { pinoHttp } from "pino-http";
import type { AgentRegistryReader } from "./chain/agent-registry.js";
import type { CollectionIndex } from "./chain/collection-index.js";
import type { Config } from "./config.js";
import { errorHandler, notFound } from "./middleware/errors.js";
import { jsonBody } from "./middleware/json-body.js";
import { requestId } from "./middleware/request-id.js";
import { createPaidCalls } from "./payment/paid-call.js";
import type { PaymentService } from "./payment/payment-service.js";
import { agentRoutes } from "./routes/agents.js";
import { discoveryRoutes } from "./routes/discovery.js";
import { healthRoutes } from "./routes/health.js";
import { openApiRoutes } from "./routes/openapi.js";
import { operatorRoutes } from "./routes/operator.js";
import { referenceRoutes } from "./routes/reference.js";
import { toolRoutesRouter } from "./routes/tools.js";
import type { ToolSet } from "./tools/types.js";

/** Everything the app needs from outside; tests pass their own. */
export interface AppDeps {
  config: Pick<Config, "publicUrl" | "payment" | "anonymousAccess"> & Partial<Pick<Config, "l1" | "operatorAddress">>;
  logger: Logger;
  /** The collection chain (L1) readers; without them the agent routes are not mounted. */
  chain?: { collection: CollectionIndex; registry: AgentRegistryReader };
  /** Payment settings and facilitator; with `chain`, they enable the paid tool routes. */
  payments?: PaymentService;
  tools?: ToolSet;
}

/** Builds the Express app from its collaborators; no module-level state. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");

  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: requestId,
      quietReqLogger: true,
      // Method, path and status only: payment and sign-in headers are credentials and never logged.
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );
  app.use(jsonBody());

  const openapi = buildOpenApiDocument({ serverUrl: deps.config.publicUrl, payment: deps.config.payment });
  app.use(healthRoutes());
  app.use(openApiRoutes(openapi));
  app.use(referenceRoutes());
  app.use(
    discoveryRoutes({
      publicUrl: deps.config.publicUrl,
      payment: deps.config.payment,
      ...(deps.config.l1 ? { collection: deps.config.l1.collection } : {}),
    }),
  );
  if (deps.chain) {
    app.use(agentRoutes({ ...deps.chain, publicUrl: deps.config.publicUrl }));
    if (deps.payments) {
      app.use(
        operatorRoutes({ payments: deps.payments, operator: deps.config.operatorAddress ?? deps.config.payment.payTo }),
      );
      const paidCalls = createPaidCalls({ payments: deps.payments, collection: deps.chain.collection });
      app.use(
        toolRoutesRouter({
          tools: deps.tools ?? {},
          paidCalls,
          collection: deps.chain.collection,
          now: deps.payments.now,
        }),
      );
    }
  }

  app.use(notFound());
  app.use(errorHandler());
  return app;
}

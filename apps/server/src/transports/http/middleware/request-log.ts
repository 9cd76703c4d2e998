import type { RequestHandler } from "express";
import type { Logger } from "pino";
import type { ServiceMetrics } from "../../../metrics/service-metrics.js";
import { requestId } from "./request-id.js";

declare module "node:http" {
  interface IncomingMessage {
    /** The request id (also `X-Request-Id` on the answer); what the request's log lines carry as `reqId`. */
    id?: string;
  }
}

/** One JSON line per answered request (id, method, path and status, time taken), as pino-http writes it. */
export function requestLog(logger: Logger, metrics?: Pick<ServiceMetrics, "requestDuration">): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const id = requestId(req, res);
    req.id = id;
    res.once("finish", () => {
      // The matched route's pattern (`/agents/info/:tokenId`), never the raw path: one series per route.
      metrics?.requestDuration.observe(
        {
          method: req.method,
          route: req.route ? `${req.baseUrl}${req.route.path}` : "unmatched",
          status: res.statusCode,
        },
        (performance.now() - started) / 1000,
      );
      logger.info(
        {
          req: { id, method: req.method, url: req.originalUrl },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(performance.now() - started),
        },
        "request completed",
      );
    });
    next();
  };
}

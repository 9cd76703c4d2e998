import type { RequestHandler } from "express";
import type { Logger } from "pino";
import { requestId } from "./request-id.js";

declare module "node:http" {
  interface IncomingMessage {
    /** The request id (also `X-Request-Id` on the answer); what the request's log lines carry as `reqId`. */
    id?: string;
  }
}

/** One JSON line per answered request (id, method, path and status, time taken), as pino-http writes it. */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const id = requestId(req, res);
    req.id = id;
    res.once("finish", () => {
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

import type { ErrorRequestHandler, RequestHandler, Response } from "express";
import type { Logger } from "pino";
import { ContractFunctionExecutionError, BaseError as ViemError } from "viem";
import { errorBody, ServiceError } from "../../../errors/service-error.js";
import { MAX_BODY_BYTES } from "./json-body.js";

/** Answers an error with its status, headers and JSON error body. */
export function sendError(res: Response, error: ServiceError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json(errorBody(error));
}

/** JSON 404 for every path no route answers. */
export function notFound(): RequestHandler {
  return (req, res) => {
    sendError(
      res,
      new ServiceError("not_found", `No route answers ${req.method} ${req.path}. See /openapi.json for the routes.`),
    );
  };
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  statusCode?: number;
  expose?: boolean;
}

/**
 * Turns every error into a JSON error body: the body parser's failures into 400/413/415, an ServiceError into its
 * own status, anything else into 500 with no stack trace (the stack goes to the log).
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) return;
    if (err instanceof ServiceError) return sendError(res, err);
    const parserError = err as BodyParserError;
    switch (parserError?.type) {
      case "entity.parse.failed":
        return sendError(
          res,
          new ServiceError("malformed_json", "The request body is not valid JSON.", [
            { field: "", message: "not valid JSON" },
          ]),
        );
      case "entity.too.large":
        return sendError(
          res,
          new ServiceError("payload_too_large", `The request body is larger than ${MAX_BODY_BYTES / 1024} KiB.`),
        );
      case "encoding.unsupported":
      case "charset.unsupported":
        return sendError(res, new ServiceError("unsupported_media_type", "The request body must be UTF-8 JSON."));
      case "request.aborted":
        return;
    }
    // The router could not decode a path parameter ("%zz"): the path is the client's mistake.
    if (err instanceof URIError || (parserError?.status === 400 && /decode param/.test(parserError.message))) {
      return sendError(
        res,
        new ServiceError("invalid_request", "The request path is not valid percent-encoding.", [
          { field: "path", message: "not valid percent-encoding" },
        ]),
      );
    }
    // The body could not be read as sent (a Content-Encoding that does not match the bytes, a stream cut short):
    // the body parser marks these client errors (4xx, safe to say).
    const status = parserError?.status ?? parserError?.statusCode;
    if (parserError?.expose === true && status !== undefined && status >= 400 && status < 500) {
      return sendError(
        res,
        status === 415
          ? new ServiceError(
              "unsupported_media_type",
              "The request body's encoding is not supported; send it as UTF-8 JSON.",
            )
          : new ServiceError(
              "invalid_request",
              "The request body could not be read as sent (check Content-Encoding).",
              [{ field: "", message: "unreadable body" }],
            ),
      );
    }
    if (err instanceof ViemError && !(err instanceof ContractFunctionExecutionError)) {
      // The chain's RPC endpoint failed or timed out: the service cannot answer from chain right now.
      logger.warn({ reqId: req.id, err: err.shortMessage }, "chain read failed");
      return sendError(
        res,
        new ServiceError("upstream_unavailable", "The chain could not be read right now; try again shortly.", [], {
          "Retry-After": "5",
        }),
      );
    }
    logger.error({ reqId: req.id, err }, "unhandled error");
    sendError(res, new ServiceError("internal_error", "The server failed to answer this request; it has been logged."));
  };
}

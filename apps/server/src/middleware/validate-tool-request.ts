import { queryToInput, type ToolRoute } from "@agent-tools/schema";
import type { RequestHandler } from "express";
import { HttpError, validationError } from "../http/errors.js";
import { callState, startCall } from "./call-state.js";

/**
 * Step 1, validate: the JSON body (POST) or the query parameters (GET) against the route's schema. An invalid
 * request gets 400 naming the fields, before any challenge or charge.
 */
export function validateToolRequest(route: ToolRoute): RequestHandler {
  return (req, res, next) => {
    startCall(res, route);
    let input: unknown;
    if (req.method === "GET") {
      input = queryToInput(route.request, req.query as Record<string, string | string[]>);
    } else {
      if (!req.is("application/json")) {
        throw new HttpError(
          "invalid_request",
          "Send the request as a JSON object with Content-Type: application/json.",
          [{ field: "", message: "expected a JSON body" }],
        );
      }
      input = req.body;
    }
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      throw new HttpError("invalid_request", "The request body must be a JSON object.", [
        { field: "", message: "expected an object" },
      ]);
    }
    const parsed = route.request.safeParse(input);
    if (!parsed.success) throw validationError(parsed.error);
    callState(res).params = parsed.data as { tokenId: number };
    next();
  };
}

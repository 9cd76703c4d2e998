import type { RequestHandler } from "express";
import { ServiceError, uncharged } from "../../../errors/service-error.js";
import type { CallLimiter } from "../../../limits/call-limiter.js";

/**
 * Per client address limits on a paid route, before the request is read further: 429 `rate_limited` with
 * `Retry-After` past them. The address is Express's `req.ip`: the socket's peer, or the client a trusted proxy names
 * (`TRUST_PROXY`).
 */
export function ipLimits(limiter: CallLimiter): RequestHandler {
  return async (req, res, next) => {
    const address = req.ip ?? req.socket.remoteAddress ?? "unknown";
    const slot = await limiter.take(address);
    if (!slot.ok) {
      const what = slot.why === "rate" ? "too many requests per second" : "too many requests at once";
      throw new ServiceError(
        "rate_limited",
        uncharged(`This address sent ${what} to the paid routes; retry in ${slot.retryAfterSeconds} s.`),
        [],
        { "Retry-After": String(slot.retryAfterSeconds) },
      );
    }
    // Released once the answer is sent or the client goes away, whichever comes first.
    res.once("close", () => slot.release());
    next();
  };
}

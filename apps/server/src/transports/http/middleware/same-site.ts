/**
 * DNS rebinding protection: a page of another site that a browser was tricked into sending to this server (its
 * name made to resolve to our address) carries that site's name in `Host` and its origin in `Origin`. A request
 * whose `Host` (or `X-Forwarded-Host` from a trusted proxy) or `Origin` names another host than the service's public
 * origin is refused with 403 `forbidden_origin`; when the server listens on loopback, the loopback names are its
 * own too. Ports are not compared: one host may be reached through several (docs/threat-model.md, "Browsers").
 */
import type { RequestHandler } from "express";
import { clipped, ServiceError } from "../../../errors/service-error.js";
import { sendError } from "./errors.js";

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]", "::1"];

/** Whether `host` (an address the server binds) is a loopback address. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_NAMES.includes(host.toLowerCase()) || /^127\./.test(host);
}

export function sameSiteOnly(options: { publicUrl: string; listensOnLoopback: boolean }): RequestHandler {
  const allowed = new Set([new URL(options.publicUrl).hostname.toLowerCase()]);
  if (options.listensOnLoopback) for (const name of LOOPBACK_NAMES) allowed.add(name);
  const refuse = (what: string, value: string) =>
    new ServiceError("forbidden_origin", `This endpoint answers requests for ${options.publicUrl} only.`, [
      { field: what, message: `${clipped(value, 100)} is not this service's host` },
    ]);
  return (req, res, next) => {
    const host = (req.hostname ?? "").toLowerCase();
    if (!allowed.has(host)) return sendError(res, refuse("Host", req.get("host") ?? ""));
    const origin = req.get("origin");
    if (origin !== undefined) {
      const hostname = URL.canParse(origin) ? new URL(origin).hostname.toLowerCase() : "";
      if (!allowed.has(hostname)) return sendError(res, refuse("Origin", origin));
    }
    next();
  };
}

/** Query parsing and paging helpers shared by the simulators' routes. */
import type { RouteResult } from "./sim-server.js";

export class BadRequest extends Error {}

/** An integer query parameter within [min, max], or `fallback` when absent. */
export function intParam(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = query.get(name);
  if (raw === null || raw === "") return fallback;
  if (!/^-?\d+$/.test(raw)) throw new BadRequest(`${name}: must be an integer`);
  const value = Number(raw);
  if (value < min || value > max) throw new BadRequest(`${name}: must be between ${min} and ${max}`);
  return value;
}

/** A list parameter given repeated (`?chains=a&chains=b`), comma-separated (`?chains=a,b`) or both. */
export function listParam(query: URLSearchParams, name: string): string[] {
  return query
    .getAll(name)
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** An opaque paging cursor bound to the query it pages (a cursor from another query is refused). */
export function encodeCursor(offset: number, scope: string): string {
  return Buffer.from(JSON.stringify({ o: offset, s: scope }), "utf8").toString("base64url");
}

export function decodeCursor(cursor: string | null, scope: string, name: string): number {
  if (cursor === null || cursor === "") return 0;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { o?: unknown; s?: unknown };
    if (typeof parsed.o === "number" && Number.isInteger(parsed.o) && parsed.o >= 0 && parsed.s === scope) {
      return parsed.o;
    }
  } catch {
    // fall through
  }
  throw new BadRequest(`${name}: invalid cursor`);
}

/** One page of `items` and the cursor of the next, if any. */
export function page<T>(
  items: readonly T[],
  offset: number,
  limit: number,
  scope: string,
): { items: T[]; next?: string } {
  const slice = items.slice(offset, offset + limit);
  return offset + limit < items.length ? { items: slice, next: encodeCursor(offset + limit, scope) } : { items: slice };
}

export function json(status: number, body: unknown, headers?: Record<string, string>): RouteResult {
  return headers ? { status, body, headers } : { status, body };
}

export function isEvmAddress(value: string): boolean {
  return /^0x[0-9a-fA-F]{40}$/.test(value);
}

/** A Cloudflare-style HTML error page, as a CDN in front of an API answers 502/503/504. */
export function cdnErrorPage(status: number, host: string): string {
  const title = status === 502 ? "Bad gateway" : status === 503 ? "Service unavailable" : "Gateway time-out";
  return `<!DOCTYPE html>
<html lang="en-US"><head><title>${host} | ${status}: ${title}</title></head>
<body><div id="cf-error-details"><h1><span>${title}</span> <span>Error code ${status}</span></h1>
<p>The web server reported a ${title.toLowerCase()} error.</p></div></body></html>
`;
}

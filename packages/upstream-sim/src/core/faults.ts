/**
 * Run-time fault injection for a simulator: per route, changeable while the server runs.
 */

/** Statuses a fault can answer with. */
export type FaultStatus = 429 | 500 | 502 | 503 | 504;

/** How a malformed answer is malformed: `true` means `"invalid-json"`. */
export type MalformedKind = "invalid-json" | "wrong-shape";

export interface Fault {
  /** Extra delay before answering (added to the simulator's global latency). */
  latencyMs?: number;
  /** Answer with this status instead of the route's answer (the upstream's own error body for it). */
  status?: FaultStatus;
  /** `Retry-After` header (seconds) sent with `status`. Without it a 429 carries no `Retry-After`. */
  retryAfterSeconds?: number;
  /** Never answer: the connection stays open until the client gives up or the simulator closes. */
  timeout?: boolean;
  /**
   * Answer 200 with a broken body: `"invalid-json"` (or `true`) sends truncated JSON; `"wrong-shape"` sends valid
   * JSON of the wrong shape (arrays where objects belong and the reverse).
   */
  malformed?: true | MalformedKind;
  /** Apply to this many matching requests, then remove itself. Default: until cleared. */
  times?: number;
}

/**
 * Which requests a fault (or a request-log filter) applies to:
 * - `"*"` or `"**"`: every request;
 * - a string: a path glob matched against the request path (no query), where `*` matches within one segment,
 *   `**` across segments, and `{name}` one segment, so a route template such as `"/api/v2/drops/{slug}"` works
 *   as written (it matches `/api/v2/drops/x` but not `/api/v2/drops` or `/api/v2/drops/x/eligibility`);
 * - a RegExp: tested against the request path.
 */
export type RoutePattern = string | RegExp;

export interface ActiveFault {
  pattern: RoutePattern;
  fault: Fault;
  /** Requests it still applies to (`Infinity` when `times` was not given). */
  remaining: number;
}

/** Compiles a {@link RoutePattern} to a predicate on request paths. */
export function compilePattern(pattern: RoutePattern): (path: string) => boolean {
  if (pattern instanceof RegExp) {
    const re = new RegExp(pattern.source, pattern.flags.replace("g", ""));
    return (path) => re.test(path);
  }
  if (pattern === "*" || pattern === "**") return () => true;
  let source = "";
  for (let i = 0; i < pattern.length; ) {
    if (pattern.startsWith("**", i)) {
      source += ".*";
      i += 2;
    } else if (pattern[i] === "*") {
      source += "[^/]*";
      i += 1;
    } else if (pattern[i] === "{") {
      const end = pattern.indexOf("}", i);
      if (end < 0) throw new Error(`unclosed "{" in route pattern ${JSON.stringify(pattern)}`);
      source += "[^/]+";
      i = end + 1;
    } else {
      source += pattern[i]!.replace(/[.+?^$()|[\]\\]/g, "\\$&");
      i += 1;
    }
  }
  const re = new RegExp(`^${source}/?$`);
  return (path) => re.test(path);
}

function validateFault(fault: Fault): void {
  if (fault.status !== undefined && ![429, 500, 502, 503, 504].includes(fault.status)) {
    throw new Error(`fault status must be 429, 500, 502, 503 or 504 (got ${fault.status})`);
  }
  for (const key of ["latencyMs", "retryAfterSeconds", "times"] as const) {
    const value = fault[key];
    if (value !== undefined && (!Number.isFinite(value) || value < 0)) {
      throw new Error(`fault ${key} must be a non-negative number (got ${value})`);
    }
  }
  const kinds = [fault.status !== undefined, fault.timeout === true, fault.malformed !== undefined].filter(Boolean);
  if (kinds.length > 1) throw new Error("a fault is one of status, timeout or malformed (latencyMs combines with any)");
}

/** The per-route faults of one simulator. */
export class FaultController {
  private entries: { pattern: RoutePattern; match: (path: string) => boolean; fault: Fault; remaining: number }[] = [];

  /**
   * Sets the fault for `pattern`, replacing an earlier fault set with the same pattern. When several faults match
   * a request, the one set last applies.
   */
  set(pattern: RoutePattern, fault: Fault): void {
    validateFault(fault);
    this.clear(pattern);
    this.entries.push({
      pattern,
      match: compilePattern(pattern),
      fault: { ...fault },
      remaining: fault.times ?? Number.POSITIVE_INFINITY,
    });
  }

  /** Removes the fault set for `pattern`, or every fault when called without one. */
  clear(pattern?: RoutePattern): void {
    if (pattern === undefined) {
      this.entries = [];
      return;
    }
    const key = String(pattern);
    this.entries = this.entries.filter((e) => String(e.pattern) !== key);
  }

  list(): ActiveFault[] {
    return this.entries.map((e) => ({ pattern: e.pattern, fault: { ...e.fault }, remaining: e.remaining }));
  }

  /** The fault for a request to `path`, counting it against `times`. */
  take(path: string): Fault | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i]!;
      if (!entry.match(path)) continue;
      entry.remaining -= 1;
      if (entry.remaining <= 0) this.entries.splice(i, 1);
      return entry.fault;
    }
    return undefined;
  }
}

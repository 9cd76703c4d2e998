/**
 * Express to web standard and back: the MCP SDK's HTTP handlers take a `Request` and answer a `Response`
 * (mcp-endpoint.ts). The body was parsed already by express.json() and is handed to the SDK beside the request.
 */
import { Readable } from "node:stream";
import type { Request as ExpressRequest, Response as ExpressResponse } from "express";

export interface WebRequestOfReturnType {
  request: Request;
  /** Aborted when the client goes away before its answer is written: ends a stream the SDK keeps open. */
  closed: AbortSignal;
}

/** The web `Request` for an Express request, at `publicUrl`'s origin, with `extraHeaders` set over the client's. */
export function webRequestOf(
  req: ExpressRequest,
  res: ExpressResponse,
  publicUrl: string,
  extraHeaders: Record<string, string>,
): WebRequestOfReturnType {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  for (const [name, value] of Object.entries(extraHeaders)) headers.set(name, value);
  const aborter = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) aborter.abort();
  });
  const request = new Request(new URL(req.originalUrl, publicUrl), {
    method: req.method,
    headers,
    signal: aborter.signal,
  });
  return { request, closed: aborter.signal };
}

/** Writes a web `Response` to Express: one body, or a stream (`text/event-stream`) piped until either side ends. */
export async function sendWebResponse(response: Response, res: ExpressResponse, closed: AbortSignal): Promise<void> {
  res.status(response.status);
  response.headers.forEach((value, name) => {
    res.setHeader(name, value);
  });
  if (!response.body) {
    res.end();
    return;
  }
  if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
    const stream = Readable.fromWeb(response.body as import("node:stream/web").ReadableStream);
    closed.addEventListener("abort", () => stream.destroy(), { once: true });
    stream.on("error", () => res.destroy());
    stream.pipe(res);
    return;
  }
  res.end(Buffer.from(await response.arrayBuffer()));
}

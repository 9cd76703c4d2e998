import type { IncomingHttpHeaders } from "node:http";

export const API_KEY = { "x-api-key": "sim-test-key" };

export interface JsonAnswer<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** GET `url` and parse the body as JSON (the body text when it is not JSON). */
export async function getJson<T = unknown>(
  url: string,
  headers: Record<string, string> = API_KEY,
): Promise<JsonAnswer<T>> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: body as T, headers: res.headers };
}

export type { IncomingHttpHeaders };

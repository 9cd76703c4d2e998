import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/** Takes a caller's `X-Request-Id` when it is sane, else makes one; echoes it on the response. */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers["x-request-id"];
  const id = typeof given === "string" && acceptable.test(given) ? given : randomUUID();
  res.setHeader("X-Request-Id", id);
  return id;
}

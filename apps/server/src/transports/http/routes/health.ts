import type { ServerResponse } from "node:http";
import type { Health } from "@agent-tools/schema";
import { Router } from "express";

export const SERVICE_NAME = "agent-tools";

const body: Health = { ok: true, service: SERVICE_NAME };
const json = JSON.stringify(body);

/** `{ ok: true, service }`: the service answers, so it is up. */
export function answerHealth(res: ServerResponse): void {
  res.writeHead(200, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(json),
    "cache-control": "no-store",
  });
  res.end(json);
}

export function healthRoutes(): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => answerHealth(res));
  return router;
}

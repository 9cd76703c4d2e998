import type { Health } from "@agent-tools/schema";
import { Router } from "express";

export const SERVICE_NAME = "agent-tools";

export function healthRoutes(): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => {
    const body: Health = { ok: true, service: SERVICE_NAME };
    res.json(body);
  });
  return router;
}

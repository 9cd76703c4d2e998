import type { OpenApiDocument } from "@agent-tools/schema";
import { Router } from "express";

/** `/openapi.json`: the document is built once at start from the contracts, then served as is. */
export function openApiRoutes(document: OpenApiDocument): Router {
  const router = Router();
  const body = JSON.stringify(document);
  router.get("/openapi.json", (_req, res) => {
    res.type("application/json").send(body);
  });
  return router;
}

import { type Response, Router } from "express";
import { type AgentRecordsDeps, createAgentRecords, parseTokenId } from "../../../agents/agent-records.js";
import { ServiceError } from "../../../errors/service-error.js";
import { agentImageSvg } from "./agent-image.js";

export type AgentRoutesDeps = AgentRecordsDeps;

/** Public agent routes: identity record, ERC-8004 registration file, live ERC-8217 binding, agent image. */
export function agentRoutes(deps: AgentRoutesDeps): Router {
  const records = createAgentRecords(deps);
  const router = Router();
  const sendJson = (res: Response, json: Buffer) => {
    res.setHeader("content-type", "application/json; charset=utf-8");
    res.setHeader("content-length", json.length);
    res.end(json);
  };

  router.get("/agents/info/:tokenId", async (req, res) => {
    sendJson(res, await records.infoJson(parseTokenId(req.params.tokenId)));
  });

  router.get("/.well-known/agents/:file", async (req, res) => {
    const match = /^(.+)\.json$/.exec(req.params.file);
    if (!match) throw new ServiceError("not_found", "Registration files are at /.well-known/agents/<tokenId>.json.");
    res.json(await records.registration(parseTokenId(match[1]!)));
  });

  router.get("/agents/:tokenId/binding", async (req, res) => {
    const body = await records.binding(parseTokenId(req.params.tokenId));
    // Live status: never served from a cache.
    res.set("Cache-Control", "no-store").json(body);
  });

  router.get("/agents/:tokenId/image.svg", async (req, res) => {
    const token = await records.existingToken(parseTokenId(req.params.tokenId));
    res.type("image/svg+xml").send(agentImageSvg(token));
  });

  return router;
}

import { clearanceMeets } from "@agent-tools/schema";
import type { RequestHandler } from "express";
import type { CollectionIndex } from "../chain/collection-index.js";
import { HttpError } from "../http/errors.js";
import { callState } from "./call-state.js";

/**
 * Step 3, policy: the token must exist (404 otherwise, for anyone). A signed-in caller must own it and its
 * clearance must meet the route's minimum (403 otherwise). An anonymous caller passes: `tokenId` then only
 * selects the agent context.
 */
export function enforcePolicy(collection: CollectionIndex): RequestHandler {
  return async (_req, res, next) => {
    const state = callState(res);
    const tokenId = state.params!.tokenId;
    await collection.sync();
    const token = collection.token(tokenId);
    if (!token)
      throw new HttpError("token_not_found", `Token ${tokenId} does not exist.`, [
        { field: "tokenId", message: "no such token" },
      ]);
    state.token = token;
    if ("revealedOnly" in state.route && state.route.revealedOnly && !token.revealed) {
      // Refused before any price is quoted: the route has nothing to do for an agent that is not revealed yet.
      throw new HttpError(
        "agent_not_revealed",
        `${state.route.path} is for revealed agents; token ${tokenId} is not revealed yet.`,
        [{ field: "tokenId", message: "not revealed yet" }],
        {},
        403,
      );
    }
    if (state.caller) {
      if (token.owner !== state.caller) {
        throw new HttpError("not_token_owner", `The signed-in address ${state.caller} does not own token ${tokenId}.`, [
          { field: "tokenId", message: "not owned by the signed-in caller" },
        ]);
      }
      const needed = state.route.minimumClearance;
      if (!clearanceMeets(token.clearance, needed)) {
        throw new HttpError(
          "insufficient_clearance",
          `${state.route.path} needs ${needed} clearance; token ${tokenId} has ${token.clearance}.`,
          [{ field: "tokenId", message: `clearance ${token.clearance} is below ${needed}`, requiredClearance: needed }],
        );
      }
    }
    next();
  };
}

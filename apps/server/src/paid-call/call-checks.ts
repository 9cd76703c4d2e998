/** The steps of a paid call that need no payment: validate the request, and the token policy (./paid-call.ts). */
import { clearanceMeets, queryToInput, safeParseRequest, type ToolRoute } from "@agent-tools/schema";
import type { Address } from "viem";
import type { CollectionIndex, IndexedToken } from "../chain/collection-index.js";
import { ServiceError, uncharged, validationError } from "../errors/service-error.js";
import type { AdmittedCall, PaidCallRequest } from "./paid-call-types.js";

/** Step 1, validate: never challenged or charged when invalid. */
export function validateCall(request: PaidCallRequest): AdmittedCall["params"] {
  const { route } = request;
  let input = request.input;
  if (request.inputFrom === "query") {
    input = queryToInput(route.request, input as Record<string, string | string[]>);
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new ServiceError("invalid_request", "The request body must be a JSON object.", [
      { field: "", message: "expected an object" },
    ]);
  }
  const parsed = safeParseRequest(route.request, input);
  if (!parsed.success) throw validationError(parsed.error);
  return parsed.data as AdmittedCall["params"];
}

/** Step 3, policy: the token exists; a signed-in caller owns it and its clearance meets the route's. */
export async function checkTokenPolicy(
  collection: CollectionIndex,
  route: ToolRoute,
  tokenId: number,
  caller: Address | undefined,
): Promise<IndexedToken> {
  await collection.fresh();
  const token = collection.token(tokenId);
  if (!token) {
    throw new ServiceError("token_not_found", `Token ${tokenId} does not exist.`, [
      { field: "tokenId", message: "no such token" },
    ]);
  }
  if ("revealedOnly" in route && route.revealedOnly && !token.revealed) {
    // Refused before any price is quoted: the route has nothing to do for an agent that is not revealed yet.
    throw new ServiceError(
      "agent_not_revealed",
      uncharged(`${route.path} is for revealed agents; token ${tokenId} is not revealed yet.`),
      [{ field: "tokenId", message: "not revealed yet" }],
      {},
      403,
    );
  }
  if (caller) {
    if (token.owner !== caller) {
      throw new ServiceError("not_token_owner", `The signed-in address ${caller} does not own token ${tokenId}.`, [
        { field: "tokenId", message: "not owned by the signed-in caller" },
      ]);
    }
    const needed = route.minimumClearance;
    if (!clearanceMeets(token.clearance, needed)) {
      throw new ServiceError(
        "insufficient_clearance",
        `${route.path} needs ${needed} clearance; token ${tokenId} has ${token.clearance}.`,
        [{ field: "tokenId", message: `clearance ${token.clearance} is below ${needed}`, requiredClearance: needed }],
      );
    }
  }
  return token;
}

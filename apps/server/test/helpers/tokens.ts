import type { Clearance } from "@agent-tools/schema";
import type { CollectionIndex } from "../../src/chain/collection-index.js";

/**
 * The first revealed token `owner` holds with exactly this clearance (the devnet reveals tokens 1-6000 and gives
 * token t to account ((t - 1) mod 9) + 1).
 */
export function tokenHeldBy(collection: CollectionIndex, owner: string, clearance: Clearance): number {
  for (let id = 1; id <= 6000; id++) {
    const token = collection.token(id);
    if (token?.owner === owner && token.clearance === clearance && token.revealed) return id;
  }
  throw new Error(`${owner} holds no revealed ${clearance} token`);
}

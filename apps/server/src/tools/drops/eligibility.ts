/** Whether a wallet can mint a drop's stages: the marketplace's eligibility answer, per stage, with the reason. */
import type { DropStageInfo, EligibilityRefusal } from "../../upstream/marketplace/drop-shapes.js";
import type { MarketplaceDrops } from "../../upstream/marketplace/drops.js";
import type { ActiveDrop } from "./judge.js";

export interface StageCheck {
  stage: DropStageInfo;
  eligible: boolean;
  reason: string | null;
}

export type WalletCheck =
  | { checked: true; stages: StageCheck[] }
  | { checked: false; error: string; refused?: EligibilityRefusal };

/** A stage that has not ended (live, upcoming, or without dates). */
export function stageOpen(stage: DropStageInfo, now: Date): boolean {
  return stage.endsAt === null || stage.endsAt.getTime() > now.getTime();
}

export const isRestricted = (stage: DropStageInfo) => stage.kind !== "public";

function stageReason(stage: DropStageInfo, eligible: boolean, maxMintable: number | null): string | null {
  const cap = eligible && maxMintable !== null && maxMintable > 0 ? ` (up to ${maxMintable} per wallet)` : "";
  switch (stage.kind) {
    case "public":
      return eligible
        ? `public stage, open to every wallet${cap}`
        : `the marketplace reports this wallet cannot mint in this public stage${maxMintable === 0 ? " (its mint limit is used up)" : ""}`;
    case "allowlist":
      return eligible ? `on the allowlist${cap}` : "not on the allowlist";
    case "token_gated":
      return eligible ? `meets the token gate${cap}` : "does not meet the token gate";
    default:
      return eligible ? null : "not eligible";
  }
}

const refusals = {
  unauthorized: "the marketplace refused the wallet's access token (401)",
  forbidden: "the wallet's access token lacks the read:eligibility scope (403)",
  not_found: "the marketplace has no eligibility record for this drop (404)",
} as const;

/**
 * The wallet's eligibility for each stage of `drop` that has not ended, read with the wallet's access token.
 * The marketplace's refusals come back unchecked with the reason; outages throw (the call then fails, uncharged).
 */
export async function checkWallet(
  drops: MarketplaceDrops,
  drop: ActiveDrop,
  bearer: string,
  now: Date,
): Promise<WalletCheck> {
  const answer = await drops.eligibility(drop.slug, bearer);
  if ("refused" in answer) return { checked: false, error: refusals[answer.refused], refused: answer.refused };
  const byUuid = new Map(answer.stages.map((s) => [s.stageUuid, s]));
  const stages: StageCheck[] = [];
  for (const stage of drop.stages) {
    if (!stageOpen(stage, now) || stage.uuid === null) continue;
    const result = byUuid.get(stage.uuid);
    if (!result) continue;
    stages.push({ stage, eligible: result.eligible, reason: stageReason(stage, result.eligible, result.maxMintable) });
  }
  return { checked: true, stages };
}

/**
 * Which drops qualify ("verifiably active or upcoming"), judged at the scan's time from the stages' dates: live,
 * upcoming, or excluded as undated, ended, stale ({@link STALE_AFTER_DAYS}), sold out or with no open stage; and the
 * order drops are listed in (docs/api.md, "Drop radar").
 */
import { chainSchema, slugSchema } from "@agent-tools/schema";
import type { DropStageInfo, MarketplaceDrop, MarketplaceDropDetail } from "../../upstream/marketplace/drop-shapes.js";

/** An open-ended stage that started more than this many days ago makes its drop stale (unless a stage is to come). */
export const STALE_AFTER_DAYS = 30;
const STALE_AFTER_MS = STALE_AFTER_DAYS * 24 * 60 * 60 * 1000;

export type ExclusionReason = "ended" | "undated" | "stale" | "sold_out" | "no_open_stage" | "not_found";

export type DropStatus = "live" | "upcoming";

/** A drop that is verifiably live or upcoming. */
export interface ActiveDrop {
  slug: string;
  name: string;
  chain: string;
  /** EIP-55. */
  contractAddress: string;
  imageUrl: string;
  openseaUrl: string;
  totalSupply: number | null;
  maxSupply: number | null;
  remaining: number | null;
  /** Detail data: every stage, in start order; list data: the live or next stage the list reports. */
  stages: DropStageInfo[];
  status: DropStatus;
  /** Live: the stage minting now; upcoming: the next stage to open. */
  stage: DropStageInfo;
  /** Built from the drop's detail (stages, supply) rather than list data. */
  detailed: boolean;
  watched: boolean;
  /** Found only by a per-chain query, never in an unfiltered feed. */
  perChainOnly: boolean;
}

type Verdict = { status: DropStatus; stage: DropStageInfo } | { excluded: ExclusionReason };

const time = (date: Date | null, missing: number) => date?.getTime() ?? missing;

/** Whether a drop with these stages (and supply) is live, upcoming or excluded at `now` (docs/api.md, "Drop radar"). */
export function judgeStages(
  stages: readonly DropStageInfo[],
  now: number,
  supply: { total: number | null; max: number | null } = { total: null, max: null },
): Verdict {
  if (supply.total !== null && supply.max !== null && supply.total >= supply.max) return { excluded: "sold_out" };
  const dated = stages.filter((s) => s.startsAt !== null);
  if (dated.length === 0) return { excluded: "undated" };
  const live = dated.filter((s) => time(s.startsAt, 0) <= now && time(s.endsAt, Number.POSITIVE_INFINITY) > now);
  const fresh = live.filter((s) => s.endsAt !== null || now - time(s.startsAt, 0) <= STALE_AFTER_MS);
  if (fresh.length > 0) {
    const closing = [...fresh].sort(
      (a, b) => time(a.endsAt, Number.POSITIVE_INFINITY) - time(b.endsAt, Number.POSITIVE_INFINITY),
    )[0]!;
    return { status: "live", stage: closing };
  }
  const next = dated.filter((s) => time(s.startsAt, 0) > now).sort((a, b) => time(a.startsAt, 0) - time(b.startsAt, 0));
  if (next[0]) return { status: "upcoming", stage: next[0] };
  return { excluded: live.length > 0 ? "stale" : "ended" };
}

export function judgeListed(drop: MarketplaceDrop, now: number): Verdict {
  const stages = [drop.activeStage, drop.nextStage].filter((s) => s !== null);
  if (stages.length === 0) return { excluded: "no_open_stage" };
  return judgeStages(stages, now);
}

export const isActive = (verdict: Verdict): verdict is { status: DropStatus; stage: DropStageInfo } =>
  "status" in verdict;

/** A drop this service can put on the wire (a slug and chain it can name, an EVM contract). */
export function representable(drop: MarketplaceDrop): boolean {
  return (
    drop.contractAddress !== null &&
    slugSchema.safeParse(drop.slug).success &&
    chainSchema.safeParse(drop.chain).success
  );
}

export function activeDrop(
  drop: MarketplaceDrop | MarketplaceDropDetail,
  verdict: { status: DropStatus; stage: DropStageInfo },
  flags: { watched: boolean; perChainOnly: boolean },
): ActiveDrop {
  const detailed = "stages" in drop;
  const totalSupply = detailed ? drop.totalSupply : null;
  const maxSupply = detailed ? drop.maxSupply : null;
  return {
    slug: drop.slug,
    name: drop.name,
    chain: drop.chain,
    contractAddress: drop.contractAddress!,
    imageUrl: drop.imageUrl ?? "",
    openseaUrl: drop.openseaUrl,
    totalSupply,
    maxSupply,
    remaining: totalSupply !== null && maxSupply !== null ? Math.max(0, maxSupply - totalSupply) : null,
    stages: detailed ? drop.stages : [drop.activeStage, drop.nextStage].filter((s) => s !== null),
    status: verdict.status,
    stage: verdict.stage,
    detailed,
    watched: flags.watched,
    perChainOnly: flags.perChainOnly,
  };
}

export function judgeDetail(detail: MarketplaceDropDetail, now: number): Verdict {
  return judgeStages(detail.stages, now, { total: detail.totalSupply, max: detail.maxSupply });
}

/** Live first, closing soonest (no end date last), then upcoming, opening soonest; then by name. */
export function dropOrder(a: ActiveDrop, b: ActiveDrop): number {
  if (a.status !== b.status) return a.status === "live" ? -1 : 1;
  const key = (d: ActiveDrop) =>
    d.status === "live" ? time(d.stage.endsAt, Number.POSITIVE_INFINITY) : time(d.stage.startsAt, 0);
  return key(a) - key(b) || a.name.localeCompare(b.name) || a.slug.localeCompare(b.slug);
}

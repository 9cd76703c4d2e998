/** The drop tools' sentences: prices, durations, feeds, stages and what was left out. */

import { chainName } from "../../upstream/marketplace/chains.js";
import type { DropStageInfo, MarketplaceDropFeed } from "../../upstream/marketplace/drop-shapes.js";
import { listOf, plural } from "../wording.js";
import type { ActiveDrop, ExclusionReason } from "./judge.js";

/** "0.08 ETH", "25 USDC", "free"; "an unlisted price" when the currency is unknown. */
export function mintPrice(price: DropStageInfo["price"]): string {
  if (!price) return "an unlisted price";
  if (BigInt(price.amount) === 0n) return "free";
  const whole = BigInt(price.amount) / 10n ** BigInt(price.decimals);
  const fraction = (BigInt(price.amount) % 10n ** BigInt(price.decimals))
    .toString()
    .padStart(price.decimals, "0")
    .replace(/0+$/, "");
  return `${whole}${fraction ? `.${fraction}` : ""} ${price.currency}`;
}

/** "40 minutes", "5 hours", "2 days 3 hours", "12 days". */
export function duration(ms: number): string {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes < 60) return plural(minutes, "minute");
  const hours = Math.round(ms / 3_600_000);
  if (hours < 24) return plural(hours, "hour");
  const days = Math.floor(hours / 24);
  const rest = hours % 24;
  return days >= 7 || rest === 0
    ? plural(Math.round(hours / 24), "day")
    : `${plural(days, "day")} ${plural(rest, "hour")}`;
}

/** "the featured feed", "the featured, upcoming and recently minted feeds". */
export function feedPhrase(feeds: readonly MarketplaceDropFeed[]): string {
  const names = feeds.map((feed) => feed.replace("_", " "));
  return `the ${listOf(names)} ${feeds.length === 1 ? "feed" : "feeds"}`;
}

/** "public stage at 0.08 ETH closes in 2 days" / "allowlist stage at 0.1 ETH opens in 5 hours" / "... has no end date". */
export function stagePhrase(drop: ActiveDrop, now: Date, stage: DropStageInfo = drop.stage): string {
  const what = `${stage.name.toLowerCase().endsWith("stage") ? stage.name : `${stage.name} stage`} at ${mintPrice(stage.price)}`;
  const started = stage.startsAt !== null && stage.startsAt.getTime() <= now.getTime();
  if (!started) {
    return stage.startsAt
      ? `${what} opens in ${duration(stage.startsAt.getTime() - now.getTime())}`
      : `${what}, start not dated`;
  }
  if (stage.endsAt === null) return `${what} is live with no end date`;
  return `${what} closes in ${duration(stage.endsAt.getTime() - now.getTime())}`;
}

/** "12,000 of 5,000 left" when known. */
export function supplyPhrase(drop: ActiveDrop): string | undefined {
  if (drop.remaining === null || drop.maxSupply === null) return undefined;
  return `${drop.remaining.toLocaleString("en-US")} of ${drop.maxSupply.toLocaleString("en-US")} left`;
}

/** "Neon Harbor Passes on Ethereum (Public stage at 0.08 ETH closes in 2 days, 1,900 of 5,000 left)". */
export function dropPhrase(drop: ActiveDrop, now: Date): string {
  const details = [stagePhrase(drop, now), supplyPhrase(drop)].filter((part) => part !== undefined);
  return `${drop.name} on ${chainName(drop.chain)} (${details.join(", ")})`;
}

/** "14 other listed drops were left out: 6 ended, 4 stale, ..." (undefined when none). */
export function exclusionPhrase(excluded: Record<ExclusionReason, number>): string | undefined {
  const labels: [ExclusionReason, string][] = [
    ["ended", "ended"],
    ["undated", "undated"],
    ["stale", "stale"],
    ["sold_out", "sold out"],
    // List data: neither a live nor a next stage; the list does not say which of the three.
    ["no_open_stage", "ended, sold out or undated"],
    ["not_found", "gone from the marketplace"],
  ];
  const parts = labels
    .filter(([reason]) => excluded[reason] > 0)
    .map(([reason, label]) => `${excluded[reason]} ${label}`);
  const total = Object.values(excluded).reduce((a, b) => a + b, 0);
  if (total === 0) return undefined;
  return `${plural(total, "other listed drop")} ${total === 1 ? "was" : "were"} left out (${parts.join(", ")})`;
}

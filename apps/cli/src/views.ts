/**
 * A view per tool: the columns an operator scans a result for (a drop's stage, price and time left; a token's price,
 * volume, liquidity and risk; a collection's floor, best bid and error code), with full addresses, so that one can be
 * pasted into --address. `--json` is untouched: it prints the response itself.
 */
import type { ToolName } from "@agent-tools/sdk/contracts";

type Row = Record<string, string>;
type Item = Record<string, unknown>;
interface Price {
  amount: string;
  currency: string;
  decimals: number;
  usd: number | null;
}

/** "in 3h 20m", "2d 4h ago", "now". */
export function relativeTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "-";
  const ms = Date.parse(iso) - now;
  const abs = Math.abs(ms);
  if (abs < 60_000) return "now";
  const minutes = Math.floor(abs / 60_000);
  const [d, h, m] = [Math.floor(minutes / 1440), Math.floor((minutes % 1440) / 60), minutes % 60];
  const span = d > 0 ? `${d}d${h ? ` ${h}h` : ""}` : h > 0 ? `${h}h${m ? ` ${m}m` : ""}` : `${m}m`;
  return ms > 0 ? `in ${span}` : `${span} ago`;
}

/** 10000000000000000 wei -> "0.01 ETH ($31.20)". */
export function priceText(price: Price | null | undefined): string {
  if (!price) return "-";
  const units = BigInt(price.amount);
  const scale = 10n ** BigInt(price.decimals);
  const fraction = (units % scale).toString().padStart(price.decimals, "0").replace(/0+$/, "");
  const amount = `${units / scale}${fraction ? `.${fraction.slice(0, 6)}` : ""}`;
  return `${amount} ${price.currency}${typeof price.usd === "number" ? ` ($${price.usd.toFixed(2)})` : ""}`;
}

const usd = (value: unknown) =>
  typeof value === "number"
    ? `$${value >= 1000 ? Math.round(value).toLocaleString("en-US") : value.toFixed(value < 1 ? 4 : 2)}`
    : "-";
const risk = (value: unknown) => {
  const r = value as { level?: string; flags?: string[] } | undefined;
  if (!r?.level) return "-";
  return r.flags?.length ? `${r.level}: ${r.flags.join("; ")}` : r.level;
};

function dropRow(drop: Item, now: number): Row {
  const stages = (drop.stages ?? []) as {
    name: string;
    kind: string;
    startsAt: string | null;
    endsAt: string | null;
    price: Price | null;
  }[];
  const started = (s: (typeof stages)[number]) => s.startsAt !== null && Date.parse(s.startsAt) <= now;
  const open = (s: (typeof stages)[number]) => started(s) && (s.endsAt === null || Date.parse(s.endsAt) > now);
  const current = stages.find(open);
  const next = stages.find((s) => s.startsAt !== null && Date.parse(s.startsAt) > now);
  const stage = current ?? next;
  return {
    name: String(drop.name),
    chain: String(drop.chain),
    status: current ? "live" : "upcoming",
    stage: stage ? `${stage.name} (${stage.kind})` : "-",
    price: priceText(stage?.price),
    when: current
      ? current.endsAt
        ? `ends ${relativeTime(current.endsAt, now)}`
        : "open-ended"
      : `opens ${relativeTime(next?.startsAt, now)}`,
    slug: String(drop.slug),
  };
}

/** The rows of a tool's main list in its view, or undefined for a tool shown as a plain table. */
export function viewRows(tool: ToolName, list: Item[], now = Date.now()): Row[] | undefined {
  switch (tool) {
    case "dropRadar":
      return list.map((drop) => dropRow(drop, now));
    case "b20Radar":
      return list.map((token) => {
        const market = (token.market ?? {}) as Item;
        return {
          symbol: String(token.symbol),
          name: String(token.name),
          variant: String(token.variant),
          price: usd(market.priceUsd),
          "24h volume": usd(market.volumeH24),
          liquidity: usd(market.liquidityUsd),
          risk: risk(market.risk),
          address: String(token.address),
        };
      });
    case "altchainRadar":
      return list.map((token) => ({
        symbol: String(token.symbol),
        name: String(token.name),
        price: usd(token.priceUsd),
        "24h volume": usd(token.volume24hUsd),
        liquidity: usd(token.liquidityUsd),
        risk: risk(token.risk),
        address: String(token.address),
      }));
    case "offerRadar":
      return list.map((entry) => ({
        slug: String(entry.slug),
        floor: priceText(entry.floor as Price | null),
        "top bid": priceText(entry.topBid as Price | null),
        spread: typeof entry.spreadPct === "number" ? `${entry.spreadPct.toFixed(1)}%` : "-",
        "bid ≥ floor": entry.bidAboveFloor ? "yes" : "no",
        error: (entry.error as { code?: string } | null)?.code ?? "-",
      }));
    default:
      return undefined;
  }
}

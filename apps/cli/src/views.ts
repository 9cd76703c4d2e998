/**
 * A view per tool: the columns an operator scans a result for (a drop's stage, price and time left; a token's price,
 * volume, liquidity and risk; a collection's floor, best bid and error code), with full addresses, so that one can be
 * pasted into --address. `--json` is untouched: it prints the response itself.
 */
import { type ToolName, usdAmountText, usdCompactText, usdPriceText } from "@agent-tools/sdk/contracts";

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
  return `${amount} ${price.currency}${typeof price.usd === "number" ? ` (${usdAmountText(price.usd)})` : ""}`;
}

/** A USD figure as the briefs write it, "-" when unknown. */
const usd = (value: unknown, text: (value: number) => string) => (typeof value === "number" ? text(value) : "-");
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

/**
 * A radar's token: what it is (and `kind` columns), its price, 24h volume and liquidity, its address in full, and its
 * risk with every flag, last, where the table lets it run to the end of the line.
 */
function tokenRow(
  token: Item,
  [price, volume, liquidity, tokenRisk]: readonly [unknown, unknown, unknown, unknown],
  kind: Row = {},
): Row {
  return {
    symbol: String(token.symbol),
    name: String(token.name),
    ...kind,
    price: usd(price, usdPriceText),
    "24h volume": usd(volume, usdCompactText),
    liquidity: usd(liquidity, usdCompactText),
    address: String(token.address),
    risk: risk(tokenRisk),
  };
}

/** A titled list of a result in its view: the response field it shows, and its rows. */
export interface Section {
  field: string;
  rows: Row[];
}

const listAt = (result: Item, field: string) => (Array.isArray(result[field]) ? (result[field] as Item[]) : []);
const orDash = (value: unknown) => (value === null || value === undefined || value === "" ? "-" : String(value));

interface StageEligibility {
  stage: string;
  eligible: boolean;
  reason: string | null;
}

function allowlistRow(entry: Item, now: number, eligible: boolean): Row {
  const stages = (entry.stages ?? []) as StageEligibility[];
  const shown = stages.filter((s) => s.eligible === eligible);
  return {
    name: String(entry.name),
    chain: String(entry.chain),
    ...(eligible
      ? { stages: shown.map((s) => s.stage).join(", ") || "-" }
      : { why: [...new Set(shown.map((s) => s.reason ?? s.stage))].join("; ") || "-" }),
    "next stage": relativeTime(entry.nextStageAt as string | null, now),
    slug: String(entry.slug),
  };
}

/** The lists of a tool's result in its view, or undefined for a tool shown as a plain table. */
export function viewSections(tool: ToolName, result: Item, now = Date.now()): Section[] | undefined {
  switch (tool) {
    case "dropRadar":
      return [{ field: "drops", rows: listAt(result, "drops").map((drop) => dropRow(drop, now)) }];
    case "b20Radar":
      return [
        {
          field: "tokens",
          rows: listAt(result, "tokens").map((token) => {
            const market = (token.market ?? {}) as Item;
            const figures = [market.priceUsd, market.volumeH24, market.liquidityUsd, market.risk] as const;
            return tokenRow(token, figures, { variant: String(token.variant) });
          }),
        },
      ];
    case "altchainRadar":
      return [
        {
          field: "tokens",
          rows: listAt(result, "tokens").map((token) =>
            tokenRow(token, [token.priceUsd, token.volume24hUsd, token.liquidityUsd, token.risk]),
          ),
        },
      ];
    case "offerRadar":
      return [
        {
          field: "collections",
          rows: listAt(result, "collections").map((entry) => ({
            slug: String(entry.slug),
            floor: priceText(entry.floor as Price | null),
            "top bid": priceText(entry.topBid as Price | null),
            spread: typeof entry.spreadPct === "number" ? `${entry.spreadPct.toFixed(1)}%` : "-",
            "bid ≥ floor": entry.bidAboveFloor ? "yes" : "no",
            error: (entry.error as { code?: string } | null)?.code ?? "-",
          })),
        },
      ];
    case "portfolio":
      return [
        {
          field: "nfts",
          rows: listAt(result, "nfts").map((nft) => ({
            collection: String(nft.collection),
            name: orDash(nft.name),
            "token id": String(nft.identifier),
            floor: priceText(nft.floorPrice as Price | null),
            standard: String(nft.tokenStandard),
            contract: String(nft.contract),
          })),
        },
        {
          field: "offersReceived",
          rows: listAt(result, "offersReceived").map((offer) => ({
            collection: String(offer.collection),
            kind: String(offer.kind),
            "token id": orDash(offer.identifier),
            price: priceText(offer.price as Price),
            expires: relativeTime(offer.expiresAt as string | null, now),
            maker: String(offer.maker),
          })),
        },
      ];
    case "allowlistScan":
      return [
        { field: "eligible", rows: listAt(result, "eligible").map((entry) => allowlistRow(entry, now, true)) },
        ...(Array.isArray(result.ineligible)
          ? [{ field: "ineligible", rows: listAt(result, "ineligible").map((e) => allowlistRow(e, now, false)) }]
          : []),
      ];
    default:
      return undefined;
  }
}

/**
 * The whole marketplace fixture for one clock reading (memoized per anchor hour), and the wallet access tokens the
 * eligibility route authenticates.
 */
import { anchorHour, buildDrops, type DropsFixture } from "./drops.js";
import { buildMarket, type MarketFixture } from "./market.js";

export interface MarketplaceFixture extends MarketFixture {
  /** The clock floored to the hour: every time in the fixture is laid out relative to it. */
  anchor: number;
  drops: DropsFixture;
}

let cached: MarketplaceFixture | undefined;

/** The marketplace data as the simulator answers at `nowMs` (identical for every `nowMs` within one UTC hour). */
export function marketplaceFixture(nowMs: number): MarketplaceFixture {
  const anchor = anchorHour(nowMs);
  if (cached?.anchor === anchor) return cached;
  const drops = buildDrops(nowMs);
  cached = { anchor, drops, ...buildMarket(drops) };
  return cached;
}

function base64url(text: string): string {
  return Buffer.from(text, "utf8").toString("base64url");
}

/**
 * An access token for `wallet` as the simulator accepts it in `Authorization: Bearer <token>` (OpenSea's wallet
 * authorization, which `GET /api/v2/drops/{slug}/eligibility` requires: it answers for the token's wallet only).
 * An unsigned JWT whose `sub` is the wallet and `scope` the granted scopes; the simulator checks nothing else.
 */
export function simWalletAccessToken(wallet: string, scopes: readonly string[] = ["read:eligibility"]): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(wallet)) throw new Error(`not an EVM address: ${wallet}`);
  const header = base64url(JSON.stringify({ alg: "none", typ: "JWT" }));
  const payload = base64url(
    JSON.stringify({ iss: "upstream-sim", aud: "api.opensea.io", sub: wallet.toLowerCase(), scope: scopes.join(" ") }),
  );
  return `${header}.${payload}.`;
}

/** The wallet and scopes of a token made by {@link simWalletAccessToken}; undefined for anything else. */
export function parseWalletAccessToken(token: string): { wallet: string; scopes: string[] } | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as {
      sub?: unknown;
      scope?: unknown;
    };
    if (typeof payload.sub !== "string" || !/^0x[0-9a-f]{40}$/.test(payload.sub)) return undefined;
    const scopes = typeof payload.scope === "string" ? payload.scope.split(" ").filter(Boolean) : [];
    return { wallet: payload.sub, scopes };
  } catch {
    return undefined;
  }
}

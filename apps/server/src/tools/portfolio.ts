import { type ToolOutput, usdAmountText } from "@agent-tools/schema";
import type { Address } from "viem";
import { ServiceError, uncharged } from "../errors/service-error.js";
import { countWork } from "../metering/work-meter.js";
import { type AccountNft, getAccountNfts, getOffersReceived } from "../upstream/marketplace/accounts.js";
import type { Currency } from "../upstream/marketplace/amounts.js";
import { MARKETPLACE_EVM_CHAINS } from "../upstream/marketplace/chains.js";
import {
  type CollectionWithFloor,
  currenciesOf,
  getCollection,
  getCollectionWithFloor,
} from "../upstream/marketplace/collections.js";
import { isLive, type MarketOffer } from "../upstream/marketplace/orders.js";
import { formatPriceWithUsd, type Price, roundUsd, toPrice } from "./market-prices.js";
import type { Tool, ToolDeps } from "./types.js";
import { requireWallet } from "./wallet.js";
import { plural, shortAddress } from "./wording.js";

type PortfolioOutput = ToolOutput<"portfolio">;
type PortfolioNft = PortfolioOutput["nfts"][number];
type ReceivedOffer = PortfolioOutput["offersReceived"][number];

/** Offers received read at most (highest first); the portfolio lists them all, best per item first. */
const OFFERS_RECEIVED_LIMIT = 100;
/** Highest nftLimit the request schema allows. */
const MAX_NFT_LIMIT = 100;

/** The wallet to scan: `walletAddress`, else the signed-in caller; an anonymous call must name one. */
function walletOf(walletAddress: string | undefined, caller: Address | undefined): Address {
  return requireWallet(walletAddress, caller, {
    message: "Name the wallet to scan in walletAddress, or sign in (SIGN-IN-WITH-X) to scan your own.",
    detail: "required when the caller is not signed in",
  });
}

function checkChain(chain: string): void {
  if (MARKETPLACE_EVM_CHAINS.includes(chain)) return;
  throw new ServiceError(
    "invalid_request",
    uncharged(
      `The marketplace does not list EVM NFTs on chain '${chain}'; use one of ${MARKETPLACE_EVM_CHAINS.join(", ")}.`,
    ),
    [{ field: "chain", message: "not a chain the marketplace lists" }],
  );
}

function unique<T>(items: Iterable<T>): T[] {
  return [...new Set(items)];
}

/** Collections by slug (null for a slug the marketplace does not know), each read once. */
async function readCollections(
  deps: ToolDeps,
  withFloor: readonly string[],
  withoutFloor: readonly string[],
): Promise<{
  floors: Map<string, CollectionWithFloor | null>;
  currencies: Map<string, Map<string, Currency>>;
  names: Map<string, string>;
}> {
  const [floored, others] = await Promise.all([
    Promise.all(withFloor.map(async (slug) => [slug, await getCollectionWithFloor(deps.marketplace, slug)] as const)),
    Promise.all(withoutFloor.map(async (slug) => [slug, await getCollection(deps.marketplace, slug)] as const)),
  ]);
  const floors = new Map(floored);
  const currencies = new Map<string, Map<string, Currency>>();
  const names = new Map<string, string>();
  for (const [slug, found] of floored) {
    currencies.set(slug, found?.currencies ?? new Map());
    if (found) names.set(slug, found.info.name);
  }
  for (const [slug, info] of others) {
    currencies.set(slug, info ? currenciesOf(info) : new Map());
    if (info) names.set(slug, info.name);
  }
  return { floors, currencies, names };
}

/** Highest USD value first; offers whose USD value is unknown after, by amount. */
function byValueDesc(a: { price: Price }, b: { price: Price }): number {
  if (a.price.usd !== null && b.price.usd !== null) return b.price.usd - a.price.usd;
  if (a.price.usd !== null) return -1;
  if (b.price.usd !== null) return 1;
  const d = BigInt(b.price.amount) - BigInt(a.price.amount);
  return d > 0n ? 1 : d < 0n ? -1 : 0;
}

function toReceivedOffer(offer: MarketOffer, currencies: Map<string, Currency>): ReceivedOffer | null {
  if (!offer.maker) return null;
  return {
    collection: offer.collection ?? offer.contract ?? "unknown",
    kind: offer.kind,
    contract: offer.contract,
    identifier: offer.identifier,
    price: toPrice(offer.unitPrice, currencies),
    maker: offer.maker,
    expiresAt: offer.expiresAt,
  };
}

function toPortfolioNft(nft: AccountNft, floor: Price | null): PortfolioNft {
  return {
    contract: nft.contract,
    identifier: nft.identifier,
    collection: nft.collection,
    name: nft.name,
    imageUrl: nft.imageUrl,
    openseaUrl: nft.openseaUrl,
    tokenStandard: nft.tokenStandard,
    floorPrice: floor,
  };
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                  Estimate                                                    */
/* ----------------------------------------------------------------------------------------------------------- */

interface Estimate {
  /** Sum of the listed NFTs' collection floors in USD, each NFT once; undefined when no floor has a USD value. */
  valueUsd: number | undefined;
  /** NFTs without a floor with a known USD value (counted as 0). */
  unpriced: number;
  /** The collection holding the most value. */
  top: { slug: string; count: number; valueUsd: number } | undefined;
}

/**
 * The estimate: every NFT listed in `nfts` counted once at its collection's floor in USD (ERC-1155 copies held
 * are not counted: the marketplace lists a token once). NFTs whose collection has no floor (nothing listed) or
 * whose floor currency has no known USD price add nothing and are counted in `unpriced`.
 */
function estimate(nfts: readonly PortfolioNft[]): Estimate {
  let total = 0;
  let priced = 0;
  const byCollection = new Map<string, { count: number; valueUsd: number }>();
  for (const nft of nfts) {
    const usd = nft.floorPrice?.usd;
    if (usd === null || usd === undefined) continue;
    priced++;
    total += usd;
    const entry = byCollection.get(nft.collection) ?? { count: 0, valueUsd: 0 };
    entry.count++;
    entry.valueUsd += usd;
    byCollection.set(nft.collection, entry);
  }
  let top: Estimate["top"];
  for (const [slug, entry] of byCollection) if (!top || entry.valueUsd > top.valueUsd) top = { slug, ...entry };
  return {
    valueUsd: nfts.length === 0 ? 0 : priced > 0 ? roundUsd(total) : undefined,
    unpriced: nfts.length - priced,
    top,
  };
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                    Brief                                                     */
/* ----------------------------------------------------------------------------------------------------------- */

interface BriefInput {
  wallet: Address;
  chain: string;
  nfts: PortfolioNft[];
  more: boolean;
  nftLimit: number;
  offers: ReceivedOffer[];
  estimate: Estimate;
  names: (slug: string) => string;
}

function holdingsSentence({ wallet, chain, nfts, more, nftLimit }: BriefInput): string {
  if (nfts.length === 0) return `${shortAddress(wallet)} holds no NFTs on ${chain}: estimated value $0.`;
  const collections = unique(nfts.map((nft) => nft.collection)).length;
  const raise = nftLimit < MAX_NFT_LIMIT ? `; raise nftLimit (up to ${MAX_NFT_LIMIT}) to list more` : "";
  const scope = more ? ` (the first ${nfts.length}: it holds more${raise})` : "";
  return `${shortAddress(wallet)} holds ${plural(nfts.length, "NFT")} on ${chain} across ${plural(collections, "collection")}${scope}.`;
}

function estimateSentence({ nfts, estimate: e, names }: BriefInput): string | undefined {
  if (nfts.length === 0) return undefined;
  if (e.valueUsd === undefined) {
    return "No value estimate: none of these collections has a floor with a known USD price.";
  }
  const rule = "the sum of each listed NFT's collection floor in USD, every NFT counted once";
  const unpriced = e.unpriced > 0 ? `; ${plural(e.unpriced, "NFT")} without a floor in USD count as $0` : "";
  const top = e.top
    ? ` The largest share is ${names(e.top.slug)} (${plural(e.top.count, "NFT")}, ${usdAmountText(e.top.valueUsd)}).`
    : "";
  return `Estimated value ${usdAmountText(e.valueUsd)}: ${rule}${unpriced}.${top}`;
}

function offerTarget(offer: ReceivedOffer, input: BriefInput): string {
  const name = input.names(offer.collection);
  if (offer.kind === "item") {
    const held = input.nfts.find((nft) => nft.contract === offer.contract && nft.identifier === offer.identifier);
    return `${held?.name ?? `${name} #${offer.identifier}`} (item offer)`;
  }
  if (offer.kind === "trait") return `${name} items with the right traits (trait offer)`;
  return `any ${name} item (collection offer)`;
}

function offersSentence(input: BriefInput): string {
  const { offers, chain } = input;
  const best = offers[0];
  if (!best) return `No offers received on ${chain}.`;
  return (
    `${plural(offers.length, "offer")} received on ${chain}; the best is ${formatPriceWithUsd(best.price)} per item ` +
    `for ${offerTarget(best, input)}.`
  );
}

function brief(input: BriefInput): string {
  return [holdingsSentence(input), estimateSentence(input), offersSentence(input)]
    .filter((sentence) => sentence !== undefined)
    .join(" ");
}

/* ----------------------------------------------------------------------------------------------------------- */
/*                                                     Tool                                                     */
/* ----------------------------------------------------------------------------------------------------------- */

/**
 * POST /portfolio: the NFTs a wallet holds on a chain (up to `nftLimit`, read page by page), the offers it
 * received there (per-item prices, best first) and an estimated value in USD: the sum of the listed NFTs'
 * collection floors in USD, each NFT counted once. Upstream trouble fails the call (nothing is charged).
 */
export function createPortfolioTool(deps: ToolDeps): Tool<"portfolio"> {
  return async (params, context) => {
    const wallet = walletOf(params.walletAddress, context.caller);
    const { chain, nftLimit } = params;
    checkChain(chain);
    const [held, received] = await Promise.all([
      getAccountNfts(deps.marketplace, { address: wallet, chain, limit: nftLimit }),
      getOffersReceived(deps.marketplace, { address: wallet, chain, limit: OFFERS_RECEIVED_LIMIT }),
    ]);
    countWork("itemsExamined", held.nfts.length + received.length);
    const now = context.now();
    const live = received.filter((offer) => isLive(offer, now));

    const nftSlugs = unique(held.nfts.map((nft) => nft.collection));
    const offerSlugs = unique(live.map((offer) => offer.collection).filter((slug) => slug !== null)).filter(
      (slug) => !nftSlugs.includes(slug),
    );
    const collections = await readCollections(deps, nftSlugs, offerSlugs);
    const currenciesFor = (slug: string | null) =>
      (slug === null ? undefined : collections.currencies.get(slug)) ?? new Map<string, Currency>();

    const nfts = held.nfts.map((nft) => {
      const found = collections.floors.get(nft.collection);
      return toPortfolioNft(nft, found?.floor ? toPrice(found.floor, found.currencies) : null);
    });
    const offersReceived = live
      .map((offer) => toReceivedOffer(offer, currenciesFor(offer.collection)))
      .filter((offer) => offer !== null)
      .sort(byValueDesc);
    const value = estimate(nfts);
    const names = (slug: string) => collections.names.get(slug) ?? slug;

    return {
      wallet,
      chain,
      nftCount: nfts.length,
      nfts,
      offersReceived,
      ...(value.valueUsd === undefined ? {} : { estimatedValueUsd: value.valueUsd }),
      brief: brief({ wallet, chain, nfts, more: held.more, nftLimit, offers: offersReceived, estimate: value, names }),
      ...(context.caller ? { caller: context.caller } : {}),
      clearance: context.token.clearance,
    };
  };
}

/**
 * The marketplace's account routes (OpenSea API v2): the NFTs a wallet holds on a chain, page by page, and the
 * offers it received. Upstream shapes as opensea-api.json defines them (optional fields may be missing or
 * `null`), mapped to small internal types.
 */
import { type Address, getAddress, isAddress } from "viem";
import { z } from "zod";
import type { UpstreamClient } from "../upstream-client.js";
import { type MarketOffer, offersResponseWire, toMarketOffer } from "./orders.js";

/** `Nft` of `NftListResponse`, the parts read. */
const nftWire = z.object({
  identifier: z.string(),
  collection: z.string(),
  contract: z.string(),
  token_standard: z.string(),
  name: z.string().nullish(),
  image_url: z.string().nullish(),
  display_image_url: z.string().nullish(),
  opensea_url: z.string().nullish(),
  is_disabled: z.boolean().nullish(),
});

/** `NftListResponse`. */
const nftListWire = z.object({ nfts: z.array(nftWire), next: z.string().nullish() });

export interface AccountNft {
  contract: Address;
  identifier: string;
  /** Collection slug. */
  collection: string;
  name: string | null;
  imageUrl: string | null;
  openseaUrl: string | null;
  tokenStandard: string;
}

export interface AccountNfts {
  nfts: AccountNft[];
  /** True when the wallet holds more on the chain than were read (the limit stopped the paging). */
  more: boolean;
  /** Pages requested. */
  pages: number;
}

/** OpenSea's default page size of the account NFTs route (it allows up to 200). */
export const NFT_PAGE_SIZE = 50;

function toAccountNft(nft: z.infer<typeof nftWire>): AccountNft | null {
  // Only EVM tokens with a numeric id fit the service's wire format.
  if (!isAddress(nft.contract, { strict: false }) || !/^(0|[1-9][0-9]*)$/.test(nft.identifier)) return null;
  return {
    contract: getAddress(nft.contract),
    identifier: nft.identifier,
    collection: nft.collection,
    name: nft.name ?? null,
    imageUrl: nft.display_image_url ?? nft.image_url ?? null,
    openseaUrl: nft.opensea_url ?? null,
    tokenStandard: nft.token_standard,
  };
}

/**
 * `GET /api/v2/chain/{chain}/account/{address}/nfts`, following the `next` cursor page by page until `limit`
 * NFTs are read or the wallet has no more.
 */
export async function getAccountNfts(
  client: UpstreamClient,
  options: { address: Address; chain: string; limit: number; pageSize?: number },
): Promise<AccountNfts> {
  const { address, chain, limit } = options;
  const pageSize = options.pageSize ?? NFT_PAGE_SIZE;
  const path = `/api/v2/chain/${encodeURIComponent(chain)}/account/${address}/nfts`;
  const nfts: AccountNft[] = [];
  // A bound on the pages, against an upstream that keeps handing out cursors without NFTs.
  const maxPages = Math.ceil(limit / pageSize) + 2;
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await client.get(path, {
      query: { limit: Math.min(pageSize, limit - nfts.length), next: cursor },
      schema: nftListWire,
    });
    pages++;
    for (const wire of page?.nfts ?? []) {
      const nft = toAccountNft(wire);
      if (nft && nfts.length < limit) nfts.push(nft);
    }
    cursor = page?.next ?? undefined;
    if (!cursor) return { nfts, more: false, pages };
    if (nfts.length >= limit || pages >= maxPages) return { nfts, more: true, pages };
  }
}

/** OpenSea's default page size of the offers-received route. */
const OFFERS_PAGE_SIZE = 50;

/**
 * `GET /api/v2/account/{address}/offers_received` on one chain, highest offers first (`TOP_ASSET_OFFER`), at most
 * `limit` offers over as many pages as that takes. Inactive offers and offers not priced in integer units are
 * left out; each offer's price is per item.
 */
export async function getOffersReceived(
  client: UpstreamClient,
  options: { address: Address; chain: string; limit: number },
): Promise<MarketOffer[]> {
  const { address, chain, limit } = options;
  const offers: MarketOffer[] = [];
  const seen = new Set<string>();
  const maxPages = Math.ceil(limit / OFFERS_PAGE_SIZE) + 2;
  let cursor: string | undefined;
  for (let pages = 1; ; pages++) {
    const page = await client.get(`/api/v2/account/${address}/offers_received`, {
      query: {
        chains: [chain],
        sort_by: "TOP_ASSET_OFFER",
        sort_direction: "desc",
        limit: Math.min(OFFERS_PAGE_SIZE, limit - offers.length),
        after: cursor,
      },
      schema: offersResponseWire,
    });
    for (const wire of page?.offers ?? []) {
      const offer = toMarketOffer(wire);
      if (!offer || offers.length >= limit) continue;
      if (offer.orderHash) {
        if (seen.has(offer.orderHash)) continue;
        seen.add(offer.orderHash);
      }
      offers.push(offer);
    }
    cursor = page?.next ?? undefined;
    if (!cursor || offers.length >= limit || pages >= maxPages) return offers;
  }
}

/**
 * The OpenSea API v2 wire shapes the marketplace simulator answers with (snake_case, as opensea-api.json
 * defines them). Only the fields the fixtures fill are typed.
 */

export interface DropStageWire {
  uuid: string;
  stage_type: string;
  label?: string;
  price?: string;
  price_currency_address: string;
  start_time: string;
  end_time: string;
  max_per_wallet: string;
  allowlist_wallet_count?: number;
}

export interface DropWire {
  collection_slug: string;
  collection_name?: string;
  chain: string;
  contract_address: string;
  drop_type: string;
  is_minting: boolean;
  image_url?: string;
  opensea_url: string;
  active_stage?: DropStageWire;
  next_stage?: DropStageWire;
}

export interface DropDetailedWire extends DropWire {
  stages: DropStageWire[];
  total_supply?: string;
  max_supply?: string;
}

export interface DropStageEligibilityWire {
  stage_uuid: string;
  is_eligible: boolean;
  price?: string;
  max_total_mintable_by_wallet?: string;
  max_total_mintable_by_wallet_per_token?: string;
}

export interface TraitWire {
  trait_type: string;
  value: string | number;
  display_type?: string;
}

export interface NftWire {
  identifier: string;
  collection: string;
  contract: string;
  token_standard: string;
  name?: string;
  description?: string;
  image_url?: string;
  display_image_url?: string;
  metadata_url?: string;
  opensea_url: string;
  updated_at: string;
  is_disabled: boolean;
  is_nsfw: boolean;
  traits: TraitWire[];
  estimated_value_usd?: number;
}

export interface PriceWire {
  currency: string;
  decimals: number;
  value: string;
}

export interface OrderItemWire {
  itemType: number;
  token: string;
  identifierOrCriteria: string;
  startAmount: string;
  endAmount: string;
}

export interface ConsiderationItemWire extends OrderItemWire {
  recipient: string;
}

export interface ProtocolDataWire {
  parameters: {
    offerer: string;
    offer: OrderItemWire[];
    consideration: ConsiderationItemWire[];
    startTime: string;
    endTime: string;
    orderType: number;
    zone: string;
    zoneHash: string;
    salt: string;
    conduitKey: string;
    totalOriginalConsiderationItems: number;
    counter: number;
  };
  signature?: string;
}

export type OrderStatus = "ACTIVE" | "INACTIVE" | "FULFILLED" | "EXPIRED" | "CANCELLED";

export interface OfferWire {
  order_hash: string;
  chain: string;
  protocol_data: ProtocolDataWire;
  protocol_address: string;
  asset?: { identifier?: string; contract: string };
  remaining_quantity: number;
  order_created_at?: number;
  criteria?: {
    collection?: { slug: string };
    contract?: { address: string };
    traits?: { type: string; value: string }[];
  };
  price: PriceWire;
  status: OrderStatus;
}

export interface ListingWire {
  order_hash: string;
  chain: string;
  type: string;
  protocol_data: ProtocolDataWire;
  protocol_address: string;
  asset?: { identifier?: string; contract: string };
  remaining_quantity: number;
  order_created_at?: number;
  price: { current: PriceWire };
  status: OrderStatus;
}

export interface PaymentTokenWire {
  symbol: string;
  address: string;
  chain: string;
  image: string;
  name: string;
  decimals: number;
  eth_price: string;
  usd_price: string;
}

export interface CollectionWire {
  collection: string;
  name: string;
  description?: string;
  image_url?: string;
  banner_image_url?: string;
  owner?: string;
  safelist_status: string;
  category?: string;
  is_disabled: boolean;
  is_nsfw: boolean;
  trait_offers_enabled: boolean;
  collection_offers_enabled: boolean;
  opensea_url: string;
  project_url?: string;
  twitter_username?: string;
  contracts: { address: string; chain: string }[];
  editors: string[];
  fees: { fee: number; recipient: string; required: boolean }[];
  total_supply: number;
  unique_item_count: number;
  created_date: string;
  pricing_currencies: { listing_currency: PaymentTokenWire; offer_currency: PaymentTokenWire };
}

export interface CollectionStatsWire {
  total: {
    volume: number;
    volume_symbol: string;
    sales: number;
    num_owners: number;
    floor_price: number;
    floor_price_symbol: string;
  };
  intervals: { interval: string; volume: number; volume_symbol: string; sales: number }[];
}

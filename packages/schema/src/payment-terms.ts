/**
 * What a paid route costs and how it is paid: the payment terms of the deployment and the x402 `accepts` entry of
 * each price point. The OpenAPI document, the 402 answers, the payment catalog and the tool manifests all quote
 * these, so they agree field for field.
 */
import type { ToolRoute } from "./paid-routes.js";
import { clearanceWording, type PricePoint, pricePoints } from "./pricing.js";
import type { PaymentRequirements } from "./x402.js";

/** Where and how the service is paid; the document's examples and `x-payment-info` are built from it. */
export interface PaymentTerms {
  /** CAIP-2 payment network, `eip155:<chainId>`. */
  network: string;
  asset: string;
  payTo: string;
  /** EIP-712 domain of the asset. */
  assetName: string;
  assetVersion: string;
  maxTimeoutSeconds: number;
  /**
   * The channel terms when the service also takes x402's `batch-settlement` scheme (a deposit once, then a signed
   * voucher per call; docs/channels.md); absent when it takes `exact` alone.
   */
  channel?: ChannelTerms;
  /**
   * The upto terms when the service also takes x402's `upto` scheme (a Permit2 authorization of up to the price,
   * settled for the work done; docs/api.md, "Prices by the work done"); absent when it does not.
   */
  upto?: UptoTerms;
}

/** x402's name of the channel scheme, as in `accepts[].scheme`. */
export const BATCH_SETTLEMENT_SCHEME = "batch-settlement";

/** What a payer's channel must name to pay this service: x402's `batch-settlement` `extra` fields. */
export interface ChannelTerms {
  /** The address whose EIP-712 signatures authorize claims and cooperative refunds of the service's channels. */
  receiverAuthorizer: string;
  /** Seconds between a payer's timed withdrawal and its end: the service's window to claim (900 to 2,592,000). */
  withdrawDelay: number;
  /** The smallest first deposit the service asks, in the asset's base units (x402's `extra.minDeposit`). */
  minDeposit?: string;
}

/** x402's name of the scheme that signs a ceiling and settles less, as in `accepts[].scheme`. */
export const UPTO_SCHEME = "upto";

/** What a payer's `upto` authorization must name to pay this service: x402's `upto` `extra` fields. */
export interface UptoTerms {
  /**
   * The address that settles the service's `upto` payments: the payer names it in its Permit2 witness
   * (`witness.facilitator`), and x402's upto proxy lets no one else settle the authorization.
   */
  facilitatorAddress: string;
}

/** Builds one `accepts` entry for a price point of a route. */
export function paymentRequirementsFor(terms: PaymentTerms, amount: string, description: string): PaymentRequirements {
  return {
    scheme: "exact",
    network: terms.network,
    asset: terms.asset,
    currency: terms.asset,
    amount,
    payTo: terms.payTo,
    recipient: terms.payTo,
    maxTimeoutSeconds: terms.maxTimeoutSeconds,
    mimeType: "application/json",
    description,
    extra: { name: terms.assetName, version: terms.assetVersion },
  };
}

/**
 * The `batch-settlement` entry beside an `exact` one: the same price, asset and payee, with the channel terms in
 * `extra` (x402's `specs/schemes/batch-settlement/scheme_batch_settlement_evm.md`, "402 Response").
 */
export function channelRequirementsFor(exact: PaymentRequirements, channel: ChannelTerms): PaymentRequirements {
  return {
    ...exact,
    scheme: BATCH_SETTLEMENT_SCHEME,
    extra: {
      ...exact.extra,
      receiverAuthorizer: channel.receiverAuthorizer,
      withdrawDelay: channel.withdrawDelay,
      ...(channel.minDeposit ? { minDeposit: channel.minDeposit } : {}),
    },
  };
}

/**
 * The `upto` entry beside an `exact` one: the same price (the most the call can be charged), asset and payee, with
 * the facilitator the payer's Permit2 witness must name in `extra` (x402's `specs/schemes/upto/scheme_upto_evm.md`,
 * "Facilitator Address Discovery").
 */
export function uptoRequirementsFor(exact: PaymentRequirements, upto: UptoTerms): PaymentRequirements {
  return {
    ...exact,
    scheme: UPTO_SCHEME,
    extra: { ...exact.extra, facilitatorAddress: upto.facilitatorAddress },
  };
}

/**
 * Every `accepts` entry of one price point of a route: `exact` first (what every x402 client pays), then
 * `batch-settlement` when the service takes channels, then `upto` when it takes that.
 */
export function routeAccepts(terms: PaymentTerms, route: ToolRoute, point: PricePoint): PaymentRequirements[] {
  const exact = routePaymentRequirements(terms, route, point);
  return [
    exact,
    ...(terms.channel ? [channelRequirementsFor(exact, terms.channel)] : []),
    ...(terms.upto ? [uptoRequirementsFor(exact, terms.upto)] : []),
  ];
}

/**
 * The `accepts` entry of one price point of a route, its description saying who the point is for. The OpenAPI
 * document, the payment catalog and the tool manifests all quote this, so they agree field for field.
 */
export function routePaymentRequirements(
  terms: PaymentTerms,
  route: ToolRoute,
  point: PricePoint,
): PaymentRequirements {
  const who =
    point === "standard" ? "standard price, any caller" : `price for ${clearanceWording[route.minimumClearance]}`;
  return paymentRequirementsFor(terms, pricePoints[point], `${route.summary}: ${who}`);
}

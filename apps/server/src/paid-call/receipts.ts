/**
 * x402's offer-receipt extension (`@x402/extensions/offer-receipt`), EIP-712 form, on the service's side: each 402
 * carries a signed offer of its price (what is sold, to whom it is paid, how much, until when), and each settled
 * call a signed receipt (who paid, for which resource, in which transaction). Both are signed by one key, named in
 * the payment catalog; a payer keeps them as proof (docs/decisions.md, "Receipts").
 */
import type { PaymentRequirements } from "@agent-tools/schema";
import type { SettleResponse } from "@x402/core/types";
import {
  createOfferEIP712,
  createReceiptEIP712,
  type EIP712SignedOffer,
  type EIP712SignedReceipt,
  OFFER_RECEIPT,
  type SignTypedDataFn,
} from "@x402/extensions/offer-receipt";
import type { Address, Hex } from "viem";
import { localAccount } from "../signatures/local-account.js";

/** How long a signed offer holds: prices change only with the configuration, so an hour. */
export const OFFER_VALIDITY_SECONDS = 3600;
/** An offer with less than this left is signed anew (the one in hand is still given meanwhile). */
const RENEW_BEFORE_SECONDS = 600;

export interface ReceiptIssuer {
  /** The address whose key signs offers and receipts. */
  signer: Address;
  /** Signs, ahead of the first 402, the offers of these requirements at these resources. */
  prepare(offers: { resourceUrl: string; requirements: PaymentRequirements; acceptIndex?: number }[]): Promise<void>;
  /**
   * What a 402 declares under `extensions["offer-receipt"]`: a signed offer for each of `accepts`, or nothing when
   * one is not signed yet (it is being signed for the next 402).
   */
  offersFor(resourceUrl: string, accepts: PaymentRequirements[]): Record<string, unknown>;
  /** The settlement with its signed receipt under `extensions["offer-receipt"]`. */
  withReceipt(settlement: SettleResponse, resourceUrl: string): Promise<SettleResponse>;
}

function offerKey(resourceUrl: string, r: PaymentRequirements): string {
  return [resourceUrl, r.scheme, r.network, r.asset, r.payTo, r.amount].join("|");
}

export function createReceiptIssuer(privateKey: Hex): ReceiptIssuer {
  const account = localAccount(privateKey);
  const signTypedData: SignTypedDataFn = (params) => account.signTypedData(params as never);
  const offers = new Map<string, EIP712SignedOffer>();
  const signing = new Map<string, Promise<void>>();

  const sign = (resourceUrl: string, requirements: PaymentRequirements, acceptIndex: number): Promise<void> => {
    const key = `${offerKey(resourceUrl, requirements)}|${acceptIndex}`;
    let pending = signing.get(key);
    if (!pending) {
      pending = createOfferEIP712(
        resourceUrl,
        {
          acceptIndex,
          scheme: requirements.scheme,
          network: requirements.network,
          asset: requirements.asset,
          payTo: requirements.payTo,
          amount: requirements.amount,
          offerValiditySeconds: OFFER_VALIDITY_SECONDS,
        },
        signTypedData,
      )
        .then((offer) => {
          offers.set(key, { ...offer, acceptIndex });
        })
        .finally(() => signing.delete(key));
      signing.set(key, pending);
    }
    return pending;
  };

  return {
    signer: account.address,
    async prepare(list) {
      await Promise.all(
        list.map(({ resourceUrl, requirements, acceptIndex }) => sign(resourceUrl, requirements, acceptIndex ?? 0)),
      );
    },
    offersFor(resourceUrl, accepts) {
      const now = Math.floor(Date.now() / 1000);
      const signed: EIP712SignedOffer[] = [];
      for (const [index, requirements] of accepts.entries()) {
        const offer = offers.get(`${offerKey(resourceUrl, requirements)}|${index}`);
        const left = offer ? offer.payload.validUntil - now : 0;
        if (left < RENEW_BEFORE_SECONDS) void sign(resourceUrl, requirements, index).catch(() => {});
        if (!offer || left <= 0) return {};
        signed.push(offer);
      }
      return { [OFFER_RECEIPT]: { info: { offers: signed } } };
    },
    async withReceipt(settlement, resourceUrl) {
      if (!settlement.payer) return settlement;
      const receipt: EIP712SignedReceipt = await createReceiptEIP712(
        {
          resourceUrl,
          payer: settlement.payer,
          network: settlement.network,
          transaction: settlement.transaction,
        },
        signTypedData,
      );
      return { ...settlement, extensions: { ...settlement.extensions, [OFFER_RECEIPT]: { info: { receipt } } } };
    },
  };
}

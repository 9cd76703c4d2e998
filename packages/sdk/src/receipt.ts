import {
  type PaymentRequired,
  type PaymentRequirements,
  type SignedOffer,
  type SignedReceipt,
  signedOfferSchema,
  signedReceiptSchema,
} from "@agent-tools/schema";
import {
  extractOffersFromPaymentRequired,
  OFFER_RECEIPT,
  verifyOfferSignatureEIP712,
  verifyReceiptSignatureEIP712,
} from "@x402/extensions/offer-receipt";
import { type Address, getAddress, isAddressEqual } from "viem";

/**
 * The service's signed word for a paid call (x402's offer-receipt extension, EIP-712): the offer of the price, as
 * the 402 carried it, and the receipt of the settled call. Both are checked by the client before it returns them.
 */
export interface PaymentReceipt {
  /** The receipt as signed: `{ format: "eip712", payload: { version, network, resourceUrl, payer, issuedAt, transaction }, signature }`. */
  receipt: SignedReceipt;
  /** The offer of the price that was paid, as signed (`payload.amount`, `payload.payTo`, `payload.asset`...), when the 402 carried one. */
  offer?: SignedOffer;
  /** The address that signed both, recovered from the signatures. */
  signer: Address;
}

/** What a receipt must say to be the receipt of this call. */
export interface ExpectedReceipt {
  /** The 402 the payment answered: its resource and, when present, its signed offer. */
  quote: PaymentRequired;
  /** The requirement that was paid. */
  requirement: PaymentRequirements;
  /** The settlement the answer came with. */
  settlement: { transaction: string; network: string };
  /** The paying account. */
  payer: string;
  /** The signer the caller trusts (the catalog's `receiptSigner`); without it, the offer's signer must sign the receipt. */
  signer?: string;
}

/**
 * The receipt under `extensions["offer-receipt"]` of a settlement, checked: signed (EIP-712) by the offer's signer
 * (or the one the caller trusts), naming this payer, this resource, this network and this transaction; the offer,
 * when present, signed by the same key for this price. Undefined when the service sent none; a string saying what
 * does not hold otherwise.
 */
export async function checkReceipt(
  settlement: { extensions?: Record<string, unknown> },
  expected: ExpectedReceipt,
): Promise<PaymentReceipt | string | undefined> {
  const sent = (settlement.extensions?.[OFFER_RECEIPT] as { info?: { receipt?: unknown } } | undefined)?.info?.receipt;
  if (sent === undefined) return undefined;
  const parsed = signedReceiptSchema.safeParse(sent);
  if (!parsed.success) return "The service's receipt is not an EIP-712 receipt of x402's offer-receipt extension.";
  const carried = parsed.data;
  let signer: Address;
  try {
    signer = getAddress((await verifyReceiptSignatureEIP712(carried)).signer);
  } catch {
    return "The service's receipt has a signature that cannot be read.";
  }
  const { payload } = carried;
  const offer = extractOffersFromPaymentRequired(expected.quote as never)
    .map((each) => signedOfferSchema.safeParse(each))
    .find((each) => each.success)?.data;
  const problems: string[] = [];
  if (!isSameAddress(payload.payer, expected.payer)) problems.push(`it names payer ${payload.payer}`);
  if (payload.transaction !== expected.settlement.transaction)
    problems.push(`it names transaction ${payload.transaction}`);
  if (payload.network !== expected.settlement.network) problems.push(`it names network ${payload.network}`);
  if (payload.resourceUrl !== expected.quote.resource?.url) problems.push(`it names resource ${payload.resourceUrl}`);
  if (expected.signer && !isSameAddress(signer, expected.signer)) problems.push(`it is signed by ${signer}`);
  if (offer) {
    const { signer: offerSigner, payload: offered } = await verifyOfferSignatureEIP712(offer).catch(() => ({
      signer: undefined,
      payload: offer.payload,
    }));
    if (!offerSigner || !isSameAddress(offerSigner, signer)) problems.push("its signer did not sign the offer");
    if (offered.amount !== expected.requirement.amount || !isSameAddress(offered.payTo, expected.requirement.payTo)) {
      problems.push("the signed offer is not the price that was paid");
    }
  } else if (!expected.signer) {
    problems.push("no signed offer or trusted signer vouches for its signer");
  }
  if (problems.length > 0) return `The service's receipt does not hold: ${problems.join("; ")}.`;
  return { receipt: carried, ...(offer ? { offer } : {}), signer };
}

function isSameAddress(a: string, b: string): boolean {
  try {
    return isAddressEqual(getAddress(a), getAddress(b));
  } catch {
    return false;
  }
}

/**
 * ERC-8004's `proofOfPayment` of a feedback entry about the service, built from a paid call's payment: who paid,
 * whom, on which chain, in which transaction.
 * @example
 * import { proofOfPayment } from "@agent-tools/sdk";
 * const { payment } = await client.intel({ tokenId: 1 });
 * // { fromAddress, toAddress, chainId: "31338", txHash } for an ERC-8004 feedback file
 * if (payment) console.log(proofOfPayment(payment));
 */
export function proofOfPayment(payment: { payer: string; payTo: string; network: string; transaction: string }): {
  fromAddress: string;
  toAddress: string;
  chainId: string;
  txHash: string;
} {
  return {
    fromAddress: payment.payer,
    toAddress: payment.payTo,
    chainId: payment.network.split(":")[1] ?? payment.network,
    txHash: payment.transaction,
  };
}

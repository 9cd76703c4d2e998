import { type PaymentRequired, parsePaymentRefusal } from "@agent-tools/schema";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { appendPaymentIdentifierToExtensions, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import type { LocalAccount } from "viem";
import { unitsToUsd } from "./units.js";

export { unitsToUsd, usdToUnits } from "./units.js";

/** What a paid call cost, from the service's `PAYMENT-RESPONSE`. */
export interface Payment {
  /** Amount in the asset's smallest unit (6 decimals). */
  amount: string;
  /** The same in USD, for example "0.01". */
  amountUsd: string;
  asset: string;
  /** CAIP-2 payment network. */
  network: string;
  /** Settlement transaction hash. */
  transaction: string;
  payer: string;
}

/** Signs an x402 v2 `exact` payment of the quote's first requirement, allowing exactly that asset up to `cap`. */
export async function signPayment(account: LocalAccount, quote: PaymentRequired, cap: bigint): Promise<string> {
  return encodePaymentSignatureHeader(await createPayment(account, quote, cap));
}

/**
 * The x402 `PaymentPayload` {@link signPayment} encodes: what an MCP call carries in `_meta["x402/payment"]`. When
 * the service declares x402's payment-identifier extension, the payment names a new identifier: sent again as it
 * is (a retry after the answer was lost), it gets the answer it paid for, and is not charged twice.
 */
export async function createPayment(
  account: LocalAccount,
  quote: PaymentRequired,
  cap: bigint,
): Promise<Awaited<ReturnType<x402Client["createPaymentPayload"]>>> {
  if (quote.extensions?.[PAYMENT_IDENTIFIER] !== undefined) {
    // A copy: the quote stays as the service sent it.
    const extensions = structuredClone(quote.extensions);
    appendPaymentIdentifierToExtensions(extensions);
    quote = { ...quote, extensions };
  }
  const requirement = quote.accepts[0]!;
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: toClientEvmSigner(account) });
  client.setSpendControls({
    allowedAssets: [
      {
        network: requirement.network as `${string}:${string}`,
        asset: requirement.asset,
        maxAmountPerPayment: cap.toString(),
      },
    ],
  });
  return client.createPaymentPayload(quote as never);
}

/**
 * How long to wait before each new ask while the service says a payment is in use: an earlier attempt of the same
 * call (its answer lost on the way) still holds it; once that attempt is over, the payment's identifier gets its
 * answer. About 16 s in all.
 */
export const PAYMENT_IN_USE_WAITS_MS = [250, 500, 1000, 2000, 4000, 4000, 4000] as const;

/**
 * Sends a paid request, and sends it again as it is while `refusalOf` its answer says the payment is in use (see
 * {@link PAYMENT_IN_USE_WAITS_MS}); the last answer.
 */
export async function whilePaymentInUse<T>(
  send: () => Promise<T>,
  refusalOf: (answer: T) => PaymentRequired | undefined,
): Promise<T> {
  let answer = await send();
  for (const wait of PAYMENT_IN_USE_WAITS_MS) {
    const refusal = refusalOf(answer);
    if (!refusal || parsePaymentRefusal(refusal.error).reason !== "payment_in_use") break;
    await new Promise((resolve) => setTimeout(resolve, wait));
    answer = await send();
  }
  return answer;
}

/** Reads the `PAYMENT-RESPONSE` header of a paid answer. */
export function readPayment(
  header: string | null,
  quoted: { amount: string; asset: string; network: string },
): Payment | null {
  if (!header) return null;
  const settlement = decodePaymentResponseHeader(header);
  return {
    amount: settlement.amount ?? quoted.amount,
    amountUsd: unitsToUsd(settlement.amount ?? quoted.amount),
    asset: quoted.asset,
    network: settlement.network,
    transaction: settlement.transaction,
    payer: settlement.payer ?? "",
  };
}

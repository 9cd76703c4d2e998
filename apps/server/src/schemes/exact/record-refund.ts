/**
 * Refunds as entries of the ledger (docs/decisions.md, "Refunds"). The service never gives money back by itself: the
 * operator sends the payment asset from the payee (`PAY_TO`) back to the payer with a wallet of their own, then names
 * the payment and that transaction. The refund is booked only as the chain shows it: a successful transaction, mined
 * after the payment's settlement, with a `Transfer(payTo, payer, amount)` log of the payment asset not booked before;
 * the amount is the log's, and the payment's refunds never add up to more than it paid.
 */
import type { Logger } from "pino";
import type { Address, Hash, Log, PublicClient, TransactionReceipt } from "viem";
import { getAddress, parseEventLogs } from "viem";
import type { RefundTransfer, SettledRow, SettlementLedger } from "../../store/settlement-ledger.js";
import { settlementEventsAbi } from "./chain-settlements.js";
import { eip3009PaymentKey } from "./payment-payload.js";

/** Why a refund was not booked: an error code of the service's (`errorCodes` in the schema). */
export const RefundRefusalCode = {
  /** No settled payment of this payer with this nonce, in the asset and network the service is paid in. */
  paymentNotFound: "payment_not_found",
  /** The payment chain knows no mined transaction with this hash. */
  transactionNotFound: "refund_transaction_not_found",
  /** The transaction was mined and reverted. */
  transactionFailed: "refund_transaction_failed",
  /** It moved none of the payment asset from the payee to the payer after the payment. */
  transferNotFound: "refund_transfer_not_found",
  /** Its transfer is more than what is left of the payment to give back. */
  exceedsPayment: "refund_exceeds_payment",
  /** Its transfers are booked as refunds of other payments. */
  taken: "refund_taken",
  /** The payment chain did not answer. */
  chainUnavailable: "upstream_unavailable",
} as const;
export type RefundRefusalCode = (typeof RefundRefusalCode)[keyof typeof RefundRefusalCode];

/** A refund not booked: the code, a sentence for the operator, and the field of the request it is about. */
export class RefundRefusal extends Error {
  constructor(
    readonly code: RefundRefusalCode,
    message: string,
    readonly field?: "payer" | "nonce" | "transaction",
  ) {
    super(message);
    this.name = "RefundRefusal";
  }
}

export interface RecordRefundParameters {
  payer: string;
  nonce: string;
  transaction: string;
  note?: string | undefined;
}

export interface RecordRefundReturnType {
  /** False when this transaction was already booked as this payment's refund (the request repeated). */
  created: boolean;
  refund: SettledRow;
  /** What the payment paid, what its refunds gave back (this one included), and what is left. */
  payment: { amount: bigint; refunded: bigint; remaining: bigint };
}

export interface RefundRecorderDeps {
  ledger: SettlementLedger;
  /** The payment chain. */
  client: PublicClient;
  /** The network and asset the service is paid in. */
  network: string;
  asset: string;
  /** Where a chain's failure is told in full (the operator is told only that it did not answer). */
  logger?: Logger;
}

export type RecordRefund = (parameters: RecordRefundParameters) => Promise<RecordRefundReturnType>;

/** A receipt, or the refusal that says why there is none. */
async function receiptOf(client: PublicClient, hash: string, field?: "transaction"): Promise<TransactionReceipt> {
  try {
    return await client.getTransactionReceipt({ hash: hash as Hash });
  } catch (error) {
    // By name: the client may come from another copy of viem than this module's (a test's in-process chain).
    if ((error as Error | undefined)?.name === "TransactionReceiptNotFoundError") {
      throw new RefundRefusal(
        RefundRefusalCode.transactionNotFound,
        `Transaction ${hash} is not mined on the payment chain (yet): send the refund, wait for it, then record it.`,
        field,
      );
    }
    throw error;
  }
}

/** The transfers of `asset` from `from` to `to` among a receipt's logs, in log order. */
function transfersIn(receipt: TransactionReceipt, asset: Address, from: Address, to: Address): RefundTransfer[] {
  const logs = receipt.logs.filter((log) => getAddress(log.address) === asset) as Log[];
  return parseEventLogs({ abi: settlementEventsAbi, logs, eventName: "Transfer", strict: false })
    .filter(
      (event) =>
        event.args.from !== undefined &&
        getAddress(event.args.from) === from &&
        event.args.to !== undefined &&
        getAddress(event.args.to) === to &&
        (event.args.value ?? 0n) > 0n,
    )
    .map((event) => ({ logIndex: event.logIndex ?? 0, amount: event.args.value! }));
}

/** Whether transaction `a` comes after transaction `b` on the chain. */
const minedAfter = (a: TransactionReceipt, b: TransactionReceipt) =>
  a.blockNumber > b.blockNumber || (a.blockNumber === b.blockNumber && a.transactionIndex > b.transactionIndex);

export function createRefundRecorder(deps: RefundRecorderDeps): RecordRefund {
  const { ledger, client } = deps;
  const unavailable = (error: unknown) => {
    deps.logger?.warn({ err: error }, "refund: the payment chain did not answer");
    return new RefundRefusal(RefundRefusalCode.chainUnavailable, "The payment chain did not answer; try again.");
  };
  return async ({ payer, nonce, transaction, note }) => {
    const paymentKey = eip3009PaymentKey(deps.network, deps.asset, payer, nonce);
    const payment = await ledger.settledPayment(paymentKey);
    if (!payment) {
      throw new RefundRefusal(
        RefundRefusalCode.paymentNotFound,
        `No settled payment of ${getAddress(payer)} with nonce ${nonce}: name a payment as its ledger entry does ` +
          "(payer and nonce).",
        "nonce",
      );
    }
    let refundReceipt: TransactionReceipt;
    let settlementReceipt: TransactionReceipt;
    try {
      [refundReceipt, settlementReceipt] = await Promise.all([
        receiptOf(client, transaction, "transaction"),
        receiptOf(client, payment.transaction),
      ]);
    } catch (error) {
      if (error instanceof RefundRefusal && error.field === "transaction") throw error;
      throw unavailable(error);
    }
    if (refundReceipt.status !== "success") {
      throw new RefundRefusal(
        RefundRefusalCode.transactionFailed,
        `Transaction ${transaction} reverted: it gave nothing back.`,
        "transaction",
      );
    }
    const payTo = getAddress(payment.payTo);
    const payerAddress = getAddress(payment.payer);
    const transfers = minedAfter(refundReceipt, settlementReceipt)
      ? transfersIn(refundReceipt, getAddress(payment.asset), payTo, payerAddress)
      : [];
    if (transfers.length === 0) {
      throw new RefundRefusal(
        RefundRefusalCode.transferNotFound,
        `Transaction ${transaction} moves none of the payment asset from the payee ${payTo} to the payer ` +
          `${payerAddress} after the payment's settlement.`,
        "transaction",
      );
    }
    let refundedAt: Date;
    try {
      const block = await client.getBlock({ blockNumber: refundReceipt.blockNumber });
      refundedAt = new Date(Number(block.timestamp) * 1000);
    } catch (error) {
      throw unavailable(error);
    }
    const amount = BigInt(payment.amount);
    const booked = await ledger.recordRefund({
      paymentKey,
      paid: amount,
      transaction: refundReceipt.transactionHash,
      transfers,
      refundedAt,
      note: note ?? null,
    });
    switch (booked.outcome) {
      case "taken":
        throw new RefundRefusal(
          RefundRefusalCode.taken,
          `The transfers of transaction ${transaction} to ${payerAddress} are booked as refunds of other payments.`,
          "transaction",
        );
      case "exceeds":
        throw new RefundRefusal(
          RefundRefusalCode.exceedsPayment,
          `Transaction ${transaction} gives back ${booked.amount} units; ${booked.remaining} of the payment's ` +
            `${amount} are left to give back.`,
          "transaction",
        );
      default:
        return {
          created: booked.outcome === "recorded",
          refund: booked.refund,
          payment: { amount, refunded: booked.refunded, remaining: amount - booked.refunded },
        };
    }
  };
}

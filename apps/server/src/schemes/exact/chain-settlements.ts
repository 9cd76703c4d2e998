/**
 * What counts as a settlement on the payment chain, wherever one is read from it (the built-in facilitator's receipt,
 * the reconciler): a successful transaction with `AuthorizationUsed(payer, nonce)` and, in the log right after it,
 * `Transfer(payer, payTo, price)`, as EIP-3009 tokens (USDC's FiatToken, OpenZeppelin's ERC3009) emit them. Anything
 * else that used the authorization paid nothing (docs/threat-model.md, "Settlements").
 */
import { type Address, type Hex, type Log, parseEventLogs, type TransactionReceipt } from "viem";

/** The events of an EIP-3009 token that a settlement is read from. */
export const settlementEventsAbi = [
  {
    type: "event",
    name: "AuthorizationUsed",
    inputs: [
      { name: "authorizer", type: "address", indexed: true },
      { name: "nonce", type: "bytes32", indexed: true },
    ],
  },
  {
    type: "event",
    name: "Transfer",
    inputs: [
      { name: "from", type: "address", indexed: true },
      { name: "to", type: "address", indexed: true },
      { name: "value", type: "uint256", indexed: false },
    ],
  },
] as const;

/** The settlement a claimed payment is waiting for. */
export interface ExpectedSettlement {
  asset: Address;
  payer: Address;
  payTo: Address;
  /** The price, in the asset's smallest units. */
  amount: bigint;
  /** The EIP-3009 nonce of the payer's authorization. */
  nonce: Hex;
}

const decodeSettlementEvents = (logs: Log[]) => parseEventLogs({ abi: settlementEventsAbi, logs, strict: false });
type SettlementEvents = ReturnType<typeof decodeSettlementEvents>;

/**
 * The settlement events of `receipt` emitted by `asset`, decoded once per receipt: every call of a batch reads its
 * own settlement from the batch's one receipt.
 */
const decodedEvents = new WeakMap<object, Map<string, SettlementEvents>>();
function settlementEventsOf(receipt: Pick<TransactionReceipt, "logs">, asset: string): SettlementEvents {
  let byAsset = decodedEvents.get(receipt);
  if (!byAsset) {
    byAsset = new Map();
    decodedEvents.set(receipt, byAsset);
  }
  let events = byAsset.get(asset);
  if (!events) {
    events = decodeSettlementEvents(receipt.logs.filter((log) => log.address.toLowerCase() === asset) as Log[]);
    byAsset.set(asset, events);
  }
  return events;
}

/** Whether `receipt` is a settlement of `expected` (see the module's comment). */
export function isCountingSettlement(
  receipt: Pick<TransactionReceipt, "status" | "logs">,
  expected: ExpectedSettlement,
): boolean {
  if (receipt.status !== "success") return false;
  // Addresses compare in lower case: the same address, without a checksum to compute per comparison.
  const events = settlementEventsOf(receipt, expected.asset.toLowerCase());
  const payer = expected.payer.toLowerCase();
  const payTo = expected.payTo.toLowerCase();
  const nonce = expected.nonce.toLowerCase();
  return events.some((used, i) => {
    if (used.eventName !== "AuthorizationUsed") return false;
    if (used.args.authorizer?.toLowerCase() !== payer) return false;
    if (used.args.nonce?.toLowerCase() !== nonce) return false;
    const next = events[i + 1];
    return (
      next?.eventName === "Transfer" &&
      next.logIndex === (used.logIndex ?? -2) + 1 &&
      next.args.from?.toLowerCase() === payer &&
      next.args.to?.toLowerCase() === payTo &&
      next.args.value === expected.amount
    );
  });
}

/**
 * Sends the facilitator's transactions without waiting on one another: each is signed here with a nonce assigned here,
 * from the next key of the pool in turn, and handed to the node in one round trip, nothing else asked of the chain per
 * transaction. A send that fails resynchronizes its key's nonce and, unless the chain took the transaction all the
 * same, is tried once more (docs/architecture.md, "Settlement").
 */
import { type Address, type Hash, type Hex, keccak256, type LocalAccount, type PublicClient } from "viem";

/** Gas limit of one settlement: an EIP-3009 `transferWithAuthorization` uses about 60-90k; the rest is not charged. */
export const SETTLEMENT_GAS = 150_000n;

export interface SettlementSenderOptions {
  /** The payment chain. */
  client: PublicClient;
  chainId: number;
  /** The facilitator's keys, used in turn; each must hold gas money on the payment chain. */
  accounts: LocalAccount[];
  gas?: bigint;
  /** How long a fee estimate is used before it is refreshed (in the background once one is known). */
  feesMaxAgeMs?: number;
  now?: () => number;
}

/** A transaction to send: its gas limit defaults to one settlement's. */
export interface OutgoingTransaction {
  to: Address;
  data: Hex;
  gas?: bigint;
  /**
   * The key to send it from, one of the pool's: for a transaction only one address may send (x402's upto proxy lets
   * only the facilitator its payer named settle). Default: the next key in turn.
   */
  from?: Address;
}

export interface SentTransaction {
  hash: Hash;
  from: Address;
  nonce: number;
}

export interface SettlementSender {
  /** Signs and sends a transaction from the next key (or `from`); resolves once the node accepted it. */
  send(transaction: OutgoingTransaction): Promise<SentTransaction>;
  /** The keys' addresses, in the order they are used. */
  readonly addresses: Address[];
}

type Fees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | { gasPrice: bigint };

interface Key {
  account: LocalAccount;
  /** The next nonce to assign; undefined until read from the chain (again after a failed send). */
  next: number | undefined;
  reading: Promise<void> | undefined;
}

export function createSettlementSender(options: SettlementSenderOptions): SettlementSender {
  const { client, chainId } = options;
  if (options.accounts.length === 0) throw new Error("the settlement sender needs at least one key");
  const gas = options.gas ?? SETTLEMENT_GAS;
  const feesMaxAgeMs = options.feesMaxAgeMs ?? 5000;
  const now = options.now ?? Date.now;
  const keys: Key[] = options.accounts.map((account) => ({ account, next: undefined, reading: undefined }));
  let turn = 0;
  let fees: { value: Fees; at: number } | undefined;
  let feesReading: Promise<Fees> | undefined;

  function readFees(): Promise<Fees> {
    feesReading ??= client
      .estimateFeesPerGas()
      .then((estimate): Fees => estimate as Fees)
      .catch(async (): Promise<Fees> => ({ gasPrice: await client.getGasPrice() }))
      .then((value) => {
        fees = { value, at: now() };
        return value;
      })
      .finally(() => {
        feesReading = undefined;
      });
    return feesReading;
  }

  /** Known fees at once (refreshed behind the scenes when old); the first send waits for the first estimate. */
  async function currentFees(): Promise<Fees> {
    if (!fees) return readFees();
    if (now() - fees.at > feesMaxAgeMs) void readFees().catch(() => undefined);
    return fees.value;
  }

  async function takeNonce(key: Key): Promise<number> {
    while (key.next === undefined) {
      key.reading ??= client
        .getTransactionCount({ address: key.account.address, blockTag: "pending" })
        .then((count) => {
          key.next = count;
        })
        .finally(() => {
          key.reading = undefined;
        });
      await key.reading;
    }
    return key.next++;
  }

  async function sign(
    key: Key,
    transaction: OutgoingTransaction,
  ): Promise<{ serializedTransaction: Hex; nonce: number }> {
    const [nonce, fee] = await Promise.all([takeNonce(key), currentFees()]);
    const serializedTransaction = await key.account.signTransaction!({
      chainId,
      nonce,
      to: transaction.to,
      data: transaction.data,
      gas: transaction.gas ?? gas,
      value: 0n,
      ...("gasPrice" in fee
        ? { type: "legacy" as const, gasPrice: fee.gasPrice }
        : { type: "eip1559" as const, ...fee }),
    });
    return { serializedTransaction, nonce };
  }

  function keyOf(address: Address): Key {
    const key = keys.find((k) => k.account.address.toLowerCase() === address.toLowerCase());
    if (!key) throw new Error(`${address} is not one of the settlement sender's keys`);
    return key;
  }

  async function sendFrom(key: Key, transaction: OutgoingTransaction): Promise<SentTransaction> {
    const { serializedTransaction, nonce } = await sign(key, transaction);
    const hash = await client.sendRawTransaction({ serializedTransaction });
    return { hash, from: key.account.address, nonce };
  }

  return {
    addresses: keys.map((key) => key.account.address),
    async send(transaction) {
      const key = transaction.from ? keyOf(transaction.from) : keys[turn++ % keys.length]!;
      const { serializedTransaction, nonce } = await sign(key, transaction);
      const hash = keccak256(serializedTransaction);
      try {
        await client.sendRawTransaction({ serializedTransaction });
        return { hash, from: key.account.address, nonce };
      } catch {
        key.next = undefined;
        // A node may answer an error for a transaction it took all the same (one that reverted, on a chain that
        // mines as transactions arrive): a transaction the chain knows is never sent again, so a revert costs its
        // gas once (docs/threat-model.md, "The facilitator's gas").
        const known = await client.getTransaction({ hash }).catch(() => undefined);
        if (known) return { hash, from: key.account.address, nonce };
        // Not taken: the nonce is unused (or the key was used elsewhere). The key's next nonce is read from the
        // chain again, so the next send fills the gap, and the transaction is tried once more with it.
        return sendFrom(key, transaction);
      }
    },
  };
}

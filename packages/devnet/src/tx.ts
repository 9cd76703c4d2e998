/**
 * Sends the seeding transactions: signed locally with a devnet key (so any JSON-RPC node will do, unlocked
 * accounts or not), explicit nonce, fees and gas (no estimation round-trips), one receipt read per transaction.
 */
import {
  type Address,
  type Client,
  type Hex,
  numberToHex,
  type PrivateKeyAccount,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  getBlock,
  getChainId,
  getGasPrice,
  getTransactionCount,
  getTransactionReceipt,
  sendRawTransaction,
  waitForTransactionReceipt,
} from "viem/actions";
import { SEED_TX_GAS } from "./constants.js";

/** A JSON-RPC method the typed viem request function does not know (hardhat_*, evm_*). */
export async function rpc(client: Client, method: string, params: unknown[] = []): Promise<unknown> {
  const request = client.request as (args: { method: string; params: unknown[] }) => Promise<unknown>;
  return await request({ method, params });
}

export async function setCode(client: Client, address: Address, code: Hex): Promise<void> {
  await rpc(client, "hardhat_setCode", [address, code]);
}

/** Mines `count` empty blocks `intervalSeconds` apart (`hardhat_mine`, one call whatever the count). */
export async function mineBlocks(client: Client, count: number, intervalSeconds: number): Promise<void> {
  if (count <= 0) return;
  await rpc(client, "hardhat_mine", [numberToHex(count), numberToHex(intervalSeconds)]);
}

export interface TxRequest {
  /** Absent for a contract creation. */
  to?: Address;
  data: Hex;
  /** Default {@link SEED_TX_GAS}. */
  gas?: bigint;
}

type Fees =
  | { type: "eip1559"; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }
  | { type: "legacy"; gasPrice: bigint };

export class Sender {
  readonly address: Address;
  #nonce: number;

  private constructor(
    private readonly client: Client,
    private readonly account: PrivateKeyAccount,
    readonly chainId: number,
    nonce: number,
    private readonly fees: Fees,
    private readonly context: string,
  ) {
    this.address = account.address;
    this.#nonce = nonce;
  }

  /** `context` prefixes error messages ("seeding L1"). */
  static async create(client: Client, privateKey: Hex, context: string): Promise<Sender> {
    const account = privateKeyToAccount(privateKey);
    const [chainId, nonce, block] = await Promise.all([
      getChainId(client),
      getTransactionCount(client, { address: account.address, blockTag: "pending" }),
      getBlock(client, { blockTag: "latest" }),
    ]);
    // The seeding keeps every block below half the gas limit, so the base fee only falls while it runs.
    const fees: Fees =
      block.baseFeePerGas === null
        ? { type: "legacy", gasPrice: (await getGasPrice(client)) * 2n }
        : { type: "eip1559", maxFeePerGas: block.baseFeePerGas * 2n + 1_000_000_000n, maxPriorityFeePerGas: 0n };
    return new Sender(client, account, chainId, nonce, fees, context);
  }

  /** Nonce of the next transaction. */
  get nonce(): number {
    return this.#nonce;
  }

  /** Signs, sends and waits for one transaction; throws (naming `label`) unless it succeeded. */
  async send(label: string, tx: TxRequest): Promise<TransactionReceipt> {
    return await this.#submit(label, await this.#sign(label, tx));
  }

  /**
   * Sends transactions one after the other (each mined before the next is sent), encoding and signing the next
   * one while the node executes the current one. Each is confirmed by the block it is in, not by its receipt: a
   * seeding batch's receipt carries hundreds of logs, and reading them took a third of the seeding's time. A node
   * that mines a failing transaction without refusing it (EDR refuses it) is caught by the caller's check of what
   * the transactions made.
   */
  async sendAll(jobs: readonly { label: string; tx: () => TxRequest }[]): Promise<void> {
    let pending: Promise<void> | undefined;
    for (const job of jobs) {
      const signed = await this.#sign(job.label, job.tx());
      if (pending) await pending;
      pending = this.#submitMined(job.label, signed);
      // Keep an early failure from surfacing as an unhandled rejection while the next job is signed.
      pending.catch(() => {});
    }
    if (pending) await pending;
  }

  async #sign(label: string, tx: TxRequest): Promise<Hex> {
    const nonce = this.#nonce++;
    try {
      return await this.account.signTransaction({
        chainId: this.chainId,
        nonce,
        gas: tx.gas ?? SEED_TX_GAS,
        to: tx.to ?? null,
        data: tx.data,
        ...this.fees,
      });
    } catch (error) {
      throw new Error(`${this.context}: ${label} failed: ${errorMessage(error)}`, { cause: error });
    }
  }

  /** Sends a signed transaction; resolves once it is in a block, its receipt not read (see sendAll). */
  async #submitMined(label: string, serializedTransaction: Hex): Promise<void> {
    const hash = await this.#broadcast(label, serializedTransaction);
    const mined = (await rpc(this.client, "eth_getTransactionByHash", [hash])) as { blockNumber: Hex | null } | null;
    if (!mined?.blockNumber) await this.#receipt(label, hash);
  }

  async #submit(label: string, serializedTransaction: Hex): Promise<TransactionReceipt> {
    return await this.#receipt(label, await this.#broadcast(label, serializedTransaction));
  }

  async #broadcast(label: string, serializedTransaction: Hex): Promise<Hex> {
    try {
      return await sendRawTransaction(this.client, { serializedTransaction });
    } catch (error) {
      throw new Error(`${this.context}: ${label} failed: ${errorMessage(error)}`, { cause: error });
    }
  }

  /** The transaction's receipt, waited for if the node does not mine on send; throws unless it succeeded. */
  async #receipt(label: string, hash: Hex): Promise<TransactionReceipt> {
    let receipt: TransactionReceipt;
    try {
      receipt = await getTransactionReceipt(this.client, { hash });
    } catch (error) {
      if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
      // Not an automining node: wait for the block.
      receipt = await waitForTransactionReceipt(this.client, { hash, pollingInterval: 100, timeout: 120_000 });
    }
    if (receipt.status !== "success") {
      throw new Error(`${this.context}: ${label} reverted (transaction ${hash}, block ${receipt.blockNumber})`);
    }
    return receipt;
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const short = (error as { shortMessage?: unknown }).shortMessage;
    const details = (error as { details?: unknown }).details;
    if (typeof short === "string") return typeof details === "string" && details ? `${short} (${details})` : short;
    return error.message;
  }
  return String(error);
}

/** Splits `1..total` into `[first, count]` batches of at most `size`. */
export function batches(first: number, total: number, size: number): [number, number][] {
  const out: [number, number][] = [];
  for (let start = first; start < first + total; start += size) {
    out.push([start, Math.min(size, first + total - start)]);
  }
  return out;
}

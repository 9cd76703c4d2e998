/**
 * Paid calls over x402 `batch-settlement` channels. Each payer opens its channels with x402's own channel client on
 * `@x402/fetch` (a deposit with the first call); the run's vouchers are then pre-signed (x402's `signVoucher`), and
 * each request takes the next voucher of a channel with no call in flight, which its answer frees. What the channels
 * cost on chain is read from the receipts of every transaction to the channel contract while they were used: the
 * deposits, and the claims and sweeps the service sent once the calls were answered.
 */
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme, computeChannelId, signVoucher } from "@x402/evm/batch-settlement/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { createPublicClient, type Hash, type Hex, http, parseAbi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type LoadResult, load, type ServerCpu } from "./load.js";
import { challenge } from "./payments.js";

const CHANNEL_CONTRACT = "0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003";
const CHANNELS_ABI = parseAbi([
  "function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)",
  "function receivers(address receiver, address token) view returns (uint128 totalClaimed, uint128 totalSettled)",
]);

export interface OpenedChannel {
  id: Hex;
  /** The payment (x402 envelope) of the channel's next voucher, numbered from 1 after the deposit's call. */
  voucher: (n: number) => Promise<string>;
  /** What the channel was charged once opened (its first call). */
  opened: bigint;
}

export interface ChannelSide {
  url: string;
  body: string;
  /** The payment chain's JSON-RPC. */
  rpcUrl: string;
  network: `${string}:${string}`;
  asset: string;
  privateKeys: `0x${string}`[];
  /** Devnet accounts that pay, and how many channels each opens (each its own salt). */
  payers: number[];
  channelsPerPayer: number;
  /** What each channel deposits, in prices (x402's `depositMultiplier`). */
  depositPrices: number;
  /** The salt of each payer's first channel (the next ones count up from it): other salts, other channels. */
  firstSalt?: number;
}

/** Opens each payer's channels: one paid call each through x402's client, which deposits. */
export async function openChannels(
  side: ChannelSide,
): Promise<{ channels: OpenedChannel[]; price: bigint; fromBlock: bigint }> {
  const client = createPublicClient({ transport: http(side.rpcUrl) });
  const fromBlock = await client.getBlockNumber();
  const required: PaymentRequired = await challenge(side.url, side.body);
  const accept = required.accepts.find((a) => a.scheme === "batch-settlement") as PaymentRequirements | undefined;
  if (!accept) throw new Error("the service offers no batch-settlement channel");
  const price = BigInt(accept.amount);
  const channels: OpenedChannel[] = [];
  for (const index of side.payers) {
    for (let c = 0; c < side.channelsPerPayer; c++) {
      const salt = `0x${((side.firstSalt ?? 1) + c).toString(16).padStart(64, "0")}` as Hex;
      const signer = toClientEvmSigner(privateKeyToAccount(side.privateKeys[index]!), client as never);
      const scheme = new BatchSettlementEvmScheme(signer, {
        salt,
        depositPolicy: { depositMultiplier: side.depositPrices },
      });
      const payer = new x402Client();
      payer.register(side.network, scheme);
      payer.setSpendControls({ allowedAssets: [{ network: side.network, asset: side.asset }] });
      const res = await wrapFetchWithPayment(fetch, payer)(side.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: side.body,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`opening a channel answered ${res.status}`);
      const settled = decodePaymentResponseHeader(res.headers.get("payment-response")!);
      const { channelState: state, chargedAmount } = settled.extra as {
        channelState: { chargedCumulativeAmount: string };
        chargedAmount: string;
      };
      // Each call of the same request is charged what the first was (its work, under the price as a ceiling): the
      // n-th voucher signs the n calls before it and one price on top.
      const charge = BigInt(chargedAmount);
      const config = scheme.buildChannelConfig(accept);
      const id = computeChannelId(config, side.network);
      const opened = BigInt(state.chargedCumulativeAmount);
      channels.push({
        id,
        opened,
        voucher: async (n) => {
          const cumulative = opened + BigInt(n - 1) * charge + price;
          const voucher = await signVoucher(signer, id, cumulative.toString(), side.network);
          const payment: PaymentPayload = {
            x402Version: 2,
            accepted: accept,
            resource: required.resource,
            payload: { type: "voucher", channelConfig: config, voucher },
          };
          return encodePaymentSignatureHeader(payment);
        },
      });
    }
  }
  return { channels, price, fromBlock };
}

export interface ChannelRun {
  result: LoadResult;
  failures: Record<string, number>;
}

/**
 * `count` paid calls over the channels, their vouchers signed beforehand; each request takes a channel with no call
 * in flight (`connections` at most are, so one is always free when the channels outnumber them).
 */
export async function channelCalls(
  side: ChannelSide,
  channels: OpenedChannel[],
  used: Map<Hex, number>,
  count: number,
  /** Each channel's charged total as its answers said it, updated as they come. */
  charged: Map<Hex, bigint>,
  options: { serverCpu?: ServerCpu; rate?: number; connections?: number },
): Promise<ChannelRun> {
  if ((options.connections ?? 10) >= channels.length) throw new Error("more channels than connections are needed");
  // Channels are taken in turn, so each is used about count / channels times; a margin for an uneven turn (a channel
  // whose call was refused is not put back, and the others take its share).
  const perChannel = Math.ceil((2 * count) / channels.length) + 2;
  const signed = new Map<Hex, string[]>();
  for (const channel of channels) {
    const id = channel.id.toLowerCase() as Hex;
    const from = used.get(id) ?? 0;
    const list: string[] = [];
    for (let n = from + 1; n <= from + perChannel; n++) list.push(await channel.voucher(n));
    signed.set(id, list);
  }
  const free: Hex[] = channels.map((channel) => channel.id.toLowerCase() as Hex);
  const failures: Record<string, number> = {};
  const take = (): Record<string, string> => {
    const id = free.shift() ?? (channels[0]!.id.toLowerCase() as Hex);
    const list = signed.get(id)!;
    const header = list.shift();
    if (header) used.set(id, (used.get(id) ?? 0) + 1);
    return { "payment-signature": header ?? "" };
  };
  const result = await load({
    url: side.url,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: side.body,
    expect: 200,
    amount: count,
    ...(options.connections ? { connections: options.connections } : {}),
    ...(options.rate ? { overallRate: options.rate } : {}),
    ...(options.serverCpu ? { serverCpu: options.serverCpu } : {}),
    perRequest: take,
    onAnswer: (status, headers, answer) => {
      const settlement = Object.entries(headers).find(([key]) => key.toLowerCase() === "payment-response")?.[1];
      if (status === 200 && typeof settlement === "string") {
        const { channelId, chargedCumulativeAmount } = (
          decodePaymentResponseHeader(settlement).extra as {
            channelState: { channelId: Hex; chargedCumulativeAmount: string };
          }
        ).channelState;
        const id = channelId.toLowerCase() as Hex;
        charged.set(id, BigInt(chargedCumulativeAmount));
        free.push(id);
        return;
      }
      const reason = `${status} ${/"error":"([a-z0-9_]+)/.exec(answer)?.[1] ?? "?"}`;
      failures[reason] = (failures[reason] ?? 0) + 1;
    },
  });
  return { result, failures };
}

/**
 * Waits until the contract records every channel claimed up to what was charged on it (the service claims on its
 * own, every CHANNEL_CLAIM_INTERVAL_MS), then adds up the gas of every transaction to the channel contract since
 * `fromBlock`: the deposits, claims and sweeps.
 */
export async function channelGas(
  rpcUrl: string,
  channels: OpenedChannel[],
  charged: Map<Hex, bigint>,
  fromBlock: bigint,
  payee: { payTo: `0x${string}`; asset: `0x${string}` },
): Promise<{ transactions: number; gas: bigint }> {
  const client = createPublicClient({ transport: http(rpcUrl, { batch: { batchSize: 100 } }), pollingInterval: 200 });
  const expected = new Map(channels.map((c) => [c.id, charged.get(c.id.toLowerCase() as Hex) ?? c.opened]));
  const claimed = async () => {
    const states = await Promise.all(
      channels.map((c) =>
        client.readContract({ address: CHANNEL_CONTRACT, abi: CHANNELS_ABI, functionName: "channels", args: [c.id] }),
      ),
    );
    if (!states.every(([, totalClaimed], i) => totalClaimed >= expected.get(channels[i]!.id)!)) return false;
    // The sweep follows the claims in the same pass: what was claimed for the payee is all settled.
    const [totalClaimed, totalSettled] = await client.readContract({
      address: CHANNEL_CONTRACT,
      abi: CHANNELS_ABI,
      functionName: "receivers",
      args: [payee.payTo, payee.asset],
    });
    return totalSettled === totalClaimed;
  };
  // The service's next claim pass: each new block is a moment it may have landed in.
  await new Promise<void>((resolve, reject) => {
    const stop = client.watchBlockNumber({
      emitOnBegin: true,
      onBlockNumber: () => {
        claimed().then(
          (done) => {
            if (!done) return;
            stop();
            resolve();
          },
          (error: unknown) => {
            stop();
            reject(error);
          },
        );
      },
    });
  });
  const logs = await client.getLogs({ address: CHANNEL_CONTRACT, fromBlock, toBlock: "latest" });
  const hashes = [...new Set(logs.map((log) => log.transactionHash))] as Hash[];
  const receipts = await Promise.all(hashes.map((hash) => client.getTransactionReceipt({ hash })));
  return { transactions: hashes.length, gas: receipts.reduce((sum, r) => sum + r.gasUsed, 0n) };
}

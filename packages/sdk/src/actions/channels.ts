import { inputToQuery, paidRoutes } from "@agent-tools/schema";
import { type ChannelSummary, channelSummary } from "../channels.js";
import type { ClientContext } from "../context.js";
import { ChannelError, NetworkError } from "../errors.js";
import { networkReason } from "../transport.js";

/** What {@link listChannels} resolves with: the client's channels, as their storage last recorded them. */
export type ListChannelsReturnType = ChannelSummary[];

/**
 * The client's payment channels: balance, charged, claimed and refundable, in units (6 decimals), as the service's
 * answers left them. Empty when the client pays over no channel.
 */
export async function listChannels(context: ClientContext): Promise<ListChannelsReturnType> {
  const payer = context.channels;
  if (!payer) return [];
  const summaries: ChannelSummary[] = [];
  for (const id of await payer.storage.list()) {
    const state = await payer.storage.get(id);
    if (state) summaries.push(channelSummary(id, state));
  }
  return summaries;
}

/** Parameters of {@link refundChannel}: an agent the refund is asked through, and how much (all that is left by default). */
export interface RefundChannelParameters {
  /** The refund is asked at `GET /intel?tokenId=…`, as a paid call of that route would be; any agent will do. */
  tokenId: number;
  /** In units (6 decimals); the whole refundable balance when left out. */
  amount?: bigint;
}

/** What {@link refundChannel} resolves with: the channel, what came back, and the refund's transaction. */
export interface RefundChannelReturnType {
  channelId: string;
  refunded: bigint;
  transaction: string;
}

/**
 * Takes back what is unspent on the client's channel with this service (x402's cooperative refund): the service
 * claims what it charged and sends the rest back to the payer in one transaction. Throws an `AgentToolsError`
 * (`ChannelError`) with the reason when the service refuses it (nothing left, a call in flight).
 */
export async function refundChannel(
  context: ClientContext,
  { tokenId, amount }: RefundChannelParameters,
): Promise<RefundChannelReturnType> {
  const payer = context.channels;
  if (!payer) throw new ChannelError("This client pays over no channel: pass the option `channels`.");
  const url = `${context.transport.baseUrl}${paidRoutes.intel.path}${inputToQuery({ tokenId })}`;
  let settled: Awaited<ReturnType<typeof payer.scheme.refund>>;
  try {
    settled = await payer.scheme.refund(url, {
      ...(amount !== undefined ? { amount: amount.toString() } : {}),
      fetch: context.transport.fetch,
    });
  } catch (error) {
    // fetch fails with a TypeError when no answer came at all: the service was not reached, nothing was refused.
    if (error instanceof TypeError) {
      throw new NetworkError(`Could not reach ${url}: ${networkReason(error)}.`, { cause: error });
    }
    throw new ChannelError(`The channel refund was refused: ${refundFailure(error)}`, { cause: error });
  }
  const state = (settled.extra as { channelState?: { channelId?: string } } | undefined)?.channelState;
  return {
    channelId: (state?.channelId ?? "").toLowerCase(),
    refunded: BigInt(settled.amount || "0"),
    transaction: settled.transaction,
  };
}

/** Why x402's channel client did not refund, in this client's words where it is one of the known cases. */
function refundFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/existing channel record/.test(message)) {
    return "this client holds no channel with this service (its storage has none): there is nothing to refund.";
  }
  if (/no remaining balance/.test(message)) return "everything in the channel was charged: nothing is left to refund.";
  return message;
}

/**
 * Payment channels, composed when the configuration offers them (docs/channels.md): the channel store, the scheme the
 * paid call takes vouchers with, the facilitator that carries deposits, claims, sweeps and refunds out on chain (the
 * built-in one, or the facilitators over HTTP), and the claimer that claims and sweeps in batches.
 */
import { BATCH_SETTLEMENT_ADDRESS } from "@agent-tools/contracts";
import {
  BATCH_SETTLEMENT_SCHEME,
  type ChannelTerms,
  channelRequirementsFor,
  paymentRequirementsFor,
} from "@agent-tools/schema";
import type { Logger } from "pino";
import type { PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Config } from "../config/config.js";
import { StartupError, shortReason } from "../errors/startup-error.js";
import type { PaymentScheme } from "../paid-call/payment-scheme.js";
import { type ChannelClaimer, createChannelClaimer } from "../schemes/batch-settlement/channel-claimer.js";
import { createChannelFacilitator } from "../schemes/batch-settlement/channel-facilitator.js";
import { createChannelScheme } from "../schemes/batch-settlement/channel-scheme.js";
import type { Facilitator } from "../settlement/facilitator.js";
import type { HttpFacilitator } from "../settlement/http-facilitators.js";
import type { ChannelStore } from "../store/channels.js";

/** What the service is composed with when it takes channels. */
export interface ChannelParts {
  terms: ChannelTerms;
  scheme: PaymentScheme;
  store: ChannelStore;
  claimer: ChannelClaimer;
}

/**
 * The channel contract must be on the payment chain at x402's address: a chain without it is refused at start, in
 * one line naming what to set, rather than found out by the first deposit.
 */
export async function checkChannelContract(config: Config, client: Pick<PublicClient, "getCode">): Promise<void> {
  if (!config.channels) return;
  let code: string | undefined;
  try {
    code = await client.getCode({ address: BATCH_SETTLEMENT_ADDRESS });
  } catch (error) {
    throw new StartupError("L2_RPC_URL", `the payment chain did not answer: ${shortReason(error)}`);
  }
  if (!code || code === "0x") {
    throw new StartupError(
      "CHANNELS",
      `no batch-settlement channel contract at ${BATCH_SETTLEMENT_ADDRESS} on ${config.payment.network}, which payment channels need: set CHANNELS=off to take exact payments only`,
    );
  }
}

/**
 * Channels over facilitators over HTTP need one of them to list x402 v2's `batch-settlement` on the payment network
 * (deposits, claims, sweeps and refunds go through it). When none does, the service takes `exact` alone and says so
 * once in its log: a configuration that worked before channels existed keeps working.
 */
export async function withChannelFacilitator(
  config: Config,
  facilitators: readonly HttpFacilitator[],
  logger?: Logger,
): Promise<Config> {
  if (!config.channels || facilitators.length === 0) return config;
  for (const facilitator of facilitators) {
    const supported = await facilitator.supported().catch(() => undefined);
    const lists = supported?.kinds.some(
      (kind) =>
        kind.x402Version === 2 && kind.scheme === BATCH_SETTLEMENT_SCHEME && kind.network === config.payment.network,
    );
    if (lists) return config;
  }
  logger?.warn(
    { network: config.payment.network },
    "no facilitator lists batch-settlement on the payment network: payment channels are off, exact payments only",
  );
  const { channels: _, ...withoutChannels } = config;
  return withoutChannels;
}

export function channelParts(
  config: Config,
  deps: {
    store: ChannelStore;
    /** The facilitators over HTTP (failover), when they settle instead of the built-in facilitator. */
    httpFacilitator?: Facilitator;
    chain: PublicClient;
    instance: string;
    logger?: Logger;
  },
): ChannelParts | undefined {
  const settings = config.channels;
  if (!settings) return undefined;
  const authorizer = privateKeyToAccount(settings.key);
  const terms: ChannelTerms = {
    receiverAuthorizer: authorizer.address,
    withdrawDelay: settings.withdrawDelaySeconds,
  };
  const facilitator =
    config.facilitator.kind === "local"
      ? createChannelFacilitator({ network: config.payment.network, chain: deps.chain, privateKey: settings.key })
      : deps.httpFacilitator;
  if (!facilitator) throw new Error("channels need a facilitator");
  const now = () => new Date();
  const scheme = createChannelScheme({ store: deps.store, facilitator, authorizer, holdMs: settings.holdMs, now });
  const claimer = createChannelClaimer({
    store: deps.store,
    facilitator,
    authorizer,
    requirements: channelRequirementsFor(
      paymentRequirementsFor(config.payment, "0", `${BATCH_SETTLEMENT_SCHEME} claims`),
      terms,
    ),
    chain: deps.chain,
    batchSize: settings.claimBatchSize,
    maxLogRange: BigInt(config.rpcMaxLogRange),
    intervalMs: settings.claimIntervalMs,
    instance: deps.instance,
    onWithdrawal: (channelId) => scheme.forget(channelId),
    holdMs: settings.holdMs,
    now,
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  return { terms, scheme, store: deps.store, claimer };
}

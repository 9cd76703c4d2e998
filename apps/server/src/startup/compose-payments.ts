/**
 * The payment collaborators of the service (docs/architecture.md, "Composition"): the facilitator the configuration
 * names (facilitators over HTTP with failover, checked at start, or the built-in one with keys of its own), the
 * payer limits and failure budget, the ledger and the sign-in nonces.
 */
import { type PaymentTerms, paidRoutes, routeAccepts } from "@agent-tools/schema";
import type { Logger } from "pino";
import { type Address, createPublicClient, erc20Abi, http, isAddressEqual, type PublicClient } from "viem";
import type { Config } from "../config/config.js";
import { ConfigError } from "../config/config-error.js";
import { StartupError, shortReason } from "../errors/startup-error.js";
import { createCallLimiter, type RateCounter } from "../limits/call-limiter.js";
import { createFailureBudget } from "../limits/failure-budget.js";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import { paidResourceUrl } from "../paid-call/challenge.js";
import type { PaymentService } from "../paid-call/payment-service.js";
import { createReceiptIssuer, type ReceiptIssuer } from "../paid-call/receipts.js";
import { createMemoryReplayGuard } from "../paid-call/replay-guard.js";
import { createAuthorizationSigner, type RecoverTypedDataSigner } from "../schemes/exact/authorization-signer.js";
import { createExactEvmFacilitator } from "../schemes/exact/exact-evm-facilitator.js";
import { createExactScheme } from "../schemes/exact/exact-scheme.js";
import { settlementMarginSeconds } from "../schemes/exact/payment-payload.js";
import { createUptoFacilitator } from "../schemes/upto/upto-facilitator.js";
import { createUptoScheme, UPTO } from "../schemes/upto/upto-scheme.js";
import { createBlockClock } from "../settlement/block-clock.js";
import { type Facilitator, facilitatorBySchemes } from "../settlement/facilitator.js";
import { createFailoverFacilitator, type HttpFacilitator, httpFacilitator } from "../settlement/http-facilitators.js";
import {
  createSettlementBatcher,
  createSettlementsAhead,
  MULTICALL3_ADDRESS,
} from "../settlement/settlement-batcher.js";
import { createSettlementSender } from "../settlement/settlement-sender.js";
import { localAccount } from "../signatures/local-account.js";
import type { SettlementLedger } from "../store/settlement-ledger.js";
import type { SignInNonceStore } from "../store/sign-in-nonces.js";
import type { ChannelParts } from "./compose-channels.js";
import type { UptoSettler } from "./compose-upto.js";
import { checkFacilitators } from "./startup-checks.js";

/** How long one request to a facilitator over HTTP may take (a settlement waits for its transaction). */
const FACILITATOR_TIMEOUT_MS = 60_000;

/** A client of the payment chain for the built-in facilitator: concurrent reads go out as one batch. */
export function paymentChainClient(url: string, timeoutMs: number): PublicClient {
  return createPublicClient({
    transport: http(url, { timeout: timeoutMs, retryCount: 2, retryDelay: 200, batch: true }),
    pollingInterval: 100,
  });
}

/**
 * The facilitators over HTTP of the configuration, in order, after the start-up check of their `/supported`
 * (startup-checks.ts); none when the built-in facilitator settles. Cheap: composeService asks it before anything
 * heavy is built, so that a facilitator that cannot serve is said at once.
 */
export async function checkedHttpFacilitators(config: Config, logger?: Logger): Promise<HttpFacilitator[]> {
  if (config.facilitator.kind !== "http") return [];
  const facilitators = await Promise.all(
    config.facilitator.endpoints.map((endpoint) => httpFacilitator(endpoint, FACILITATOR_TIMEOUT_MS)),
  );
  await checkFacilitators(facilitators, config.payment.network, logger);
  return facilitators;
}

/** The payment collaborators: the facilitator of the configuration, the ledger, in-memory replay guards. */
export async function paymentDeps(
  config: Config,
  l1ChainId: number,
  stores: { ledger: SettlementLedger; signIns: SignInNonceStore },
  options: {
    /** The payment chain for the built-in facilitator (default: `facilitator.rpcUrl`; tests pass an in-process one). */
    l2?: PublicClient;
    logger?: Logger;
    /** The payments' signature recovery (tests count it). */
    recoverSigner?: RecoverTypedDataSigner;
    /** Where the per-payer rate and failures are counted (default: in this process). */
    rates?: RateCounter;
    metrics?: ServiceMetrics;
    /** The facilitators over HTTP, checked already (default: built and checked here). */
    facilitators?: HttpFacilitator[];
    /** Payment channels, when the configuration offers them (./compose-channels.ts). */
    channels?: Pick<ChannelParts, "terms" | "scheme" | "store">;
    /** Who settles `upto` payments, when the service takes them (./compose-upto.ts). */
    upto?: UptoSettler;
  } = {},
): Promise<PaymentService> {
  let facilitator: Facilitator;
  let uptoFacilitator: Facilitator | undefined = options.upto?.kind === "http" ? options.upto.facilitator : undefined;
  const settlementsAhead = createSettlementsAhead();
  const marginSeconds = settlementMarginSeconds(settlementBatch(config)?.windowMs);
  // One recovery per payment: the paid-call core's check and the built-in facilitator's share it.
  const authorizationSigner = createAuthorizationSigner(options.recoverSigner);
  // The payment chain: the built-in facilitator's, or the L2 RPC beside an HTTP facilitator (for payer balances).
  const chain =
    options.l2 ??
    paymentChainClient(
      config.facilitator.kind === "local" ? config.facilitator.rpcUrl : config.l2.rpcUrl,
      config.rpcTimeoutMs,
    );
  if (config.facilitator.kind === "http") {
    const facilitators = options.facilitators ?? (await checkedHttpFacilitators(config, options.logger));
    facilitator = createFailoverFacilitator(facilitators, {
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.metrics
        ? {
            onFailover: (from, operation) =>
              options.metrics!.facilitatorFailovers.inc({ facilitator: from, operation }),
          }
        : {}),
    });
  } else {
    if (config.facilitator.privateKeys.length === 0) {
      throw new ConfigError([
        {
          variable: "FACILITATOR_URLS",
          message: "or FACILITATOR_PRIVATE_KEY must be set (or FACILITATOR_PRIVATE_KEYS) to verify and settle payments",
        },
      ]);
    }
    const client = chain;
    const chainId = Number(config.payment.network.split(":")[1]);
    const { batch } = config.facilitator;
    const metrics = options.metrics;
    const blockClock = createBlockClock(
      metrics
        ? {
            observer: {
              interval: (ms) => metrics.settlementBlockInterval.set(ms / 1000),
              missed: () => metrics.settlementBlocksMissed.inc(),
            },
          }
        : {},
    );
    const accounts = config.facilitator.privateKeys.map((key) => localAccount(key));
    // One sender for every transaction of the facilitator's keys: each key's nonces are counted in one place.
    const sender = createSettlementSender({ client, chainId, accounts });
    if (options.upto?.kind === "local") {
      uptoFacilitator = createUptoFacilitator({
        network: config.payment.network,
        chain: client,
        account: accounts.find((account) => isAddressEqual(account.address, options.upto!.facilitatorAddress))!,
        sender,
        receiptTimeoutMs: config.facilitator.receiptTimeoutMs,
      });
    }
    facilitator = createExactEvmFacilitator({
      client,
      sender: createSettlementBatcher({
        sender,
        multicall3: batch.contract ?? MULTICALL3_ADDRESS,
        maxSize: batch.maxSize,
        windowMs: batch.windowMs,
        ahead: settlementsAhead.count,
        clock: blockClock,
        ...(metrics ? { onBatch: (size: number) => metrics.settlementBatchSize.observe(size) } : {}),
      }),
      network: config.payment.network,
      receiptTimeoutMs: config.facilitator.receiptTimeoutMs,
      marginSeconds,
      blockClock,
      signer: authorizationSigner,
    });
  }
  const asset = config.payment.asset as Address;
  const terms: PaymentTerms = {
    ...config.payment,
    ...(options.channels ? { channel: options.channels.terms } : {}),
    ...(options.upto ? { upto: { facilitatorAddress: options.upto.facilitatorAddress } } : {}),
  };
  const receipts = config.receiptSignerKey ? await preparedReceiptIssuer(config, terms) : undefined;
  return {
    publicUrl: config.publicUrl,
    terms,
    // An `upto` payment goes to the facilitator its payer named; any other to the configuration's.
    facilitator: uptoFacilitator ? facilitatorBySchemes(facilitator, { [UPTO]: uptoFacilitator }) : facilitator,
    payerLimits: createCallLimiter(config.limits.perPayer, {
      name: "payer",
      ...(options.rates ? { rates: options.rates } : {}),
    }),
    schemes: {
      exact: createExactScheme({ signer: authorizationSigner, marginSeconds }),
      ...(options.channels ? { [options.channels.scheme.scheme]: options.channels.scheme } : {}),
      ...(options.upto
        ? { [UPTO]: createUptoScheme(options.recoverSigner ? { recover: options.recoverSigner } : {}) }
        : {}),
    },
    settlementFailures: createFailureBudget(
      { failures: config.limits.failedSettlementsPerHour, windowSeconds: 3600 },
      { name: "settlement_failures", ...(options.rates ? { rates: options.rates } : {}) },
    ),
    payerBalance: (payer) =>
      chain.readContract({ address: asset, abi: erc20Abi, functionName: "balanceOf", args: [payer] }),
    // Settled authorizations are kept well past their validity window (the ledger keeps them for good).
    payments: createMemoryReplayGuard(24 * 60 * 60 * 1000),
    ledger: stores.ledger,
    signIns: stores.signIns,
    signInChains: [...new Set([`eip155:${l1ChainId}`, config.payment.network])],
    anonymousAccess: config.anonymousAccess,
    settlementsAhead,
    ...(receipts ? { receipts } : {}),
    ...(options.channels ? { channels: options.channels.store } : {}),
    now: () => new Date(),
    ...(options.logger ? { logger: options.logger } : {}),
  };
}

/**
 * The built-in facilitator's batch settings when it sends settlements in batches; undefined when each goes alone
 * (facilitators over HTTP, a batch size of 1), and so waits for no batch.
 */
function settlementBatch(config: Config) {
  return config.facilitator.kind === "local" && config.facilitator.batch.maxSize > 1
    ? config.facilitator.batch
    : undefined;
}

/**
 * Batched settlements go through Multicall3: a payment chain without it at the address is refused at start, in one
 * line naming what to set, rather than found out by the first batch (docs/configuration.md). Cheap: composeService
 * asks it beside the facilitators' check, before anything heavy is built.
 */
export async function checkBatchContract(config: Config, client: Pick<PublicClient, "getCode">): Promise<void> {
  const batch = settlementBatch(config);
  if (!batch) return;
  const address = batch.contract ?? MULTICALL3_ADDRESS;
  let code: string | undefined;
  try {
    code = await client.getCode({ address });
  } catch (error) {
    throw new StartupError("L2_RPC_URL", `the payment chain did not answer: ${shortReason(error)}`);
  }
  if (!code || code === "0x") {
    throw new StartupError(
      "MULTICALL3_ADDRESS",
      `no Multicall3 contract at ${address} on ${config.payment.network}, which batched settlements need: set MULTICALL3_ADDRESS to one, or SETTLEMENT_BATCH_SIZE=1 to send each settlement alone`,
    );
  }
}

/** The offer and receipt signer, with the offer of every paid route's two prices signed, over HTTP and MCP. */
async function preparedReceiptIssuer(config: Config, terms: PaymentTerms): Promise<ReceiptIssuer> {
  const issuer = createReceiptIssuer(config.receiptSignerKey!);
  await issuer.prepare(
    Object.values(paidRoutes).flatMap((route) =>
      (["standard", "discounted"] as const).flatMap((point) => {
        const accepts = routeAccepts(terms, route, point);
        return (["POST", "MCP", "A2A"] as const).flatMap((method) =>
          accepts.map((requirements, acceptIndex) => ({
            resourceUrl: paidResourceUrl(route, method, config.publicUrl),
            requirements,
            acceptIndex,
          })),
        );
      }),
    ),
  );
  return issuer;
}

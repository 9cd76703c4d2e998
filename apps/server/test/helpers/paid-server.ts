import type { InProcessDevnet } from "@agent-tools/devnet";
import { inputToQuery } from "@agent-tools/schema";
import { simWalletAccessToken, startUpstreamSims, type UpstreamSims } from "@agent-tools/upstream-sim";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import pino from "pino";
import { erc20Abi, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { expect } from "vitest";
import { z } from "zod";
import { type Config, loadConfig } from "../../src/config/config.js";
import type { MissionWorker } from "../../src/missions/mission-worker.js";
import type { PaymentService } from "../../src/paid-call/payment-service.js";
import type { ReconcileResult } from "../../src/schemes/exact/reconcile-settlements.js";
import { createApp } from "../../src/startup/app.js";
import { composeService, type Service, type ServiceClients } from "../../src/startup/compose.js";
import { listen, type RunningServer } from "../../src/startup/server.js";
import { createA2aTaskStore } from "../../src/store/a2a-tasks.js";
import type { Database } from "../../src/store/database.js";
import type { MissionQueue } from "../../src/store/mission-queue.js";
import type { SettlementLedger } from "../../src/store/settlement-ledger.js";
import type { ToolDeps, ToolSet } from "../../src/tools/types.js";
import { deploymentEnv } from "./deployment-env.js";
import { devnets } from "./devnets.js";
import { createTestClock } from "./test-clock.js";
import { openTestDatabase } from "./test-database.js";
import { paymentHeader, signInHeader } from "./x402-client.js";

export const PUBLIC_URL = "http://127.0.0.1:8402";

/**
 * The upstream deadline of the test servers whose files include a timeout case (a simulator that never answers):
 * short, so that each such case ends in two seconds, yet far above what a working call takes on a loaded machine
 * (milliseconds; a few hundred for a cold first one when every package's tests share two busy cores).
 */
export const TIMEOUT_CASE_UPSTREAM_MS = "2000";

/** How a test sends a call: the request with these headers added (a payment, a sign-in). */
export type SendCall = (headers: Record<string, string>) => Promise<Response>;

/** A call of a paid route: POST with a JSON body (default), or GET with the body as query parameters. */
export interface CallRequest {
  path: string;
  body?: Record<string, unknown>;
  method?: "POST" | "GET";
  /** Headers sent with both the unpaid and the paid request (a sign-in). */
  headers?: Record<string, string>;
}

/** One paid call as a client makes it: quoted, paid from a devnet account, sent again. */
export interface PaidCall {
  /** The answer to the paid request. */
  res: Response;
  /** The 402 answer's body. */
  required: PaymentRequired;
  /** The PAYMENT-SIGNATURE header sent. */
  payment: string;
  /** The first requirement's amount, in units. */
  price: bigint;
  /** The payer's USD balance before paying, in units. */
  before: bigint;
  /** What the payer's balance lost over the call, in units (0 when nothing was settled). */
  spent: bigint;
}

export interface PaidTestServer {
  devnet: InProcessDevnet;
  server: RunningServer;
  config: Config;
  payments: PaymentService;
  sims: UpstreamSims;
  toolDeps: ToolDeps;
  tools: ToolSet;
  chain: Service["chain"];
  db: Database;
  ledger: SettlementLedger;
  queue: MissionQueue;
  worker: MissionWorker;
  /** The payment channels' store and claimer (docs/channels.md). */
  channels: Service["channels"];
  /** Moves the collection index's clock past its staleness bound: the next request reads the chain again. */
  outlastStaleness(): void;
  /** One pass of the settlement reconciler (every pending claim, whatever its age). */
  reconcile(): Promise<ReconcileResult>;
  /**
   * Another instance of the app on the same store, chain and tools (as another process would be), with `payments`
   * of its own: a second in-memory replay guard, another facilitator, other settings. The caller closes it.
   */
  instance(payments: PaymentService): Promise<RunningServer>;
  /** GETs a path of the server. */
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  /** POSTs a JSON body to a path of the server (always on its real ephemeral port). */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** USD token balance of an address, in units. */
  balance(address: `0x${string}`): Promise<bigint>;
  /** A fresh SIGN-IN-WITH-X header signed by devnet account `index` for `path`. */
  signIn(
    index: number,
    path: string,
    overrides?: { domain?: string; uri?: string; issuedAt?: string; nonce?: string; chainId?: string },
  ): Promise<string>;
  /** A PAYMENT-SIGNATURE header paying the first requirement of a 402 answer, from devnet account `index`. */
  pay(index: number, paymentRequired: PaymentRequired): Promise<string>;
  /** The 402 answer to a call sent without payment (a test fails on any other status). */
  quote(call: CallRequest | SendCall): Promise<PaymentRequired>;
  /** The paid round of a call: quoted, paid by devnet account `payer`, sent again; what it cost read on chain. */
  paidCall(call: CallRequest | SendCall, payer: number): Promise<PaidCall>;
  /** The service's log lines of level warn and above so far (pino JSON, one per line). */
  logs(): string[];
  /**
   * Clears the simulators' faults and makes one successful call through each upstream client: the clients'
   * circuit breakers open after 5 failures in a row, and one success resets the count, so a fault case never
   * leaks into the next test.
   */
  resetUpstream(): Promise<void>;
  close(): Promise<void>;
}

/** The transaction a paid call's settlement went in, as its `PAYMENT-RESPONSE` header names it. */
export const transactionOf = (res: Response) =>
  decodePaymentResponseHeader(res.headers.get("payment-response")!).transaction;

/**
 * A seeded devnet, the upstream simulators, and the service composed on them as production composes it
 * (`composeService`, with the in-process chains, a fresh database and a movable clock), started and listening on
 * 127.0.0.1.
 */
export async function startPaidTestServer(
  options: {
    /** Tools that replace the built ones. */
    tools?: ToolSet;
    /** Configuration variables over the helper's (the mission worker polls every 100 ms and retries after 50 ms). */
    env?: Record<string, string>;
    simLatencyMs?: number;
    /** Devnet accounts whose keys the built-in facilitator settles with, in turn (default: account 0). */
    facilitatorKeys?: number[];
    /** The built-in facilitator's signature recovery (tests count it). */
    recoverSigner?: ServiceClients["recoverSigner"];
    /** The store, migrated, when not a fresh PGlite database; closed with the server. */
    db?: Database;
  } = {},
): Promise<PaidTestServer> {
  const [devnet, sims, db] = await Promise.all([
    devnets.borrow({ publicUrl: PUBLIC_URL }),
    startUpstreamSims({ latencyMs: options.simLatencyMs ?? 0 }),
    options.db ?? openTestDatabase(),
  ]);
  const { accounts } = devnet.deployment;
  const config = loadConfig({
    PORT: "0",
    PUBLIC_URL,
    ...deploymentEnv(devnet.deployment),
    FACILITATOR_PRIVATE_KEYS: (options.facilitatorKeys ?? [0]).map((index) => accounts[index]!.privateKey).join(","),
    MARKETPLACE_URL: sims.urls.marketplace,
    MARKET_DATA_URL: sims.urls.marketData,
    DISPATCH_POLL_MS: "100",
    DISPATCH_RETRY_BASE_MS: "50",
    ...options.env,
  });
  const clock = createTestClock();
  // Warnings and errors are kept for the tests that check what reaches the log.
  const logLines: string[] = [];
  const logger = pino({ level: "warn" }, { write: (line: string) => void logLines.push(line) });
  const service = await composeService(config, logger, {
    l1: devnet.l1.publicClient as unknown as PublicClient,
    l2: devnet.l2.publicClient as unknown as PublicClient,
    db,
    clock: clock.now,
    // The simulated marketplace answers eligibility for any wallet, as if each had authorized the service.
    eligibilityToken: (wallet) => simWalletAccessToken(wallet),
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.recoverSigner ? { recoverSigner: options.recoverSigner } : {}),
  });
  await service.start();
  const { app, chain, payments, tools, ledger, queue, worker } = service;
  const deps = service.toolDeps;
  const server = await listen(app, "127.0.0.1", 0);
  const usd = devnet.deployment.addresses.usdToken;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const sender =
    (call: CallRequest | SendCall): SendCall =>
    (extra) => {
      if (typeof call === "function") return call(extra);
      const headers = { ...call.headers, ...extra };
      if (call.method !== "GET") return post(call.path, call.body ?? {}, headers);
      return fetch(`${server.url}${call.path}${inputToQuery(call.body ?? {})}`, { headers });
    };
  const balance = (address: `0x${string}`) =>
    devnet.l2.publicClient.readContract({ address: usd, abi: erc20Abi, functionName: "balanceOf", args: [address] });
  const pay = (index: number, paymentRequired: PaymentRequired) =>
    paymentHeader(
      privateKeyToAccount(accounts[index]!.privateKey),
      devnet.l2.publicClient as unknown as PublicClient,
      paymentRequired,
      { network: `eip155:${devnet.l2.chainId}`, asset: usd },
    );
  const quote = async (call: CallRequest | SendCall) => {
    const challenge = await sender(call)({});
    expect(challenge.status).toBe(402);
    return (await challenge.json()) as PaymentRequired;
  };

  return {
    devnet,
    server,
    config,
    payments,
    sims,
    toolDeps: deps,
    tools,
    chain,
    db,
    ledger,
    queue,
    worker,
    channels: service.channels,
    outlastStaleness: () => clock.advance(config.chainMaxStalenessMs + 1),
    reconcile: () => service.reconciler.reconcile({ graceMs: 0 }),
    logs: () => [...logLines],
    get: (path, headers = {}) => fetch(`${server.url}${path}`, { headers }),
    post,
    balance,
    signIn: (index, path, overrides = {}) =>
      signInHeader(
        privateKeyToAccount(accounts[index]!.privateKey),
        `${PUBLIC_URL}${path}`,
        overrides.chainId ?? `eip155:${devnet.l1.chainId}`,
        overrides,
      ),
    pay,
    quote,
    async paidCall(call, payer) {
      const required = await quote(call);
      const before = await balance(accounts[payer]!.address);
      const payment = await pay(payer, required);
      const res = await sender(call)({ "PAYMENT-SIGNATURE": payment });
      const spent = before - (await balance(accounts[payer]!.address));
      return { res, required, payment, price: BigInt(required.accepts[0]!.amount), before, spent };
    },
    instance: (other) =>
      listen(
        createApp({ config, logger, chain, payments: other, tools, a2aTasks: createA2aTaskStore(db) }),
        "127.0.0.1",
        0,
      ),
    async resetUpstream() {
      sims.marketplace.faults.clear();
      sims.marketData.faults.clear();
      const fresh = { fresh: crypto.randomUUID() };
      await Promise.all([
        deps.marketplace.get("/api/v2/collections/lumen-apes", { query: fresh, schema: z.unknown() }),
        deps.marketData.get("/latest/dex/search", { query: { q: "WBNB", ...fresh }, schema: z.unknown() }),
      ]);
    },
    async close() {
      await server.close();
      await service.close();
      await Promise.all([devnet.close(), sims.close()]);
    },
  };
}

/**
 * One payment channel served by two instances on one Postgres at once: a channel is held by one call at a time across
 * them, so together they never charge it twice for one voucher, nor beyond its balance (docs/channels.md).
 */

import { parsePaymentRefusal } from "@agent-tools/schema";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme, computeChannelId, signVoucher } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countWork } from "../src/metering/work-meter.js";
import { createMemoryReplayGuard } from "../src/paid-call/replay-guard.js";
import { createChannelFacilitator } from "../src/schemes/batch-settlement/channel-facilitator.js";
import { createChannelScheme } from "../src/schemes/batch-settlement/channel-scheme.js";
import type { RunningServer } from "../src/startup/server.js";
import { createChannelStore } from "../src/store/channels.js";
import type { Database } from "../src/store/database.js";
import { migrate } from "../src/store/migrations.js";
import { openPostgres } from "../src/store/postgres.js";
import { intelTool } from "../src/tools/intel.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";
import { skipPostgres, startTestPostgres, type TestPostgres } from "./helpers/test-postgres.js";

const withoutPostgres = skipPostgres();
let postgres: TestPostgres | undefined;
let t: PaidTestServer;
let otherDb: Database;
let other: RunningServer;
/** The next `/intel` call waits here once its tool has started (armed by a test); any other runs straight through. */
let gate: { entered: () => void; open: Promise<void> } | undefined;

beforeAll(async () => {
  if (withoutPostgres) return;
  postgres = await startTestPostgres();
  const url = await postgres!.createDatabase();
  const db = await openPostgres(url);
  await migrate(db);
  // `/intel` here does a price point's worth of work or more, so that each call is charged its whole price (the
  // ceiling) and three calls take the whole deposit: what is raced for is the balance (docs/channels.md).
  t = await startPaidTestServer({
    db,
    tools: {
      intel: async (params, context) => {
        countWork("upstreamReads", 1_000);
        const held = gate;
        gate = undefined;
        if (held) {
          held.entered();
          await held.open;
        }
        return intelTool(params, context);
      },
    },
  });
  // A second instance: its own pool on the same database, its own channel scheme, the same chain and settings.
  otherDb = await openPostgres(url);
  const { channels } = t.config;
  const scheme = createChannelScheme({
    store: createChannelStore(otherDb),
    facilitator: createChannelFacilitator({
      network: t.config.payment.network,
      chain: t.devnet.l2.publicClient as unknown as PublicClient,
      privateKey: channels!.key,
    }),
    authorizer: privateKeyToAccount(channels!.key),
    holdMs: channels!.holdMs,
    now: () => new Date(),
  });
  other = await t.instance({
    ...t.payments,
    // Its own memory, as another process has: only the store is shared.
    payments: createMemoryReplayGuard(24 * 60 * 60 * 1000),
    schemes: { ...t.payments.schemes, [scheme.scheme]: scheme },
  });
}, 120_000);

afterAll(async () => {
  await other?.close();
  await otherDb?.close();
  await t?.close();
  await postgres?.stop();
});

describe.skipIf(withoutPostgres)("one channel, two instances, one Postgres", () => {
  it("charges each voucher once and never beyond the channel's balance, however the calls race", async () => {
    // A deposit of three prices, through x402's client on the first instance.
    const { price, voucher, send, charged } = await openChannel(3);

    // Three copies of each of the next three vouchers (the third above the balance), all at once, on both instances.
    const payments = await Promise.all([2n, 3n, 4n].map((n) => voucher(n * price)));
    const answers = await Promise.all(
      payments.flatMap((payment) => [t.server.url, other.url, t.server.url].map((url) => send(url, payment))),
    );
    const statuses = answers.map((answer) => answer.status);
    // The first voucher is accepted once at most; nothing is charged twice, nothing beyond the deposit.
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(2);
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    const after = await charged();
    expect(after).toBe(price * BigInt(1 + statuses.filter((s) => s === 200).length));
    expect(after).toBeLessThanOrEqual(3n * price);

    // Sent one after another now, the rest is taken up to the balance, and not a unit further.
    for (const n of [2n, 3n]) {
      if (after >= n * price) continue;
      expect((await send(other.url, payments[Number(n) - 2]!)).status).toBe(200);
    }
    expect(await charged()).toBe(3n * price);
    const beyond = await send(t.server.url, payments[2]!);
    expect(beyond.status).toBe(402);
    expect(await charged()).toBe(3n * price);
  });

  it("withholds an answer whose channel another instance charged meanwhile, and says where the channel stands", async () => {
    const { price, channelId, voucher, send, charged } = await openChannel(4);

    // The first instance holds the channel while its tool runs; the second is paid the same voucher meanwhile.
    let entered!: () => void;
    let open!: () => void;
    const started = new Promise<void>((resolve) => {
      entered = resolve;
    });
    gate = { entered, open: new Promise<void>((resolve) => (open = resolve)) };
    const second = await voucher(2n * price);
    const first = send(t.server.url, second);
    await started;
    const meanwhile = await send(other.url, second);
    expect(meanwhile.status, await meanwhile.clone().text()).toBe(200);
    open();

    // The first call's charge finds the channel moved on: its answer is withheld, nothing is charged for it, and the
    // 402 carries the channel's state so that the next voucher can follow it.
    const refused = await first;
    expect(refused.status).toBe(402);
    const body = (await refused.json()) as PaymentRequired;
    expect(parsePaymentRefusal(body.error)).toMatchObject({ reason: "invalid_batch_settlement_evm_channel_busy" });
    const corrective = body.accepts.find((a) => a.scheme === "batch-settlement")!;
    expect(corrective.extra).toMatchObject({
      channelState: { channelId: channelId.toLowerCase(), chargedCumulativeAmount: (2n * price).toString() },
    });
    expect(await charged()).toBe(2n * price);
    expect((await send(t.server.url, await voucher(3n * price))).status).toBe(200);
  });
});

/**
 * A channel of demo account `index` opened on the first instance by x402's own client, with a deposit of three
 * prices: the price, vouchers of it signed by that client's signer, an `/intel` call paid by one, and the charged total
 * the store holds.
 */
async function openChannel(index: number) {
  const network = `eip155:${t.devnet.l2.chainId}` as const;
  const account = privateKeyToAccount(t.devnet.deployment.accounts[index]!.privateKey);
  const signer = toClientEvmSigner(account, t.devnet.l2.publicClient as unknown as PublicClient);
  const scheme = new BatchSettlementEvmScheme(signer, { depositPolicy: { depositMultiplier: 3 } });
  const client = new x402Client();
  client.register(network, scheme);
  client.setSpendControls({ allowedAssets: [{ network, asset: t.devnet.deployment.addresses.usdToken }] });
  const opened = await wrapFetchWithPayment(fetch, client)(`${t.server.url}/intel`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tokenId: 1 }),
  });
  expect(opened.status, opened.status === 200 ? "" : await opened.clone().text()).toBe(200);
  const quoted = (await (await t.post("/intel", { tokenId: 1 })).json()) as PaymentRequired;
  const accept = quoted.accepts.find((a) => a.scheme === "batch-settlement") as PaymentRequirements;
  const config = scheme.buildChannelConfig(accept);
  const channelId = computeChannelId(config, network);
  /** A `PAYMENT-SIGNATURE` of the channel's voucher for `cumulative`. */
  const voucher = async (cumulative: bigint) => {
    const signed = await signVoucher(signer, channelId, cumulative.toString(), network);
    const payment: PaymentPayload = {
      x402Version: 2,
      accepted: accept,
      resource: quoted.resource,
      payload: { type: "voucher", channelConfig: config, voucher: signed },
    };
    return Buffer.from(JSON.stringify(payment)).toString("base64");
  };
  const send = (url: string, payment: string) =>
    fetch(`${url}/intel`, {
      method: "POST",
      headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": payment },
      body: JSON.stringify({ tokenId: 1 }),
    });
  const charged = async () => {
    const [row] = await otherDb.query<{ charged: string }>(
      "SELECT charged::text AS charged FROM channels WHERE channel_id = $1",
      [channelId.toLowerCase()],
    );
    return BigInt(row!.charged);
  };
  return { price: BigInt(accept.amount), channelId, voucher, send, charged };
}

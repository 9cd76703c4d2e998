/**
 * Paid calls over x402 `batch-settlement` channels, paid by x402's own channel client (`@x402/evm/batch-settlement`
 * with `@x402/fetch`, unmodified) against the service composed as production composes it, on the devnet's channel
 * contract: a deposit once, a voucher per call, claims and sweeps in batches, the unspent money given back, and the
 * payments the scheme refuses (docs/channels.md).
 */
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from "@agent-tools/contracts";
import {
  BATCH_SETTLEMENT_SCHEME,
  formatUsd,
  LEDGER_ENTRIES_PATH,
  LEDGER_EXPORT_PATH,
  ledgerPageSchema,
  MCP_PAYMENT_META,
  MCP_PAYMENT_RESPONSE_META,
  meteredCharge,
  parsePaymentRefusal,
  settlementResponseSchema,
} from "@agent-tools/schema";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { computeChannelId, signVoucher } from "@x402/evm/batch-settlement/client";
import { parse } from "csv-parse/sync";
import { erc20Abi, type Hex, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceError } from "../src/errors/service-error.js";
import { ledgerReport } from "../src/transports/http/routes/ledger-report.js";
import { paymentRequiredIn } from "./helpers/mcp-results.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";
import { x402ChannelPayer } from "./helpers/x402-payer.js";

let t: PaidTestServer;

beforeAll(async () => {
  t = await startPaidTestServer({
    tools: {
      // A tool whose upstream is down: its call must leave the channel as it was.
      portfolio: async () => {
        throw new ServiceError("upstream_unavailable", "The marketplace is unavailable.", [], { "Retry-After": "30" });
      },
    },
  });
});

afterAll(async () => {
  await t?.close();
});

const chain = () => t.devnet.l2.publicClient as unknown as PublicClient;
const network = () => `eip155:${t.devnet.l2.chainId}` as const;
const asset = () => t.devnet.deployment.addresses.usdToken;
const payTo = () => t.devnet.deployment.accounts[0]!.address;

/**
 * A payer that pays only over channels: x402's channel client on @x402/fetch, as its README builds it (a `salt` of
 * its own opens another channel of the same payer).
 */
function channelPayer(index: number, salt?: Hex) {
  const account = privateKeyToAccount(t.devnet.deployment.accounts[index]!.privateKey);
  const payer = x402ChannelPayer({
    account,
    chain: chain(),
    network: network(),
    asset: asset(),
    ...(salt ? { options: { salt } } : {}),
  });
  const { signer, scheme } = payer;
  const post = (path: string, body: Record<string, unknown>) => payer.post(`${t.server.url}${path}`, body);
  const intel = (tokenId: number) => post("/intel", { tokenId });
  return { account, signer, scheme, intel, post };
}

const onChain = async (channelId: Hex) => {
  const [balance, totalClaimed] = await chain().readContract({
    address: BATCH_SETTLEMENT_ADDRESS,
    abi: batchSettlementAbi,
    functionName: "channels",
    args: [channelId],
  });
  return { balance, totalClaimed };
};

const tokenBalance = (address: `0x${string}`) =>
  chain().readContract({ address: asset(), abi: erc20Abi, functionName: "balanceOf", args: [address] });

async function quoteIntel(): Promise<PaymentRequired> {
  const res = await t.post("/intel", { tokenId: 1 });
  expect(res.status).toBe(402);
  return (await res.json()) as PaymentRequired;
}

/** What a refused call's 402 says, for an assertion's message. */
const refusalOf = async (res: Response) =>
  res.status === 200 ? "" : `${res.status}: ${((await res.clone().json()) as { error?: string }).error ?? ""}`;

const channelAccept = (required: PaymentRequired) =>
  required.accepts.find((accept) => accept.scheme === BATCH_SETTLEMENT_SCHEME) as PaymentRequirements;

/** What `/intel` counts: one agent ranked against the collection's snapshot, no upstream read. */
const intelWork = { upstreamReads: 0, itemsExamined: 1, blocksScanned: 0 };
/** What an `/intel` call over a channel is charged under the price `price` signs: the published formula of its work. */
const intelCharge = (price: bigint) => meteredCharge(intelWork, price);

describe("the 402 offers a channel", () => {
  it("quotes batch-settlement beside exact at the same price, with the scheme's channel terms", async () => {
    const required = await quoteIntel();
    // Then upto, third (upto.test.ts).
    expect(required.accepts.map((accept) => accept.scheme)).toEqual(["exact", BATCH_SETTLEMENT_SCHEME, "upto"]);
    const [exact, channel] = required.accepts as [PaymentRequirements, PaymentRequirements];
    expect(channel.amount).toBe(exact.amount);
    expect(channel.payTo).toBe(exact.payTo);
    expect(channel.asset).toBe(exact.asset);
    expect(channel.extra).toMatchObject({
      name: exact.extra?.name,
      version: exact.extra?.version,
      receiverAuthorizer: t.config.channels && privateKeyToAccount(t.config.channels.key).address,
      withdrawDelay: t.config.channels?.withdrawDelaySeconds,
    });
  });
});

describe("x402's channel client, unmodified", () => {
  it("deposits once, pays a run of calls with vouchers, and the service claims and sweeps them", async () => {
    const payer = channelPayer(5);
    const price = BigInt(channelAccept(await quoteIntel()).amount);
    // Anonymous, the voucher signs the standard price, 1.00, and the call is charged 0.012 of it: 0.01 and one item.
    expect(price).toBe(1_000_000n);
    const charge = intelCharge(price);
    expect(charge).toBe(12_000n);
    const before = await tokenBalance(payer.account.address);
    const settlements = [];
    for (let call = 0; call < 4; call += 1) {
      const res = await payer.intel(10 + call);
      expect(res.status, await refusalOf(res)).toBe(200);
      expect((await res.json()).name).toBe(`Agent #${10 + call}`);
      settlements.push(decodePaymentResponseHeader(res.headers.get("payment-response")!));
    }
    // The first call deposited (one transaction); the next three moved no money on chain.
    expect(settlements[0]!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(settlements.slice(1).map((s) => s.transaction)).toEqual(["", "", ""]);
    const deposit = BigInt(settlements[0]!.amount!);
    expect(deposit).toBeGreaterThanOrEqual(4n * price);
    expect(await tokenBalance(payer.account.address)).toBe(before - deposit);
    const channelId = (settlements[3]!.extra as { channelState: { channelId: Hex } }).channelState.channelId;
    // Each answer says what it was charged, of which ceiling, and the work it was charged for.
    expect(settlements.map((s) => s.extra)).toEqual(
      Array(4).fill(
        expect.objectContaining({ chargedAmount: charge.toString(), ceiling: price.toString(), work: intelWork }),
      ),
    );
    expect(
      settlements.map(
        (s) => (s.extra as { channelState: { chargedCumulativeAmount: string } }).channelState.chargedCumulativeAmount,
      ),
    ).toEqual([1n, 2n, 3n, 4n].map((n) => (n * charge).toString()));
    expect(await onChain(channelId)).toEqual({ balance: deposit, totalClaimed: 0n });

    // Every call is an entry of the book with its channel and cumulative amount.
    const entries = await t.db.query<{ cumulative: string; status: string }>(
      "SELECT cumulative::text AS cumulative, status FROM settlements WHERE channel_id = $1 ORDER BY cumulative",
      [channelId],
    );
    expect(entries).toEqual([1n, 2n, 3n, 4n].map((n) => ({ cumulative: (n * charge).toString(), status: "settled" })));

    // One claim pass: the contract records what was charged, and the sweep pays it to payTo.
    const payToBefore = await tokenBalance(payTo());
    const pass = await t.channels!.claimer.claimNow();
    expect(pass).toMatchObject({ channels: 1, claims: 1 });
    expect(await onChain(channelId)).toEqual({ balance: deposit, totalClaimed: 4n * charge });
    expect(await tokenBalance(payTo())).toBe(payToBefore + 4n * charge);
    // A second pass claims nothing again.
    expect(await t.channels!.claimer.claimNow()).toMatchObject({ channels: 0, claims: 0, swept: 0n });

    // The unspent money goes back to the payer: a cooperative refund through the service.
    const refundBefore = await tokenBalance(payer.account.address);
    const refunded = await payer.scheme.refund(`${t.server.url}/intel?tokenId=1`);
    expect(refunded.success).toBe(true);
    expect(await tokenBalance(payer.account.address)).toBe(refundBefore + deposit - 4n * charge);
    expect(await onChain(channelId)).toEqual({ balance: 4n * charge, totalClaimed: 4n * charge });

    // The operator's report shows the channel's money: deposited, charged, claimed, swept, refunded, none owed.
    const money = (amount: bigint) => ({ amount: amount.toString(), usd: formatUsd(amount.toString()) });
    expect((await ledgerReport(t.payments, { limit: 10 })).channels).toEqual({
      channels: 1,
      deposited: money(deposit),
      charged: money(4n * charge),
      claimed: money(4n * charge),
      swept: money(4n * charge),
      refunded: money(deposit - 4n * charge),
      unclaimed: money(0n),
    });
  });

  it("a refund before any claim pass claims what was charged in the same transaction, and returns the rest", async () => {
    const payer = channelPayer(6, `0x${"22".repeat(32)}`);
    const first = await payer.intel(1);
    expect(first.status).toBe(200);
    const deposit = BigInt(decodePaymentResponseHeader(first.headers.get("payment-response")!).amount!);
    const charge = intelCharge(BigInt(channelAccept(await quoteIntel()).amount));
    const before = await tokenBalance(payer.account.address);
    const refunded = await payer.scheme.refund(`${t.server.url}/intel?tokenId=1`);
    expect(refunded.success).toBe(true);
    expect(await tokenBalance(payer.account.address)).toBe(before + deposit - charge);
    const channelId = computeChannelId(payer.scheme.buildChannelConfig(channelAccept(await quoteIntel())), network());
    expect(await onChain(channelId)).toEqual({ balance: charge, totalClaimed: charge });
    // The call's entry is booked under the refund's transaction, which claimed it.
    const [entry] = await t.db.query<{ transaction: string }>(
      "SELECT transaction FROM settlements WHERE channel_id = $1",
      [channelId.toLowerCase()],
    );
    expect(entry?.transaction).toBe(refunded.transaction);
  });

  it("a call whose tool fails leaves the channel as it was: the next voucher is the same amount", async () => {
    const payer = channelPayer(6);
    expect((await payer.intel(1)).status).toBe(200);
    const failed = await payer.post("/portfolio", { tokenId: 1 });
    expect(failed.status).toBe(503);
    const res = await payer.intel(3);
    expect(res.status).toBe(200);
    const settlement = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    const charge = intelCharge(BigInt(channelAccept(await quoteIntel()).amount));
    expect(
      (settlement.extra as { channelState: { chargedCumulativeAmount: string } }).channelState.chargedCumulativeAmount,
    ).toBe((2n * charge).toString());
  });
});

describe("over MCP", () => {
  it("a voucher in _meta pays a tool call of a stock MCP client; the settlement in _meta carries the channel's state", async () => {
    // The channel is opened over HTTP by x402's client; its next voucher pays over MCP.
    const payer = channelPayer(4, `0x${"c1".repeat(32)}`);
    expect((await payer.intel(1)).status).toBe(200);
    const client = new McpClient({ name: "channels-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.server.url}/mcp`)));
    try {
      const call = (meta?: Record<string, unknown>) =>
        client.callTool({
          name: "intel",
          arguments: { tokenId: 1 },
          ...(meta ? { _meta: meta } : {}),
        }) as Promise<CallToolResult>;
      const quote = paymentRequiredIn(await call());
      const accept = channelAccept(quote);
      expect(accept).toBeDefined();
      const price = BigInt(accept.amount);
      const charge = intelCharge(price);
      const config = payer.scheme.buildChannelConfig(accept);
      const channelId = computeChannelId(config, network());
      // The voucher signs what was charged so far and this call's price on top: a ceiling.
      const voucher = await signVoucher(payer.signer, channelId, (charge + price).toString(), network());
      const payment = {
        x402Version: 2,
        accepted: accept,
        resource: quote.resource,
        payload: { type: "voucher", channelConfig: config, voucher },
      };
      const paid = await call({ [MCP_PAYMENT_META]: payment });
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent).toMatchObject({ tokenId: 1 });
      // As x402's channel client reads it: the charged total it signs the next voucher on.
      const settlement = paid._meta?.[MCP_PAYMENT_RESPONSE_META];
      expect(settlementResponseSchema.safeParse(settlement).success).toBe(true);
      expect(settlement).toMatchObject({
        success: true,
        extra: {
          chargedAmount: charge.toString(),
          channelState: { channelId, chargedCumulativeAmount: (2n * charge).toString() },
        },
      });
      // Sent again, the same voucher is refused as x402's server refuses it, out of step with the channel (whose
      // charged total moved past it): the channel was charged once.
      const again = paymentRequiredIn(await call({ [MCP_PAYMENT_META]: payment }));
      expect(parsePaymentRefusal(again.error).reason).toBe("invalid_batch_settlement_evm_cumulative_amount_mismatch");
      const [entry] = await t.db.query<{ method: string; status: string }>(
        "SELECT method, status FROM settlements WHERE channel_id = $1 AND cumulative = $2",
        [channelId.toLowerCase(), (2n * charge).toString()],
      );
      expect(entry).toEqual({ method: "MCP", status: "settled" });
    } finally {
      await client.close();
    }
  });
});

describe("calls bound to their ledger entry", () => {
  it("a mission queued over a channel is bound to its call's entry, settled with the voucher's charge", async () => {
    const payer = channelPayer(5, `0x${"d1".repeat(32)}`);
    const ids: string[] = [];
    // The first call deposits, the second pays with a voucher alone.
    for (let i = 0; i < 2; i++) {
      const res = await payer.post("/dispatch", {
        tokenId: 1,
        mission: { tool: "intel", params: {} },
        runAt: new Date(Date.now() + 3_600_000).toISOString(),
      });
      expect(res.status, await refusalOf(res)).toBe(202);
      ids.push(((await res.json()) as { mission: { id: string } }).mission.id);
    }
    const rows = await t.db.query<{ status: string; channel_id: string; cumulative: string; amount: string }>(
      `SELECT s.status, s.channel_id, s.cumulative::text AS cumulative, s.amount::text AS amount
         FROM settlements s JOIN missions m USING (payment_key) WHERE m.id = ANY($1::uuid[]) ORDER BY s.cumulative`,
      [ids],
    );
    expect(rows).toHaveLength(2);
    const price = BigInt(rows[0]!.amount);
    expect(rows.map((row) => [row.status, BigInt(row.cumulative)])).toEqual([
      ["settled", price],
      ["settled", 2n * price],
    ]);
    expect(rows[0]!.channel_id).toBe(rows[1]!.channel_id);
  });
});

describe("the operator's book", () => {
  /** A GET of an operator path, signed in as the operator (account 0) for it. */
  const asOperator = async (path: string, query: string) =>
    t.get(`${path}${query}`, { "SIGN-IN-WITH-X": await t.signIn(0, path) });

  it("lists a call paid over a channel with its voucher's cumulative amount, the charged total its answer reported", async () => {
    const payer = channelPayer(3, `0x${"b1".repeat(32)}`);
    const price = BigInt(channelAccept(await quoteIntel()).amount);
    // Two calls over the channel: a deposit with the first, a voucher alone with the second.
    const calls: { requestId: string; transaction: string; channelId: string; charged: string }[] = [];
    for (let call = 0; call < 2; call += 1) {
      const res = await payer.intel(1);
      expect(res.status, await refusalOf(res)).toBe(200);
      const settlement = decodePaymentResponseHeader(res.headers.get("payment-response")!);
      const { channelState } = settlement.extra as {
        channelState: { channelId: Hex; chargedCumulativeAmount: string };
      };
      calls.push({
        requestId: res.headers.get("x-request-id")!,
        transaction: settlement.transaction,
        channelId: channelState.channelId.toLowerCase(),
        charged: channelState.chargedCumulativeAmount,
      });
    }
    const charge = intelCharge(price);
    expect(calls.map((call) => call.charged)).toEqual([charge.toString(), (2n * charge).toString()]);
    // And a call paid with an `exact` authorization.
    const exact = await t.post("/intel", { tokenId: 1 }, { "PAYMENT-SIGNATURE": await t.pay(2, await quoteIntel()) });
    expect(exact.status, await refusalOf(exact)).toBe(200);
    const exactRequestId = exact.headers.get("x-request-id")!;

    const page = ledgerPageSchema.parse(await (await asOperator(LEDGER_ENTRIES_PATH, "?limit=1000")).json());
    const csv: Record<string, string>[] = parse(await (await asOperator(LEDGER_EXPORT_PATH, "?format=csv")).text(), {
      columns: true,
    });
    const entryOf = (requestId: string) => page.entries.filter((entry) => entry.requestId === requestId);
    const rowOf = (requestId: string) => csv.filter((row) => row.requestId === requestId);
    for (const call of calls) {
      const shown = { kind: "payment", nonce: call.channelId, transaction: call.transaction, cumulative: call.charged };
      // Charged by its work, under the ceiling its voucher signed: both in the book and its export.
      const charged = { amount: charge.toString(), ceiling: price.toString() };
      expect(entryOf(call.requestId)).toEqual([expect.objectContaining({ ...shown, ...charged, work: intelWork })]);
      expect(rowOf(call.requestId)).toEqual([
        expect.objectContaining({ ...shown, ...charged, work: "upstreamReads:0 itemsExamined:1 blocksScanned:0" }),
      ]);
    }
    // The second call's money is not claimed yet: no transaction, its cumulative amount all the same.
    expect(calls[1]!.transaction).toBe("");
    // An `exact` payment has no cumulative amount: null in the book, an empty field in the CSV.
    // It is charged its price point, the ceiling itself, and counts no work.
    const exactShown = { kind: "payment", amount: price.toString(), ceiling: price.toString() };
    expect(entryOf(exactRequestId)).toEqual([expect.objectContaining({ ...exactShown, cumulative: null, work: null })]);
    expect(rowOf(exactRequestId)).toEqual([expect.objectContaining({ ...exactShown, cumulative: "", work: "" })]);
  });
});

describe("vouchers the service refuses", () => {
  /** A payer's channel with one call paid, and a way to send hand-made payloads on it. */
  async function openChannel(index: number, salt?: Hex) {
    const payer = channelPayer(index, salt);
    const opened = await payer.intel(1);
    expect(opened.status, await refusalOf(opened)).toBe(200);
    const required = await quoteIntel();
    const accept = channelAccept(required);
    const config = payer.scheme.buildChannelConfig(accept);
    const channelId = computeChannelId(config, network());
    const send = async (
      payload: Record<string, unknown>,
      accepted: PaymentRequirements = accept,
      extensions?: Record<string, unknown>,
    ) => {
      const payment: PaymentPayload = {
        x402Version: 2,
        accepted,
        resource: required.resource,
        payload,
        ...(extensions ? { extensions } : {}),
      };
      const res = await t.post(
        "/intel",
        { tokenId: 1 },
        {
          "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(payment)).toString("base64"),
        },
      );
      return res;
    };
    const voucher = (amount: bigint, signer = payer.signer) =>
      signVoucher(signer, channelId, amount.toString(), network());
    const price = BigInt(accept.amount);
    // One call charged: the next voucher signs that charge and one price on top.
    const charge = intelCharge(price);
    return { payer, accept, config, channelId, price, charge, next: charge + price, send, voucher };
  }

  const reasonOf = async (res: Response) => {
    expect(res.status).toBe(402);
    const required = (await res.json()) as PaymentRequired;
    return { reason: parsePaymentRefusal(required.error).reason, required };
  };

  it("a voucher sent again is refused with the corrective 402; the channel is charged once", async () => {
    const c = await openChannel(7);
    const next = await c.voucher(c.next);
    const first = await c.send({ type: "voucher", channelConfig: c.config, voucher: next });
    expect(first.status).toBe(200);
    // As x402's own server answers a voucher whose total is not the charged total plus the price: with where the
    // channel stands, so that a client that lost its state can sign the next one.
    const again = await c.send({ type: "voucher", channelConfig: c.config, voucher: next });
    const { reason, required } = await reasonOf(again);
    expect(reason).toBe("invalid_batch_settlement_evm_cumulative_amount_mismatch");
    const corrective = required.accepts.find((accept) => accept.scheme === "batch-settlement")!;
    expect(corrective.extra).toMatchObject({
      // Charged by its work, the channel's total is below what the payer's latest voucher signed, which is kept.
      channelState: { chargedCumulativeAmount: (2n * c.charge).toString() },
      voucherState: { signedMaxClaimable: c.next.toString(), signature: next.signature },
    });
  });

  it("a voucher naming a payment identifier, sent again, has its answer again and is charged once", async () => {
    const c = await openChannel(7, `0x${"11".repeat(32)}`);
    const next = await c.voucher(c.next);
    const extensions = { "payment-identifier": { info: { required: false, id: `channel-call-${Date.now()}` } } };
    const first = await c.send({ type: "voucher", channelConfig: c.config, voucher: next }, c.accept, extensions);
    expect(first.status).toBe(200);
    const again = await c.send({ type: "voucher", channelConfig: c.config, voucher: next }, c.accept, extensions);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(await first.json());
    const [row] = await t.db.query<{ charged: string }>(
      "SELECT charged::text AS charged FROM channels WHERE channel_id = $1",
      [c.channelId.toLowerCase()],
    );
    expect(row?.charged).toBe((2n * c.charge).toString());
    // Its entry, claimed before the tool ran, was charged what the channel was, by its work: the book is the chain's.
    const [entry] = await t.db.query<{ amount: string; ceiling: string; work: string; cumulative: string }>(
      `SELECT amount::text AS amount, ceiling::text AS ceiling, work, cumulative::text AS cumulative
         FROM settlements WHERE channel_id = $1 AND status = 'settled' ORDER BY cumulative DESC LIMIT 1`,
      [c.channelId.toLowerCase()],
    );
    expect(entry).toEqual({
      amount: c.charge.toString(),
      ceiling: c.price.toString(),
      work: "upstreamReads:0 itemsExamined:1 blocksScanned:0",
      cumulative: (2n * c.charge).toString(),
    });
  });

  it("a stale voucher gets the corrective 402 with the channel's state and the payer's last voucher", async () => {
    const c = await openChannel(8);
    const stale = await c.send({ type: "voucher", channelConfig: c.config, voucher: await c.voucher(5n * c.price) });
    const { reason, required } = await reasonOf(stale);
    expect(reason).toBe("invalid_batch_settlement_evm_cumulative_amount_mismatch");
    expect(required.error).toBe("invalid_batch_settlement_evm_cumulative_amount_mismatch");
    const extra = channelAccept(required).extra as Record<string, Record<string, unknown>>;
    expect(extra.channelState).toMatchObject({ channelId: c.channelId, chargedCumulativeAmount: c.charge.toString() });
    expect(extra.voucherState).toMatchObject({ signedMaxClaimable: c.price.toString() });
  });

  it("a voucher above the channel's balance is refused", async () => {
    const c = await openChannel(9);
    const { balance } = await onChain(c.channelId);
    const res = await c.send({ type: "voucher", channelConfig: c.config, voucher: await c.voucher(balance + c.price) });
    // Out of step first (the cumulative is not charged + price); at exactly charged + price above the balance:
    expect((await reasonOf(res)).reason).toMatch(/cumulative_(amount_mismatch|exceeds_balance)/);
  });

  it("a voucher signed by another key is refused", async () => {
    const c = await openChannel(4);
    const stranger = toClientEvmSigner(privateKeyToAccount(generatePrivateKey()), chain());
    const res = await c.send({
      type: "voucher",
      channelConfig: c.config,
      voucher: await c.voucher(2n * c.price, stranger),
    });
    expect((await reasonOf(res)).reason).toBe("invalid_payment");
  });

  it("a channel whose receiver is not payTo is refused", async () => {
    const c = await openChannel(3);
    const other = { ...c.config, receiver: t.devnet.deployment.accounts[2]!.address };
    const otherId = computeChannelId(other, network());
    const res = await c.send({
      type: "voucher",
      channelConfig: other,
      voucher: await signVoucher(c.payer.signer, otherId, (2n * c.price).toString(), network()),
    });
    expect((await reasonOf(res)).reason).toBe("invalid_batch_settlement_evm_receiver_mismatch");
  });

  it("a refund that would take back charged money is refused", async () => {
    const c = await openChannel(2);
    const { balance } = await onChain(c.channelId);
    const res = await c.send({
      type: "refund",
      channelConfig: c.config,
      voucher: await c.voucher(c.charge),
      amount: balance.toString(),
    });
    expect((await reasonOf(res)).reason).toBe("invalid_batch_settlement_evm_refund_amount_invalid");
    expect(await onChain(c.channelId)).toMatchObject({ balance });
  });

  it("two calls at once on one channel: one is charged, the other refused, never more than one price", async () => {
    const c = await openChannel(1);
    const next = await c.voucher(c.next);
    const [a, b] = await Promise.all([
      c.send({ type: "voucher", channelConfig: c.config, voucher: next }),
      c.send({ type: "voucher", channelConfig: c.config, voucher: next }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 402]);
    const [row] = await t.db.query<{ charged: string }>(
      "SELECT charged::text AS charged FROM channels WHERE channel_id = $1",
      [c.channelId.toLowerCase()],
    );
    expect(row?.charged).toBe((2n * c.charge).toString());
  });
});

describe("the claim policy", () => {
  it("a channel whose claim the chain refuses holds up no other: the others are claimed, it is set aside", async () => {
    // What earlier calls left unclaimed is claimed first.
    await t.channels!.claimer.claimNow();
    const good = channelPayer(6, `0x${"a1".repeat(32)}`);
    const bad = channelPayer(6, `0x${"a2".repeat(32)}`);
    expect((await good.intel(1)).status).toBe(200);
    expect((await bad.intel(1)).status).toBe(200);
    const accept = channelAccept(await quoteIntel());
    const price = BigInt(accept.amount);
    const idOf = (payer: ReturnType<typeof channelPayer>) =>
      computeChannelId(payer.scheme.buildChannelConfig(accept), network());
    // The kept voucher of one channel no longer matches it (as a store restored from another service would):
    // the contract refuses any claim that carries it.
    const otherVoucher = await signVoucher(good.signer, idOf(good), price.toString(), network());
    const [kept] = await t.db.query<{ signature: string }>("SELECT signature FROM channels WHERE channel_id = $1", [
      idOf(bad).toLowerCase(),
    ]);
    await t.db.query("UPDATE channels SET signature = $2 WHERE channel_id = $1", [
      idOf(bad).toLowerCase(),
      otherVoucher.signature,
    ]);
    // The batch of both is refused; claimed one at a time, the good one goes through.
    const pass = await t.channels!.claimer.claimNow();
    expect(pass).toMatchObject({ channels: 1, claims: 1 });
    expect(await onChain(idOf(good))).toMatchObject({ totalClaimed: intelCharge(price) });
    expect(await onChain(idOf(bad))).toMatchObject({ totalClaimed: 0n });
    // Set aside: the next pass does not try it again, and claims nothing.
    expect(await t.channels!.claimer.claimNow()).toMatchObject({ channels: 0, claims: 0 });
    // Its voucher back, it is claimed when it is tried again, within ten passes.
    await t.db.query("UPDATE channels SET signature = $2 WHERE channel_id = $1", [
      idOf(bad).toLowerCase(),
      kept!.signature,
    ]);
    let passes = 1;
    while ((await onChain(idOf(bad))).totalClaimed === 0n && passes < 10) {
      await t.channels!.claimer.claimNow();
      passes += 1;
    }
    expect(await onChain(idOf(bad))).toMatchObject({ totalClaimed: intelCharge(price) });
    expect(passes).toBeGreaterThan(2);
  });
});

// Last in the file: it moves the payment chain's clock a day ahead.
describe("a payer's timed withdrawal", () => {
  it("started right after a burst of calls, still leaves every answered call claimed, and takes back the rest", async () => {
    const payer = channelPayer(5, `0x${"77".repeat(32)}`);
    for (let call = 0; call < 5; call += 1) expect((await payer.intel(call + 1)).status).toBe(200);
    const accept = channelAccept(await quoteIntel());
    const price = BigInt(accept.amount);
    const charge = intelCharge(price);
    const config = payer.scheme.buildChannelConfig(accept);
    const channelId = computeChannelId(config, network());
    const { balance } = await onChain(channelId);
    // The payer asks for everything back, before the service claimed anything.
    const wallet = t.devnet.l2.walletClient(5);
    const contractConfig = { ...config, withdrawDelay: Number(config.withdrawDelay) };
    await chain().waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: batchSettlementAbi,
        functionName: "initiateWithdraw",
        args: [contractConfig, balance],
      }),
    });

    // The next claim pass sees the withdrawal, and claims the channel's five calls.
    const pass = await t.channels!.claimer.claimNow();
    expect(pass).toMatchObject({ withdrawals: 1 });
    expect(await onChain(channelId)).toEqual({ balance, totalClaimed: 5n * charge });
    // The channel takes no more vouchers meanwhile.
    const refused = await payer.intel(9);
    expect(refused.status).toBe(402);
    expect(parsePaymentRefusal(((await refused.json()) as PaymentRequired).error).reason).toBe(
      "invalid_batch_settlement_evm_channel_busy",
    );

    // Once the delay has passed, the payer takes back what was not claimed; the service keeps what it charged.
    await chain().request({
      method: "evm_increaseTime",
      params: [t.config.channels!.withdrawDelaySeconds + 1],
    } as never);
    await chain().request({ method: "evm_mine", params: [] } as never);
    const before = await tokenBalance(payer.account.address);
    await chain().waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: batchSettlementAbi,
        functionName: "finalizeWithdraw",
        args: [contractConfig],
      }),
    });
    expect(await tokenBalance(payer.account.address)).toBe(before + balance - 5n * charge);
    expect(await onChain(channelId)).toEqual({ balance: 5n * charge, totalClaimed: 5n * charge });

    // The next pass sees the withdrawal ended: the channel is as the chain says, and a voucher is refused for the
    // balance it is above, no longer for a withdrawal.
    await t.channels!.claimer.claimNow();
    const [row] = await t.db.query<{ balance: string; withdraw_requested_at: string }>(
      "SELECT balance::text AS balance, withdraw_requested_at::text AS withdraw_requested_at FROM channels WHERE channel_id = $1",
      [channelId.toLowerCase()],
    );
    expect(row).toEqual({ balance: (5n * charge).toString(), withdraw_requested_at: "0" });
    const required = await quoteIntel();
    // In step with the charged total, and one price above the balance left.
    const voucher = await signVoucher(payer.signer, channelId, (5n * charge + price).toString(), network());
    const payment: PaymentPayload = {
      x402Version: 2,
      accepted: accept,
      resource: required.resource,
      payload: { type: "voucher", channelConfig: config, voucher },
    };
    const after = await t.post(
      "/intel",
      { tokenId: 1 },
      { "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(payment)).toString("base64") },
    );
    expect(after.status).toBe(402);
    expect(parsePaymentRefusal(((await after.json()) as PaymentRequired).error).reason).toBe(
      "invalid_batch_settlement_evm_cumulative_exceeds_balance",
    );
  });
});

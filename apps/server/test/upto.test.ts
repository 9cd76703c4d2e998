/**
 * Paid calls with x402's `upto` scheme (a Permit2 witness transfer of up to the price, settled for the work done),
 * paid by x402's own upto client (`@x402/evm/upto/client` on `@x402/fetch`, unmodified) against the service composed
 * as production composes it, on the devnet's Permit2 and x402's upto proxy: the offer in the 402, calls of different
 * sizes each charged the published formula of their work on chain, the payments the scheme refuses, the ledger's
 * entries, a cut-short settlement reconciled, and a facilitator over HTTP that settles the scheme.
 */
import { permit2Abi } from "@agent-tools/contracts";
import { DEVNET_ACCOUNTS, DEVNET_L2_CHAIN_ID, PERMIT2_ADDRESS } from "@agent-tools/devnet";
import {
  type CountedWork,
  LEDGER_ENTRIES_PATH,
  ledgerPageSchema,
  MCP_PAYMENT_META,
  MCP_PAYMENT_RESPONSE_META,
  parsePaymentRefusal,
} from "@agent-tools/schema";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { x402Facilitator } from "@x402/core/facilitator";
import { decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { Network, PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme as ExactFacilitator } from "@x402/evm/exact/facilitator";
import { UptoEvmScheme as UptoClient } from "@x402/evm/upto/client";
import { UptoEvmScheme as UptoFacilitator } from "@x402/evm/upto/facilitator";
import express from "express";
import { erc20Abi, type Hex, maxUint256, type PublicClient, toHex } from "viem";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceError } from "../src/errors/service-error.js";
import { permit2NonceUsed } from "../src/schemes/upto/upto-settlements.js";
import { chainWalletOf, facilitatorSignerOf } from "../src/settlement/chain-wallet.js";
import { listen, type RunningServer } from "../src/startup/server.js";
import { paymentRequiredIn } from "./helpers/mcp-results.js";
import { CALLS_OF_DIFFERENT_SIZES, describeCall, expectChargesFollowTheWork } from "./helpers/metered-calls.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";
import { x402UptoPayer } from "./helpers/x402-payer.js";

let t: PaidTestServer;

beforeAll(async () => {
  t = await startPaidTestServer({
    tools: {
      // A tool whose upstream is down: its call must take nothing.
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
const accountOf = (index: number) => privateKeyToAccount(t.devnet.deployment.accounts[index]!.privateKey);
const tokenBalance = (address: `0x${string}`) =>
  chain().readContract({ address: asset(), abi: erc20Abi, functionName: "balanceOf", args: [address] });

/** A payer that pays only with upto: x402's upto client on @x402/fetch. */
function uptoPayer(index: number) {
  const account = accountOf(index);
  const payer = x402UptoPayer({ account, chain: chain(), network: network(), asset: asset() });
  const post = (path: string, body: Record<string, unknown>) => payer.post(`${t.server.url}${path}`, body);
  return { account, post };
}

async function quoteIntel(): Promise<PaymentRequired> {
  const res = await t.post("/intel", { tokenId: 1 });
  expect(res.status).toBe(402);
  return (await res.json()) as PaymentRequired;
}

const uptoAccept = (required: PaymentRequired) => required.accepts.find((a) => a.scheme === "upto")!;

/** What a refused call's 402 says, for an assertion's message. */
const refusalOf = async (res: Response) =>
  res.status === 200 ? "" : `${res.status}: ${((await res.clone().json()) as { error?: string }).error ?? ""}`;

/**
 * A `PAYMENT-SIGNATURE` naming the quoted `accepted` requirement whose permit x402's upto client signed for
 * `signedFor` (the quoted one, or one changed to name another payee, facilitator or amount).
 */
async function uptoPayment(
  account: PrivateKeyAccount,
  quoted: PaymentRequired,
  signedFor: PaymentRequirements = uptoAccept(quoted),
): Promise<{ header: string; payload: PaymentPayload }> {
  const created = await new UptoClient(toClientEvmSigner(account, chain() as never)).createPaymentPayload(2, signedFor);
  const payload = {
    x402Version: 2,
    accepted: uptoAccept(quoted),
    resource: quoted.resource,
    payload: created.payload,
  } as PaymentPayload;
  return { header: encodePaymentSignatureHeader(payload), payload };
}

interface Charged {
  charged: bigint;
  ceiling: bigint;
  work: CountedWork;
  amount: bigint;
  transaction: string;
}

const chargedOf = (res: Response): Charged => {
  const settlement = decodePaymentResponseHeader(res.headers.get("payment-response")!);
  const extra = settlement.extra as { chargedAmount: string; ceiling: string; work: CountedWork };
  return {
    charged: BigInt(extra.chargedAmount),
    ceiling: BigInt(extra.ceiling),
    work: extra.work,
    amount: BigInt(settlement.amount ?? "-1"),
    transaction: settlement.transaction,
  };
};

const ledgerEntries = async () => {
  const res = await t.get(`${LEDGER_ENTRIES_PATH}?limit=1000`, {
    "SIGN-IN-WITH-X": await t.signIn(0, LEDGER_ENTRIES_PATH),
  });
  expect(res.status).toBe(200);
  return ledgerPageSchema.parse(await res.json()).entries;
};

describe("the 402 offers upto", () => {
  it("quotes upto third, after exact and batch-settlement, at the same price, naming the facilitator", async () => {
    const required = await quoteIntel();
    expect(required.accepts.map((accept) => accept.scheme)).toEqual(["exact", "batch-settlement", "upto"]);
    const [exact, , upto] = required.accepts as [PaymentRequirements, PaymentRequirements, PaymentRequirements];
    expect(upto).toEqual({
      ...exact,
      scheme: "upto",
      extra: {
        name: exact.extra.name,
        version: exact.extra.version,
        // The built-in facilitator's key (account 0): the only sender x402's upto proxy lets settle these permits.
        facilitatorAddress: t.devnet.deployment.accounts[0]!.address,
      },
    });
    // A holder signed in is quoted its discounted price as the ceiling, in every scheme alike.
    const signedIn = await t.post("/intel", { tokenId: 1 }, { "SIGN-IN-WITH-X": await t.signIn(1, "/intel") });
    const discounted = (await signedIn.json()) as PaymentRequired;
    expect(discounted.accepts.map((accept) => [accept.scheme, accept.amount])).toEqual([
      ["exact", "10000"],
      ["batch-settlement", "10000"],
      ["upto", "10000"],
    ]);
  });

  it("quotes it over MCP too, where x402's upto client pays a call charged by its work", async () => {
    const account = accountOf(3);
    const client = new McpClient({ name: "upto-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.server.url}/mcp`)));
    try {
      const call = (meta?: Record<string, unknown>) =>
        client.callTool({
          name: "intel",
          arguments: { tokenId: 2 },
          ...(meta ? { _meta: meta } : {}),
        }) as Promise<CallToolResult>;
      const quote = paymentRequiredIn(await call());
      expect(quote.accepts.map((accept) => accept.scheme)).toEqual(["exact", "batch-settlement", "upto"]);
      const before = await tokenBalance(account.address);
      const { payload } = await uptoPayment(account, quote as PaymentRequired);
      const paid = await call({ [MCP_PAYMENT_META]: payload });
      expect(paid.isError).toBeFalsy();
      const settlement = paid._meta?.[MCP_PAYMENT_RESPONSE_META] as {
        amount: string;
        extra: { chargedAmount: string };
      };
      expect(settlement.amount).toBe("12000");
      expect(settlement.extra.chargedAmount).toBe("12000");
      expect(before - (await tokenBalance(account.address))).toBe(12_000n);
    } finally {
      await client.close();
    }
  });
});

describe("x402's upto client, unmodified, pays a table of calls of different sizes", () => {
  it("charges each the formula of its work, within 0.01 to 1.00, and the payer loses on chain exactly that", async () => {
    const payer = uptoPayer(8);
    const rows: (Charged & { call: string; lost: bigint; gained: bigint; body: Record<string, unknown> })[] = [];
    for (const [path, body] of CALLS_OF_DIFFERENT_SIZES) {
      const [payerBefore, payToBefore] = await Promise.all([
        tokenBalance(payer.account.address),
        tokenBalance(payTo()),
      ]);
      const res = await payer.post(path, body);
      const call = describeCall([path, body]);
      expect(res.status, `${call}: ${await refusalOf(res)}`).toBe(200);
      const [payerAfter, payToAfter] = await Promise.all([tokenBalance(payer.account.address), tokenBalance(payTo())]);
      rows.push({
        call,
        ...chargedOf(res),
        lost: payerBefore - payerAfter,
        gained: payToAfter - payToBefore,
        body: (await res.json()) as Record<string, unknown>,
      });
    }
    // Anonymous: the permit signs 1.00; the charge is the formula of the work the answer reports, no more.
    expectChargesFollowTheWork(rows);
    for (const row of rows) {
      // x402's own field says the same: what the settlement took.
      expect(row.amount, row.call).toBe(row.charged);
      // On chain, the payer lost exactly the charge and the payee gained it, in the settlement's transaction.
      expect(row.lost, row.call).toBe(row.charged);
      expect(row.gained, row.call).toBe(row.charged);
      expect(row.transaction, row.call).toMatch(/^0x[0-9a-f]{64}$/);
    }

    // The ledger lists each with its charge, the ceiling its permit signed, and its work.
    const entries = await ledgerEntries();
    const byTransaction = new Map(entries.map((entry) => [entry.transaction, entry]));
    expect(rows.map((row) => byTransaction.get(row.transaction))).toEqual(
      rows.map((row) =>
        expect.objectContaining({
          kind: "payment",
          payer: payer.account.address,
          amount: row.charged.toString(),
          ceiling: "1000000",
          work: row.work,
          cumulative: null,
          nonce: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        }),
      ),
    );
  });
});

describe("what the scheme refuses", () => {
  it("refuses a replayed payment (payment_already_used), and takes nothing twice", async () => {
    const account = accountOf(4);
    const quote = await quoteIntel();
    const { header } = await uptoPayment(account, quote);
    const before = await tokenBalance(account.address);
    const first = await t.post("/intel", { tokenId: 1 }, { "PAYMENT-SIGNATURE": header });
    expect(first.status, await refusalOf(first)).toBe(200);
    const again = await t.post("/intel", { tokenId: 1 }, { "PAYMENT-SIGNATURE": header });
    expect(again.status).toBe(402);
    expect(parsePaymentRefusal(((await again.json()) as PaymentRequired).error).reason).toBe("payment_already_used");
    expect(before - (await tokenBalance(account.address))).toBe(12_000n);
  });

  it("charges nothing for a tool that fails, and the same permit buys a later call", async () => {
    const account = accountOf(4);
    const quote = await quoteIntel();
    const { header, payload } = await uptoPayment(account, quote);
    const before = await tokenBalance(account.address);
    const failed = await t.post(
      "/portfolio",
      { tokenId: 1, walletAddress: account.address },
      {
        "PAYMENT-SIGNATURE": header,
      },
    );
    expect(failed.status).toBe(503);
    expect(await tokenBalance(account.address)).toBe(before);
    const auth = (payload.payload as { permit2Authorization: { from: string; nonce: string } }).permit2Authorization;
    expect(await permit2NonceUsed(chain(), auth.from, BigInt(auth.nonce))).toBe(false);
    // Given back: the permit pays the next call.
    const later = await t.post("/intel", { tokenId: 1 }, { "PAYMENT-SIGNATURE": header });
    expect(later.status, await refusalOf(later)).toBe(200);
    expect(chargedOf(later).charged).toBe(12_000n);
    expect(before - (await tokenBalance(account.address))).toBe(12_000n);
    expect(await permit2NonceUsed(chain(), auth.from, BigInt(auth.nonce))).toBe(true);
  });

  it.each([
    [
      "another payee",
      { payTo: DEVNET_ACCOUNTS[5]!.address },
      /the permit pays 0x[0-9a-fA-F]{40}, the price quoted is for/,
    ],
    [
      "another facilitator",
      { extra: { facilitatorAddress: DEVNET_ACCOUNTS[5]!.address } },
      /the permit names the facilitator 0x[0-9a-fA-F]{40}; this service's upto payments are settled by/,
    ],
    ["another amount", { amount: "500000" }, /the permit's amount is 500000, the price quoted .* is 1000000/],
  ] as [string, Partial<PaymentRequirements>, RegExp][])(
    "refuses a permit signed for %s, saying so",
    async (_, change, sentence) => {
      const account = accountOf(4);
      const quote = await quoteIntel();
      const accept = uptoAccept(quote);
      const signedFor = { ...accept, ...change, extra: { ...accept.extra, ...change.extra } } as PaymentRequirements;
      const { header } = await uptoPayment(account, quote, signedFor);
      const before = await tokenBalance(account.address);
      const res = await t.post("/intel", { tokenId: 1 }, { "PAYMENT-SIGNATURE": header });
      expect(res.status).toBe(402);
      const refusal = parsePaymentRefusal(((await res.json()) as PaymentRequired).error);
      expect(refusal.reason).toBe("invalid_payment");
      expect(refusal.message).toMatch(sentence);
      expect(await tokenBalance(account.address)).toBe(before);
    },
  );

  it("refuses a permit changed after it was signed, before anything is done in the payer's name", async () => {
    const account = accountOf(4);
    const quote = await quoteIntel();
    const { payload } = await uptoPayment(account, quote);
    const auth = (payload.payload as { permit2Authorization: { deadline: string } }).permit2Authorization;
    const changed = {
      ...payload,
      payload: {
        ...payload.payload,
        permit2Authorization: { ...auth, deadline: String(Number(auth.deadline) - 1) },
      },
    } as PaymentPayload;
    const res = await t.post("/intel", { tokenId: 1 }, { "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(changed) });
    expect(res.status).toBe(402);
    const refusal = parsePaymentRefusal(((await res.json()) as PaymentRequired).error);
    expect(refusal).toEqual({ reason: "invalid_payment", message: "the authorization is not signed by its payer." });
  });

  it("refuses a payer that has not approved Permit2, saying what to do", async () => {
    const account = accountOf(5);
    const approve = async (amount: bigint) => {
      const hash = await walletOf(account).writeContract({
        address: asset(),
        abi: erc20Abi,
        functionName: "approve",
        args: [PERMIT2_ADDRESS, amount],
      });
      expect((await chain().waitForTransactionReceipt({ hash })).status).toBe("success");
    };
    await approve(0n);
    try {
      const quote = await quoteIntel();
      const { header } = await uptoPayment(account, quote);
      const before = await tokenBalance(account.address);
      const res = await t.post("/intel", { tokenId: 1 }, { "PAYMENT-SIGNATURE": header });
      expect(res.status).toBe(402);
      const refusal = parsePaymentRefusal(((await res.json()) as PaymentRequired).error);
      expect(refusal.reason).toBe("invalid_payment");
      expect(refusal.message).toMatch(
        /has not approved Permit2 .* one-time approval \(permit2_allowance_required\)\.$/,
      );
      expect(await tokenBalance(account.address)).toBe(before);
    } finally {
      await approve(maxUint256);
    }
  });
});

describe("the ledger's reconciler and upto claims", () => {
  it("gives back a pending upto claim whose permit expired unused, and records one settled on chain with what it took", async () => {
    const account = accountOf(6);
    const quote = await quoteIntel();
    const unused = await uptoPayment(account, quote);
    const settled = await uptoPayment(account, quote);
    const claim = (payload: PaymentPayload, requestId: string, validBefore: Date) => {
      const auth = (payload.payload as { permit2Authorization: { from: string; nonce: string } }).permit2Authorization;
      const nonce = toHex(BigInt(auth.nonce), { size: 32 });
      return t.ledger.claim({
        paymentKey: `upto:${auth.from.toLowerCase()}:${nonce}`,
        route: "/intel",
        method: "POST",
        tokenId: 1,
        payer: account.address,
        nonce,
        caller: null,
        pricePoint: "standard",
        amount: "1000000",
        asset: asset(),
        network: network(),
        payTo: payTo(),
        validBefore,
        requestId,
      });
    };
    // A claim cut short before its settlement, its permit expired; and one whose settlement went through on chain
    // (x402's facilitator, as the service's would have) but was never recorded.
    expect(await claim(unused.payload, "cut-unused", new Date(Date.now() - 60_000))).toMatchObject({
      outcome: "claimed",
    });
    expect(await claim(settled.payload, "cut-settled", new Date(Date.now() + 60_000))).toMatchObject({
      outcome: "claimed",
    });
    // Settled by the service's own facilitator, whose answer is then lost.
    const done = await t.payments.facilitator.settle(settled.payload, { ...uptoAccept(quote), amount: "34000" });
    expect(done).toMatchObject({ success: true, amount: "34000" });

    const result = await t.reconcile();
    expect(result.settled).toBeGreaterThanOrEqual(1);
    expect(result.dropped).toBeGreaterThanOrEqual(1);
    const entries = await ledgerEntries();
    expect(entries.find((entry) => entry.requestId === "cut-settled")).toMatchObject({
      amount: "34000",
      ceiling: "1000000",
      transaction: done.transaction,
    });
    expect(entries.find((entry) => entry.requestId === "cut-unused")).toBeUndefined();
    // Given back: the key is free again.
    expect(await claim(unused.payload, "cut-unused-again", new Date(Date.now() + 60_000))).toMatchObject({
      outcome: "claimed",
    });
    await t.ledger.release(`upto:${account.address.toLowerCase()}:${nonceOf(unused.payload)}`);
  });

  it("keeps pending, logged as an error, an expired upto claim whose nonce was used without a settlement found", async () => {
    const account = accountOf(6);
    const quote = await quoteIntel();
    const { payload } = await uptoPayment(account, quote);
    const nonce = BigInt(nonceOf(payload));
    const paymentKey = `upto:${account.address.toLowerCase()}:${nonceOf(payload)}`;
    expect(
      await t.ledger.claim({
        paymentKey,
        route: "/intel",
        method: "POST",
        tokenId: 1,
        payer: account.address,
        nonce: nonceOf(payload),
        caller: null,
        pricePoint: "standard",
        amount: "1000000",
        asset: asset(),
        network: network(),
        payTo: payTo(),
        validBefore: new Date(Date.now() - 60_000),
        requestId: "cut-spent-elsewhere",
      }),
    ).toMatchObject({ outcome: "claimed" });
    // The payer spends the nonce itself (Permit2's invalidation): no transfer to the payee comes with it.
    const hash = await walletOf(account).writeContract({
      address: PERMIT2_ADDRESS,
      abi: permit2Abi,
      functionName: "invalidateUnorderedNonces",
      args: [nonce >> 8n, 1n << (nonce & 0xffn)],
    });
    expect((await chain().waitForTransactionReceipt({ hash })).status).toBe("success");
    const logged = t.logs().length;
    await t.reconcile();
    // Not given back by the clock: it may have been paid; the operator is told.
    const [row] = await t.db.query<{ status: string }>("SELECT status FROM settlements WHERE payment_key = $1", [
      paymentKey,
    ]);
    expect(row).toEqual({ status: "pending" });
    const errors = t
      .logs()
      .slice(logged)
      .map((line) => JSON.parse(line) as { level: number; msg: string; paymentKey?: string })
      .filter((line) => line.paymentKey === paymentKey);
    expect(errors).toEqual([
      expect.objectContaining({ level: 50, msg: expect.stringMatching(/Permit2 nonce is used on chain/) }),
    ]);
    await t.db.query("DELETE FROM settlements WHERE payment_key = $1", [paymentKey]);
  });
});

const nonceOf = (payload: PaymentPayload) =>
  toHex(BigInt((payload.payload as { permit2Authorization: { nonce: string } }).permit2Authorization.nonce), {
    size: 32,
  });

/** A wallet of `account` over `client`'s transport, with the public actions (its reads carry the account). */
const walletOf = (account: PrivateKeyAccount, client: { request: PublicClient["request"] } = chain()) =>
  chainWalletOf({
    account,
    network: `eip155:${DEVNET_L2_CHAIN_ID}`,
    chain: client,
    pollingInterval: 50,
    retryCount: 0,
  });

describe("a facilitator over HTTP that lists upto", () => {
  const key = DEVNET_ACCOUNTS[9]!.privateKey;
  const facilitatorAccount = privateKeyToAccount(key);
  let served: RunningServer;
  let h: PaidTestServer;
  // The service's chain is known once it runs; the facilitator reads and sends through it from then on.
  let facilitatorChain: { request: PublicClient["request"] } | undefined;

  beforeAll(async () => {
    const network = `eip155:${DEVNET_L2_CHAIN_ID}` as Network;
    const signer = facilitatorSignerOf(
      walletOf(facilitatorAccount, {
        request: ((args: never) => facilitatorChain!.request(args)) as PublicClient["request"],
      }),
    );
    // x402's own facilitator, as hosted facilitators run it: its /supported names the upto facilitator's address.
    const facilitator = new x402Facilitator()
      .register(network, new ExactFacilitator(signer))
      .register(network, new UptoFacilitator(signer));
    const app = express();
    app.use(express.json({ limit: "1mb" }));
    app.post("/verify", async (req, res) => {
      res.json(await facilitator.verify(req.body.paymentPayload, req.body.paymentRequirements));
    });
    app.post("/settle", async (req, res) => {
      res.json(await facilitator.settle(req.body.paymentPayload, req.body.paymentRequirements));
    });
    app.get("/supported", (_req, res) => {
      res.json(facilitator.getSupported());
    });
    served = await listen(app, "127.0.0.1", 0);
    h = await startPaidTestServer({ env: { FACILITATOR_URL: served.url, FACILITATOR_PRIVATE_KEYS: "" } });
    facilitatorChain = h.devnet.l2.publicClient as unknown as PublicClient;
  });

  afterAll(async () => {
    await h?.close();
    await served?.close();
  });

  it("offers upto naming that facilitator's address, and its payments settle there for the work done", async () => {
    const res = await h.post("/intel", { tokenId: 1 });
    const quote = (await res.json()) as PaymentRequired;
    const upto = uptoAccept(quote);
    expect(upto.extra.facilitatorAddress).toBe(facilitatorAccount.address);
    const account = privateKeyToAccount(h.devnet.deployment.accounts[2]!.privateKey);
    const payer = x402UptoPayer({
      account,
      chain: h.devnet.l2.publicClient,
      network: `eip155:${h.devnet.l2.chainId}`,
      asset: h.devnet.deployment.addresses.usdToken,
    });
    const before = await h.balance(account.address);
    const paid = await payer.post(`${h.server.url}/intel`, { tokenId: 1 });
    expect(paid.status, await refusalOf(paid)).toBe(200);
    const settlement = decodePaymentResponseHeader(paid.headers.get("payment-response")!);
    expect(settlement).toMatchObject({ success: true, amount: "12000", extra: { chargedAmount: "12000" } });
    expect(before - (await h.balance(account.address))).toBe(12_000n);
    const receipt = await h.devnet.l2.publicClient.getTransactionReceipt({ hash: settlement.transaction as Hex });
    expect(receipt.from.toLowerCase()).toBe(facilitatorAccount.address.toLowerCase());
  });
});

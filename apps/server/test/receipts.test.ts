import { MCP_PAYMENT_META, MCP_PAYMENT_RESPONSE_META, type PaymentCatalog } from "@agent-tools/schema";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import {
  decodeSignedOffers,
  type EIP712SignedOffer,
  type EIP712SignedReceipt,
  extractOffersFromPaymentRequired,
  extractReceiptFromResponse,
  OFFER_RECEIPT,
  verifyOfferSignatureEIP712,
  verifyReceiptMatchesOffer,
  verifyReceiptSignatureEIP712,
} from "@x402/extensions/offer-receipt";
import { appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paymentRequiredIn } from "./helpers/mcp-results.js";
import { type PaidTestServer, startPaidTestServer } from "./helpers/paid-server.js";

// Offers and receipts are read and checked with x402's own offer-receipt client helpers, not with code of ours.

let t: PaidTestServer;
let signer: string;
const account = (index: number) => t.devnet.deployment.accounts[index]!.address;

beforeAll(async () => {
  t = await startPaidTestServer();
  signer = ((await (await t.get("/.well-known/x402")).json()) as PaymentCatalog).receiptSigner!;
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe("x402's offer-receipt extension", () => {
  it("names its signer in the payment catalog: on local chains, the devnet's operator key", () => {
    expect(signer).toBe(t.devnet.deployment.accounts[0]!.address);
  });

  it("signs the offer of each 402's price: what is sold, to whom it is paid, how much, until when", async () => {
    for (const [path, body] of [
      ["/intel", { tokenId: 3 }],
      ["/drop-radar", { tokenId: 5, limit: 5 }],
    ] as const) {
      const quote = await t.quote({ path, body });
      const offers = extractOffersFromPaymentRequired(quote);
      expect(offers).toHaveLength(quote.accepts.length);
      const offer = offers[0] as EIP712SignedOffer;
      expect(offer.format).toBe("eip712");
      const verified = await verifyOfferSignatureEIP712(offer);
      expect(verified.signer).toBe(signer);
      const [requirement] = quote.accepts;
      expect(verified.payload).toMatchObject({
        resourceUrl: quote.resource.url,
        scheme: requirement!.scheme,
        network: requirement!.network,
        asset: requirement!.asset,
        payTo: requirement!.payTo,
        amount: requirement!.amount,
      });
      expect(verified.payload.validUntil).toBeGreaterThan(Date.now() / 1000 + 60);
    }
  });

  it("gives each paid answer a receipt signed by the same key: this payer, this resource, this transaction", async () => {
    const payer = 2;
    const call = await t.paidCall({ path: "/intel", body: { tokenId: 2 } }, payer);
    expect(call.res.status).toBe(200);
    const settlement = decodePaymentResponseHeader(call.res.headers.get("payment-response")!);
    const receipt = extractReceiptFromResponse(call.res) as EIP712SignedReceipt;
    expect(receipt?.format).toBe("eip712");
    const verified = await verifyReceiptSignatureEIP712(receipt);
    expect(verified.signer).toBe(signer);
    expect(verified.payload).toMatchObject({
      payer: account(payer),
      network: settlement.network,
      transaction: settlement.transaction,
      resourceUrl: call.required.resource.url,
    });
    // With the offer, the receipt says what was bought and for how much; the payer lost exactly that.
    const [offer] = decodeSignedOffers(extractOffersFromPaymentRequired(call.required));
    expect(verifyReceiptMatchesOffer(receipt, offer!, [account(payer)])).toBe(true);
    expect(call.spent).toBe(BigInt(offer!.amount));
    // The transaction it names is on chain and paid the offer's payee.
    const mined = await t.devnet.l2.publicClient.getTransactionReceipt({
      hash: verified.payload.transaction as `0x${string}`,
    });
    expect(mined.status).toBe("success");
  });

  it("gives the same receipt again with the answer a payment identifier recovers", async () => {
    const quote = await t.quote({ path: "/intel", body: { tokenId: 3 } });
    const extensions = structuredClone(quote.extensions ?? {});
    appendPaymentIdentifierToExtensions(extensions);
    const payment = await t.pay(3, { ...quote, extensions } as PaymentRequired);
    const first = await t.post("/intel", { tokenId: 3 }, { "PAYMENT-SIGNATURE": payment });
    const again = await t.post("/intel", { tokenId: 3 }, { "PAYMENT-SIGNATURE": payment });
    expect([first.status, again.status]).toEqual([200, 200]);
    const receipt = extractReceiptFromResponse(first);
    expect(receipt).toBeDefined();
    expect(extractReceiptFromResponse(again)).toEqual(receipt);
  });

  it("signs offers and receipts over MCP for the tool's resource, mcp://tool/<name>", async () => {
    const mcp = new Client({ name: "receipt-test", version: "1.0.0" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${t.server.url}/mcp`)));
    const call = (meta: Record<string, unknown>) =>
      mcp.callTool({ name: "intel", arguments: { tokenId: 4 }, _meta: meta }) as Promise<CallToolResult>;
    try {
      const unpaid = await call({});
      const quote = paymentRequiredIn(unpaid);
      expect(quote.resource.url).toBe("mcp://tool/intel");
      const [offer] = extractOffersFromPaymentRequired(quote);
      expect((await verifyOfferSignatureEIP712(offer as EIP712SignedOffer)).payload.resourceUrl).toBe(
        "mcp://tool/intel",
      );
      const payment = await t.pay(4, quote);
      const paid = await call({ [MCP_PAYMENT_META]: JSON.parse(Buffer.from(payment, "base64").toString()) });
      expect(paid.isError).toBeFalsy();
      const settlement = paid._meta?.[MCP_PAYMENT_RESPONSE_META] as { extensions: Record<string, unknown> };
      const receipt = (settlement.extensions[OFFER_RECEIPT] as { info: { receipt: EIP712SignedReceipt } }).info.receipt;
      const verified = await verifyReceiptSignatureEIP712(receipt);
      expect(verified.signer).toBe(signer);
      expect(verified.payload).toMatchObject({ payer: account(4), resourceUrl: "mcp://tool/intel" });
    } finally {
      await mcp.close();
    }
  });

  it("signs nothing for a call that was not paid", async () => {
    const res = await t.post("/intel", { tokenId: 6001 });
    expect(res.status).toBe(403);
    expect(res.headers.get("payment-response")).toBeNull();
  });
});

import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { paidRouteNames } from "@agent-tools/schema";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { startFaultProxy } from "@agent-tools/upstream-sim";
import { verifyOfferSignatureEIP712, verifyReceiptSignatureEIP712 } from "@x402/extensions/offer-receipt";
import { validatePaymentIdentifier } from "@x402/extensions/payment-identifier";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, inject, it } from "vitest";
import {
  createAgentToolsClient,
  ForbiddenError,
  InvalidReceiptError,
  NotFoundError,
  PaymentRequiredError,
  proofOfPayment,
  UnauthorizedError,
  ValidationError,
} from "../src/index.js";
import { balanceOf } from "./helpers/payment-chain.js";

/** The embedded default the package's test files share (test/global-setup.ts). */
const service = attachEmbeddedService(inject("embeddedService"));
const holder = (index: number) => privateKeyToAccount(DEVNET_ACCOUNTS[index]!.privateKey);

describe("public routes", () => {
  it("reads health, agent info, registration, binding, catalog and the OpenAPI document", async () => {
    const client = createAgentToolsClient({ baseUrl: service.url });
    expect(await client.health()).toEqual({ ok: true, service: "agent-tools" });
    const info = await client.agentInfo(1);
    expect(info.owner).toBe(holder(1).address);
    expect((await client.registration(1)).registrations[0]!.agentId).toBe(1);
    expect((await client.binding(1)).bound).toBe(true);
    expect((await client.catalog()).items).toHaveLength(paidRouteNames.length);
    expect((await client.openapi()).openapi).toBe("3.1.0");
  });

  it("throws NotFoundError for an unrevealed agent", async () => {
    const client = createAgentToolsClient({ baseUrl: service.url });
    await expect(client.agentInfo(6500)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("paid tools", () => {
  it("a holder signs in automatically and pays the discounted price", async () => {
    const client = createAgentToolsClient({ baseUrl: service.url, account: holder(1) });
    const { data, payment } = await client.intel({ tokenId: 1 });
    expect(data.caller).toBe(holder(1).address);
    expect(payment).toMatchObject({ amount: "10000", amountUsd: "0.01", payer: holder(1).address });
    expect(payment!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    // The second call signs in on its first request.
    const again = await client.intel({ tokenId: 10 });
    expect(again.payment!.amount).toBe("10000");
  });

  it("signIn: false calls anonymously at the standard price", async () => {
    const client = createAgentToolsClient({ baseUrl: service.url, account: holder(2), signIn: false });
    const { data, payment } = await client.intel({ tokenId: 2 });
    expect(data.caller).toBeUndefined();
    expect(payment!.amount).toBe("1000000");
  });

  it("refuses a quote above maxPaymentPerCall before signing anything", async () => {
    const client = createAgentToolsClient({
      baseUrl: service.url,
      account: holder(3),
      signIn: false,
      maxPaymentPerCall: "0.50",
    });
    const error = await client.intel({ tokenId: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentRequiredError);
    expect((error as PaymentRequiredError).message).toMatch(/1\.00 USD, above maxPaymentPerCall 0\.50 USD/);
    expect((error as PaymentRequiredError).quote?.accepts[0]?.amount).toBe("1000000");
  });

  it("without an account, reports the quote", async () => {
    const client = createAgentToolsClient({ baseUrl: service.url });
    const error = await client.intel({ tokenId: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentRequiredError);
    expect((error as PaymentRequiredError).message).toMatch(/pass an account/);
  });

  it("throws ForbiddenError with the clearance needed for a Holder token on offerRadar", async () => {
    const client = createAgentToolsClient({ baseUrl: service.url, account: holder(1) });
    const error = await client.offerRadar({ tokenId: 1, slugs: ["night-owls"] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as ForbiddenError).requiredClearance).toBe("Elite");
  });

  it("sends a request again when its connection is reset on the way, the paid one with the same payment", async () => {
    // Anonymous: a sign-in names the service's own origin, and this client reaches it through a proxy.
    const proxy = await startFaultProxy(service.url);
    try {
      const client = createAgentToolsClient({ baseUrl: proxy.url, account: holder(4), signIn: false });
      proxy.resetNext({ match: (r) => r.headers["payment-signature"] === undefined });
      const challenged = proxy.requests().length;
      const first = await client.intel({ tokenId: 4 });
      expect(first.payment!.amount).toBe("1000000");
      proxy.resetNext({ match: (r) => r.headers["payment-signature"] !== undefined });
      const { data, payment } = await client.intel({ tokenId: 4 });
      expect(data.tokenId).toBe(4);
      expect(payment).toMatchObject({ amount: "1000000", payer: holder(4).address });
      expect(payment!.transaction).not.toBe(first.payment!.transaction);

      const seen = proxy.requests().slice(challenged);
      expect(seen.map((r) => [r.headers["payment-signature"] === undefined ? "ask" : "pay", r.fate])).toEqual([
        ["ask", "reset"],
        ["ask", "forwarded"],
        ["pay", "forwarded"],
        ["ask", "forwarded"],
        ["pay", "reset"],
        ["pay", "forwarded"],
      ]);
      // The payment sent twice is one payment: the same signed authorization, served once.
      expect(seen[5]!.headers["payment-signature"]).toBe(seen[4]!.headers["payment-signature"]);
    } finally {
      await proxy.close();
    }
  });

  it("has the answer of a paid call cut off after settlement again on its retry, paid once (payment identifier)", async () => {
    const proxy = await startFaultProxy(service.url);
    try {
      const payer = holder(6);
      const client = createAgentToolsClient({ baseUrl: proxy.url, account: payer, signIn: false });
      const before = await balanceOf(service, payer.address);
      // The service answers and settles; the proxy passes on half of the answer and closes the connection.
      proxy.inject({ kind: "truncate" }, { count: 1, match: (r) => r.headers["payment-signature"] !== undefined });
      const { data, payment } = await client.intel({ tokenId: 6 });
      expect(data.tokenId).toBe(6);
      expect(payment).toMatchObject({ amount: "1000000", payer: payer.address });
      const paid = proxy.requests().filter((r) => r.headers["payment-signature"] !== undefined);
      expect(paid.map((r) => r.fate)).toEqual(["truncate", "forwarded"]);
      expect(paid[1]!.headers["payment-signature"]).toBe(paid[0]!.headers["payment-signature"]);
      // The payment names an identifier (x402's payment-identifier extension), valid by the extension's own rules.
      const sent = JSON.parse(Buffer.from(paid[0]!.headers["payment-signature"] as string, "base64").toString());
      expect(validatePaymentIdentifier(sent.extensions?.["payment-identifier"])).toEqual({ valid: true });
      expect(sent.extensions["payment-identifier"].info.id).toMatch(/^[A-Za-z0-9_-]{16,128}$/);
      expect(await balanceOf(service, payer.address)).toBe(before - 1_000_000n);
    } finally {
      await proxy.close();
    }
  });

  it("returns the service's signed receipt, checked, and the proof of payment ERC-8004 feedback takes", async () => {
    const payer = holder(8);
    const client = createAgentToolsClient({ baseUrl: service.url, account: payer });
    const { receiptSigner } = await client.catalog();
    const { payment } = await client.intel({ tokenId: 8 });
    const receipt = payment!.receipt!;
    expect(receipt.signer).toBe(receiptSigner);
    // Checked again with x402's own helpers: the receipt names this payer and transaction, the offer this price.
    const verified = await verifyReceiptSignatureEIP712(receipt.receipt);
    expect(verified.signer).toBe(receiptSigner);
    expect(verified.payload).toMatchObject({ payer: payer.address, transaction: payment!.transaction });
    const offer = await verifyOfferSignatureEIP712(receipt.offer!);
    expect(offer.signer).toBe(receiptSigner);
    expect(offer.payload).toMatchObject({ amount: "10000", payTo: payment!.payTo });
    expect(proofOfPayment(payment!)).toEqual({
      fromAddress: payer.address,
      toAddress: payment!.payTo,
      chainId: payment!.network.split(":")[1],
      txHash: payment!.transaction,
    });
  });

  it("throws InvalidReceiptError, with the answer paid for, when the receipt is not signed by the trusted key", async () => {
    const payer = holder(9);
    const stranger = privateKeyToAccount(DEVNET_ACCOUNTS[2]!.privateKey).address;
    const client = createAgentToolsClient({ baseUrl: service.url, account: payer, receiptSigner: stranger });
    const before = await balanceOf(service, payer.address);
    const error = await client.intel({ tokenId: 9 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidReceiptError);
    expect((error as InvalidReceiptError).message).toMatch(/does not hold: it is signed by 0x/);
    const answer = (error as InvalidReceiptError).answer as { data: { tokenId: number }; payment: { amount: string } };
    expect(answer.data.tokenId).toBe(9);
    expect(await balanceOf(service, payer.address)).toBe(before - BigInt(answer.payment.amount));
  });

  it("throws ValidationError with the fields before sending a bad request", async () => {
    const client = createAgentToolsClient({ baseUrl: "http://127.0.0.1:9", account: holder(1) });
    const error = await client.dropRadar({ tokenId: 0, limit: 99 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).fields.sort()).toEqual(["limit", "tokenId"]);
  });
});

describe("missions and the operator ledger", () => {
  /** The Elite token the embedded default names at start, and the demo account holding it. */
  const elite = () => {
    const match = /Elite\s+clearance: token (\d+), held by account #(\d+)/.exec(service.output());
    if (!match) throw new Error(`no Elite token named:\n${service.output()}`);
    return { tokenId: Number(match[1]), account: holder(Number(match[2])) };
  };
  const paid: string[] = [];

  it("an Elite holder queues a mission (202) and sees it done", async () => {
    const { tokenId, account } = elite();
    const client = createAgentToolsClient({ baseUrl: service.url, account });
    const queued = await client.dispatch({ tokenId, mission: { tool: "intel" } });
    expect(queued.data.mission).toMatchObject({ tokenId, tool: "intel", status: "queued" });
    expect(queued.payment).toMatchObject({ amount: "10000", payer: account.address });
    paid.push(queued.payment!.transaction);
    const { id } = queued.data.mission;
    await service.printed(new RegExp(`"mission":"${id}".*"msg":"mission done"`));
    const list = await client.missions({ tokenId, limit: 5 });
    paid.push(list.payment!.transaction);
    expect(list.data.missions.find((m) => m.id === id)?.status).toBe("done");
  });

  it("an unrevealed agent gets ForbiddenError agent_not_revealed", async () => {
    const error = await createAgentToolsClient({ baseUrl: service.url, account: holder(7) })
      .dispatch({ tokenId: 6001, mission: { tool: "intel" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as ForbiddenError).code).toBe("agent_not_revealed");
  });

  it("the operator (account 0) reads the ledger with the payments made", async () => {
    const report = await createAgentToolsClient({ baseUrl: service.url, account: holder(0) }).ledger({ limit: 500 });
    const settled = report.entries.map((e) => e.transaction);
    expect(paid.length).toBeGreaterThan(0);
    for (const tx of paid) expect(settled).toContain(tx);
  });

  it("the operator pages through the book and exports it: the same payments, the ones made among them", async () => {
    const operator = createAgentToolsClient({ baseUrl: service.url, account: holder(0) });
    const paged: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const page = await operator.ledgerEntries({ limit: 2, ...(after ? { after } : {}) });
      paged.push(...page.entries.map((e) => e.transaction));
      after = page.next ?? undefined;
      pages += 1;
    } while (after);
    expect(pages).toBeGreaterThan(1);
    for (const tx of paid) expect(paged).toContain(tx);

    const jsonl = await new Response(await operator.exportLedger({ format: "jsonl" })).text();
    const exported = jsonl
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line).transaction);
    expect(exported).toEqual(paged);
    const csv = await new Response(await operator.exportLedger()).text();
    expect(csv.split("\r\n")[0]).toMatch(/^settledAt,kind,route,method,/);
    await expect(
      createAgentToolsClient({ baseUrl: service.url, account: holder(1) }).exportLedger(),
    ).rejects.toBeInstanceOf(ForbiddenError);
  });

  it("another account gets ForbiddenError not_operator; no account, UnauthorizedError", async () => {
    const error = await createAgentToolsClient({ baseUrl: service.url, account: holder(1) })
      .ledger()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as ForbiddenError).code).toBe("not_operator");
    await expect(createAgentToolsClient({ baseUrl: service.url }).ledger()).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it("the service answers 401 with the SIWX challenge to a request without a sign-in", async () => {
    const res = await fetch(`${service.url}/operator/ledger`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^SIWX realm="agent-tools operator", chains="eip155:\d+/);
    expect((await res.json()).error.code).toBe("sign_in_required");
  });
});

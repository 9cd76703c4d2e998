import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { mcpPaidToolNames } from "@agent-tools/schema";
import { attachEmbeddedService } from "@agent-tools/server/embedded-process";
import { startFaultProxy } from "@agent-tools/upstream-sim";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, inject, it } from "vitest";
import { connectMcpClient, PaymentRequiredError } from "../src/mcp.js";
import { balanceOf } from "./helpers/payment-chain.js";

/** The embedded default the package's test files share (test/global-setup.ts). */
const service = attachEmbeddedService(inject("embeddedService"));
const holder = (index: number) => privateKeyToAccount(DEVNET_ACCOUNTS[index]!.privateKey);

describe("the MCP client", () => {
  it("lists the tools and pays a holder's call at the holder price, signed in on its own", async () => {
    const client = await connectMcpClient({ baseUrl: service.url, account: holder(1) });
    try {
      const names = (await client.listTools()).map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(Object.values(mcpPaidToolNames)));
      const { result, payment } = await client.callTool("intel", { tokenId: 1 });
      expect(result.structuredContent).toMatchObject({ tokenId: 1, caller: holder(1).address });
      expect(payment).toMatchObject({ amount: "10000", amountUsd: "0.01", payer: holder(1).address });
      // The receipt of an MCP call, checked by the client: signed by the catalog's signer, for the tool's resource.
      const catalog = (await (await fetch(`${service.url}/.well-known/x402`)).json()) as { receiptSigner: string };
      expect(payment!.receipt!.signer).toBe(catalog.receiptSigner);
      expect(payment!.receipt!.receipt.payload).toMatchObject({
        resourceUrl: "mcp://tool/intel",
        transaction: payment!.transaction,
      });
      expect(client.spentUsd()).toBe("0.01");
      // A free read costs nothing.
      const free = await client.callTool("agent_info", { tokenId: 1 });
      expect(free.payment).toBeNull();
      expect(free.result.structuredContent).toMatchObject({ tokenId: 1 });
    } finally {
      await client.close();
    }
  });

  it("has the answer of a paid call cut off after settlement again on its retry, paid once", async () => {
    const proxy = await startFaultProxy(service.url);
    const payer = holder(7);
    // Anonymous: a sign-in names the service's own origin, and this client reaches it through a proxy.
    const client = await connectMcpClient({ baseUrl: proxy.url, account: payer, signIn: false });
    try {
      const before = await balanceOf(service, payer.address);
      // The call asks (1st POST: the quote), then pays (2nd): the service answers and settles, and the proxy passes
      // on half of that answer and closes the connection.
      const connected = proxy.requests().length;
      let posts = 0;
      proxy.inject({ kind: "truncate" }, { count: 1, match: (r) => r.method === "POST" && ++posts === 2 });
      const { result, payment } = await client.callTool("intel", { tokenId: 7 });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ tokenId: 7 });
      expect(payment).toMatchObject({ amount: "1000000", payer: payer.address });
      const posted = proxy
        .requests()
        .slice(connected)
        .filter((r) => r.method === "POST");
      expect(posted.map((r) => r.fate)).toEqual(["forwarded", "truncate", "forwarded"]);
      expect(await balanceOf(service, payer.address)).toBe(before - 1_000_000n);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("refuses, before signing, a quote above maxPaymentPerCall or past the budget", async () => {
    const capped = await connectMcpClient({
      baseUrl: service.url,
      account: holder(2),
      signIn: false,
      maxPaymentPerCall: "0.50",
    });
    const error = await capped.callTool("intel", { tokenId: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentRequiredError);
    expect((error as PaymentRequiredError).reason).toBe("over_max_payment");
    expect(capped.spentUsd()).toBe("0.00");
    await capped.close();

    const budgeted = await connectMcpClient({
      baseUrl: service.url,
      account: holder(2),
      signIn: false,
      budget: "1.50",
    });
    expect((await budgeted.callTool("intel", { tokenId: 2 })).payment!.amount).toBe("1000000");
    const over = await budgeted.callTool("intel", { tokenId: 2 }).catch((e: unknown) => e);
    expect(over).toBeInstanceOf(PaymentRequiredError);
    expect((over as PaymentRequiredError).reason).toBe("over_budget");
    expect(budgeted.spentUsd()).toBe("1.00");
    await budgeted.close();
  });

  it("returns a failed call's error result, uncharged", async () => {
    const client = await connectMcpClient({ baseUrl: service.url, account: holder(3), signIn: false });
    const { result, payment } = await client.callTool("intel", { tokenId: 0 });
    expect(result.isError).toBe(true);
    // The error body as the result's text (an error result has no structuredContent for clients to check).
    expect(result.structuredContent).toBeUndefined();
    expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({
      error: { code: "invalid_request", details: [{ field: "tokenId" }] },
    });
    expect(payment).toBeNull();
    expect(client.spentUsd()).toBe("0.00");
    await client.close();
  });
});

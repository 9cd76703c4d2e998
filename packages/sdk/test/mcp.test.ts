import { DEVNET_ACCOUNTS } from "@agent-tools/devnet";
import { mcpPaidToolNames } from "@agent-tools/schema";
import { type EmbeddedProcess, spawnEmbeddedService } from "@agent-tools/server";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcpClient, PaymentRequiredError } from "../src/mcp.js";

let service: EmbeddedProcess;
const holder = (index: number) => privateKeyToAccount(DEVNET_ACCOUNTS[index]!.privateKey);

beforeAll(async () => {
  service = await spawnEmbeddedService();
});
afterAll(async () => {
  await service?.close();
});

describe("the MCP client", () => {
  it("lists the tools and pays a holder's call at the holder price, signed in on its own", async () => {
    const client = await connectMcpClient({ baseUrl: service.url, account: holder(1) });
    try {
      const names = (await client.listTools()).map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(Object.values(mcpPaidToolNames)));
      const { result, payment } = await client.callTool("intel", { tokenId: 1 });
      expect(result.structuredContent).toMatchObject({ tokenId: 1, caller: holder(1).address });
      expect(payment).toMatchObject({ amount: "10000", amountUsd: "0.01", payer: holder(1).address });
      expect(client.spentUsd()).toBe("0.01");
      // A free read costs nothing.
      const free = await client.callTool("agent_info", { tokenId: 1 });
      expect(free.payment).toBeNull();
      expect(free.result.structuredContent).toMatchObject({ tokenId: 1 });
    } finally {
      await client.close();
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
    expect(result.structuredContent).toMatchObject({ error: { code: "invalid_request" } });
    expect(payment).toBeNull();
    expect(client.spentUsd()).toBe("0.00");
    await client.close();
  });
});

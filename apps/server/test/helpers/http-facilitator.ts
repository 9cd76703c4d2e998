import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import express from "express";
import type { PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createExactEvmFacilitator } from "../../src/schemes/exact/exact-evm-facilitator.js";
import { createSettlementBatcher } from "../../src/settlement/settlement-batcher.js";
import { createSettlementSender } from "../../src/settlement/settlement-sender.js";
import { listen, type RunningServer } from "../../src/startup/server.js";

export interface TestFacilitator {
  url: string;
  /**
   * Runs once after the next settlement went through on chain, before its answer is sent; when it returns
   * `"drop"` the connection is destroyed instead of answered (the settlement's answer is lost).
   */
  afterNextSettlement(hook: (settled: SettleResponse) => Promise<"answer" | "drop"> | "answer" | "drop"): void;
  settlements: SettleResponse[];
  close(): Promise<void>;
}

/**
 * An x402 facilitator over HTTP (`/verify`, `/settle`, `/supported`), as `FACILITATOR_URL` expects: the built-in
 * facilitator, settling on the devnet's L2 from `privateKey`'s account, for several server processes at once.
 */
export async function startTestFacilitator(
  client: PublicClient,
  privateKey: `0x${string}`,
  network: string,
): Promise<TestFacilitator> {
  const facilitator = createExactEvmFacilitator({
    client,
    // One transaction per settlement, as a facilitator over HTTP answers each `/settle` on its own.
    sender: createSettlementBatcher({
      sender: createSettlementSender({
        client,
        chainId: Number(network.split(":")[1]),
        accounts: [privateKeyToAccount(privateKey)],
      }),
      maxSize: 1,
      windowMs: 0,
    }),
    network,
  });
  const settlements: SettleResponse[] = [];
  let hook: Parameters<TestFacilitator["afterNextSettlement"]>[0] | undefined;
  const app = express();
  app.use(express.json({ limit: "1mb" }));
  type Body = { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements };
  app.post("/verify", async (req, res) => {
    const { paymentPayload, paymentRequirements } = req.body as Body;
    res.json(await facilitator.verify(paymentPayload, paymentRequirements));
  });
  app.post("/settle", async (req, res) => {
    const { paymentPayload, paymentRequirements } = req.body as Body;
    const settled = await facilitator.settle(paymentPayload, paymentRequirements);
    settlements.push(settled);
    const next = hook;
    hook = undefined;
    if (next && (await next(settled)) === "drop") {
      req.socket.destroy();
      return;
    }
    res.json(settled);
  });
  app.get("/supported", (_req, res) => {
    res.json({ kinds: [{ x402Version: 2, scheme: "exact", network }], extensions: [], signers: {} });
  });
  const server: RunningServer = await listen(app, "127.0.0.1", 0);
  return {
    url: server.url,
    settlements,
    afterNextSettlement(next) {
      hook = next;
    },
    close: () => server.close(),
  };
}

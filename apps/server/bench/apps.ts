/**
 * The apps the bench compares: a bare Express 5 app, the reference (plain `@x402/express` with a static price on
 * the same local network, asset and facilitator) and ours (createApp with payments, as the paid-server test helper
 * wires it).
 */
import { toolRoutes } from "@agent-tools/schema";
import type { FacilitatorClient } from "@x402/core/server";
import type { Network, SupportedResponse } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import express, { type Express } from "express";
import type { CollectionIndex } from "../src/chain/collection-index.js";
import type { Facilitator } from "../src/payment/facilitator.js";
import { intelTool } from "../src/tools/intel.js";

/** `GET /healthz` answering `{ ok: true }`, nothing else. */
export function bareExpressApp(): Express {
  const app = express();
  app.get("/healthz", (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}

/** Our facilitator as @x402/core's FacilitatorClient: the same verify and settle, and the one kind it supports. */
export function asFacilitatorClient(facilitator: Facilitator, network: Network, signer: string): FacilitatorClient {
  const supported: SupportedResponse = {
    kinds: [{ x402Version: 2, scheme: "exact", network }],
    extensions: [],
    signers: { "eip155:*": [signer] },
  };
  return {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => supported,
  };
}

export interface ReferenceTerms {
  network: Network;
  asset: string;
  payTo: string;
  amount: string;
  maxTimeoutSeconds: number;
}

/**
 * `POST /intel` behind `@x402/express`'s paymentMiddleware with a static AssetAmount price. The handler answers
 * the same JSON as our route (the same intel tool on the same collection index), without our validation,
 * identification, policy or response check.
 */
export async function referenceApp(
  facilitator: FacilitatorClient,
  terms: ReferenceTerms,
  collection: CollectionIndex,
): Promise<Express> {
  const resourceServer = new x402ResourceServer(facilitator).register(terms.network, new ExactEvmScheme());
  // Load the supported kinds now, so the middleware need not sync with the facilitator on its first request.
  await resourceServer.initialize();
  const app = express();
  app.use(express.json());
  app.use(
    paymentMiddleware(
      {
        "POST /intel": {
          accepts: {
            scheme: "exact",
            network: terms.network,
            payTo: terms.payTo,
            price: { amount: terms.amount, asset: terms.asset, extra: { name: "USD Coin", version: "2" } },
            maxTimeoutSeconds: terms.maxTimeoutSeconds,
          },
          description: toolRoutes.intel.summary,
          mimeType: "application/json",
        },
      },
      resourceServer,
      undefined,
      undefined,
      false,
    ),
  );
  app.post("/intel", async (req, res) => {
    const tokenId = Number((req.body as { tokenId?: unknown }).tokenId);
    const token = collection.token(tokenId);
    if (!token) {
      res.status(404).json({ error: "no such token" });
      return;
    }
    res.json(await intelTool({ tokenId }, { token, collection, now: () => new Date() }));
  });
  return app;
}

/**
 * The reference apps the bench compares ours with, built from off-the-shelf parts only: a bare Express 5 app, and
 * plain `@x402/express` (static prices) settling through x402's own facilitator (`x402Facilitator` with
 * `ExactEvmScheme` of `@x402/evm`) on the payment chain over JSON-RPC, as a service built with x402's packages
 * would run.
 */
import { toolRoutes } from "@agent-tools/schema";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import {
  createSIWxResourceServerExtension,
  declareSIWxExtension,
  InMemorySIWxStorage,
  parseSIWxHeader,
  validateSIWxMessage,
  verifySIWxSignature,
} from "@x402/extensions/sign-in-with-x";
import express, { type Express, type RequestHandler } from "express";
import { x402FacilitatorClient } from "../test/helpers/x402-reference-facilitator.js";

/** `GET /ping` answering `{ ok: true }`, and `GET /agents/info/:id` answering a fixed body: nothing else. */
export function bareExpressApp(infoBody: string): Express {
  const app = express();
  app.get("/ping", (_req, res) => {
    res.json({ ok: true });
  });
  app.get("/agents/info/:id", (_req, res) => {
    res.type("application/json").send(infoBody);
  });
  return app;
}

export interface ReferenceTerms {
  network: Network;
  rpcUrl: string;
  asset: string;
  payTo: string;
  /** The price of an anonymous call and of a signed-in holder's. */
  amount: string;
  holderAmount: string;
  maxTimeoutSeconds: number;
  /** The key x402's facilitator settles with. */
  facilitatorKey: `0x${string}`;
  /** Origin sign-ins must name, and the chains they may be on. */
  publicUrl: string;
  signInChains: string[];
}

/**
 * A sign-in check built from x402's own SIWX functions: parse, validate (origin, age, nonce unused), verify the
 * signature; the nonce is then spent. What a reference service that prices holders apart would do.
 */
function requireSignIn(terms: ReferenceTerms): RequestHandler {
  const spent = new Set<string>();
  return async (req, res, next) => {
    const header = req.get("sign-in-with-x");
    if (!header) return void res.status(401).json({ error: "sign in" });
    try {
      const payload = parseSIWxHeader(header);
      const validation = await validateSIWxMessage(payload, new URL(terms.publicUrl), {
        maxAge: 5 * 60 * 1000,
        checkNonce: (nonce) => !spent.has(nonce),
      });
      if (!validation.isValid || !terms.signInChains.includes(payload.chainId)) {
        return void res.status(401).json({ error: "invalid sign-in" });
      }
      const verification = await verifySIWxSignature(payload);
      if (!verification.isValid) return void res.status(401).json({ error: verification.invalidReason });
      // Spent once the paid retry comes back with the same header (its first request only got the quote).
      if (req.get("payment-signature")) spent.add(payload.nonce);
      next();
    } catch {
      res.status(401).json({ error: "invalid sign-in" });
    }
  };
}

/**
 * `POST /intel` (anonymous, standard price, the 402 carrying the SIWX extension) and `POST /intel-holder` (signed
 * in, holder price) behind `@x402/express`'s paymentMiddleware. The handler answers a fixed intel body: the
 * reference does no validation, policy or tool work of its own.
 */
export async function referenceApp(terms: ReferenceTerms, answer: string): Promise<Express> {
  const facilitator = x402FacilitatorClient({
    network: terms.network,
    rpcUrl: terms.rpcUrl,
    privateKey: terms.facilitatorKey,
  });
  const price = (amount: string) => ({
    scheme: "exact" as const,
    network: terms.network,
    payTo: terms.payTo,
    price: { amount, asset: terms.asset, extra: { name: "USD Coin", version: "2" } },
    maxTimeoutSeconds: terms.maxTimeoutSeconds,
  });
  const anonymous = new x402ResourceServer(facilitator)
    .register(terms.network, new ExactEvmScheme())
    .registerExtension(
      createSIWxResourceServerExtension({ storage: new InMemorySIWxStorage(), origin: terms.publicUrl }),
    );
  const holders = new x402ResourceServer(facilitator).register(terms.network, new ExactEvmScheme());
  await Promise.all([anonymous.initialize(), holders.initialize()]);
  const description = toolRoutes.intel.summary;
  const app = express();
  app.use(express.json());
  app.use(
    paymentMiddleware(
      {
        "POST /intel": {
          accepts: price(terms.amount),
          description,
          mimeType: "application/json",
          extensions: declareSIWxExtension({
            statement: "Sign in as a holder of the collection to pay the holder price.",
            network: terms.signInChains,
          }),
        },
      },
      anonymous,
      undefined,
      undefined,
      false,
    ),
  );
  const signIn = requireSignIn(terms);
  app.use((req, res, next) => (req.path === "/intel-holder" ? signIn(req, res, next) : next()));
  app.use(
    paymentMiddleware(
      { "POST /intel-holder": { accepts: price(terms.holderAmount), description, mimeType: "application/json" } },
      holders,
      undefined,
      undefined,
      false,
    ),
  );
  const reply: RequestHandler = (_req, res) => {
    res.type("application/json").send(answer);
  };
  app.post("/intel", reply);
  app.post("/intel-holder", reply);
  return app;
}

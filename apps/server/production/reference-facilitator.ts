/**
 * x402's reference facilitator (`x402Facilitator` with `@x402/evm`'s `exact` and `batch-settlement` schemes) served
 * over HTTP as hosted facilitators serve it, `POST /verify`, `POST /settle`, `GET /supported`, each behind a bearer
 * key: the facilitator the production rehearsal pays through, in a process of its own.
 *
 * Environment: `RPC_URL` (the payment chain), `PRIVATE_KEY` (the key it settles with), `NETWORK` (CAIP-2),
 * `API_KEY` (the bearer key callers must send). Prints `reference facilitator on <url>` once it listens.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Network, PaymentPayload, PaymentRequirements } from "@x402/core/types";
import express from "express";
import { x402FacilitatorClient } from "../test/helpers/x402-reference-facilitator.js";

const need = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
};

const facilitator = x402FacilitatorClient({
  network: need("NETWORK") as Network,
  rpcUrl: need("RPC_URL"),
  privateKey: need("PRIVATE_KEY") as `0x${string}`,
});
const apiKey = need("API_KEY");

const app = express();
app.use(express.json({ limit: "1mb" }));
app.use((req, res, next) => {
  if (req.get("authorization") !== `Bearer ${apiKey}`) {
    res.status(401).json({ error: "unauthorized" });
    return;
  }
  next();
});
type Body = { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements };
app.post("/verify", async (req, res) => {
  const { paymentPayload, paymentRequirements } = req.body as Body;
  res.json(await facilitator.verify(paymentPayload, paymentRequirements));
});
app.post("/settle", async (req, res) => {
  const { paymentPayload, paymentRequirements } = req.body as Body;
  res.json(await facilitator.settle(paymentPayload, paymentRequirements));
});
app.get("/supported", async (_req, res) => {
  res.json(await facilitator.getSupported());
});
app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
  res.status(500).json({ error: error.message });
});

const server = createServer(app);
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`reference facilitator on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { createMarketplaceDrops } from "../src/upstream/marketplace/drops.js";
import { type OfferWire, toMarketOffer } from "../src/upstream/marketplace/orders.js";
import { createMarketplaceClient } from "../src/upstream/marketplace-client.js";

/**
 * An offer as OpenSea's API answers it for an order opensea-js built: `price.value` is the whole payment, asked
 * against an NFT consideration item whose amount is the quantity wanted; a partial fill lowers only
 * `remaining_quantity` (Seaport scales what is left of the order, so the price of one item never changes).
 */
function collectionOffer(options: { unitWei: bigint; quantity: number; filled: number }): OfferWire {
  const total = options.unitWei * BigInt(options.quantity);
  return {
    order_hash: `0x${"ab".repeat(32)}`,
    chain: "arbitrum",
    protocol_data: {
      parameters: {
        offerer: "0x1111111111111111111111111111111111111111",
        endTime: String(Math.floor(Date.now() / 1000) + 86_400),
        offer: [{ itemType: 1, startAmount: total.toString() }],
        consideration: [
          { itemType: 4, startAmount: String(options.quantity) },
          { itemType: 1, startAmount: ((total * 100n) / 10_000n).toString() },
        ],
      },
    },
    remaining_quantity: options.quantity - options.filled,
    criteria: { collection: { slug: "arbitrum-odyssey-badges" }, contract: { address: `0x${"22".repeat(20)}` } },
    price: { currency: "WETH", decimals: 18, value: total.toString() },
    status: "ACTIVE",
  };
}

describe("marketplace offers", () => {
  it("price one item of an offer at its total over the quantity ordered", () => {
    const offer = toMarketOffer(collectionOffer({ unitWei: 3_500_000_000_000_000n, quantity: 10, filled: 0 }));
    expect(offer).toMatchObject({ kind: "collection", quantity: 10, unitPrice: { amount: 3_500_000_000_000_000n } });
  });

  it("keep the price of one item of a partially filled offer, and count only the items still wanted", () => {
    const offer = toMarketOffer(collectionOffer({ unitWei: 3_500_000_000_000_000n, quantity: 10, filled: 4 }));
    expect(offer?.unitPrice.amount).toBe(3_500_000_000_000_000n);
    expect(offer?.quantity).toBe(6);
  });

  it("fall back to the remaining quantity when the order's items are not given", () => {
    const wire = collectionOffer({ unitWei: 1_000n, quantity: 2, filled: 0 });
    const offer = toMarketOffer({ ...wire, protocol_data: null });
    expect(offer?.unitPrice.amount).toBe(1_000n);
  });
});

describe("drop eligibility", () => {
  it("reads the stages a 403 carries (OpenSea declares its body a DropEligibilityResponse), and refuses one without", async () => {
    const stages = [{ stage_uuid: "7b3f0b8e-1d2c-4c55-9d07-3a0f6f7e2a11", is_eligible: false }];
    let body: unknown = { stages };
    const server = createServer((_req, res) => {
      res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify(body));
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const drops = createMarketplaceDrops(createMarketplaceClient({ baseUrl, apiKey: "test" }));
      expect(await drops.eligibility("a-drop", "token")).toEqual({
        stages: [{ stageUuid: stages[0]!.stage_uuid, eligible: false, maxMintable: null }],
      });
      body = { errors: ["Forbidden"] };
      expect(await drops.eligibility("another-drop", "token")).toEqual({ refused: "forbidden", status: 403 });
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });
});

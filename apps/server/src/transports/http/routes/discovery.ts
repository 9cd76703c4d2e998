import {
  buildPaymentCatalog,
  buildToolManifests,
  canonicalToolManifest,
  PAYMENT_CATALOG_PATH,
  type PaymentTerms,
  type ToolManifest,
  toolManifestPath,
} from "@agent-tools/schema";
import { Router } from "express";
import { type Hex, keccak256, toBytes } from "viem";
import { ServiceError } from "../../../errors/service-error.js";

export interface DiscoveryRoutesDeps {
  /** Public origin of the service (`Config.publicUrl`). */
  publicUrl: string;
  payment: PaymentTerms;
  /** The clock, for the catalog's `generatedAt`. */
  now?: () => Date;
  /**
   * The collection contract (`Config.l1.collection`): the tool manifests' ERC-8257 `access` block names its
   * ERC-7496 clearance trait. Without it the manifests carry no `access` block.
   */
  collection?: string;
  /** Address entitled to register the tools in an ERC-8257 registry; defaults to `payment.payTo`. */
  creatorAddress?: string;
  /** The address that signs offers and receipts, named in the payment catalog. */
  receiptSigner?: string;
}

/** Response header carrying a manifest's ERC-8257 `manifestHash`. */
export const MANIFEST_HASH_HEADER = "Manifest-Hash";

/** ERC-8257 `manifestHash`: keccak256 of the UTF-8 bytes of the manifest's RFC 8785 (JCS) canonical JSON. */
export function toolManifestHash(manifest: ToolManifest | Record<string, unknown>): Hex {
  return keccak256(toBytes(canonicalToolManifest(manifest)));
}

const MANIFEST_FILE = /^([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)\.json$/;

/**
 * Discovery documents generated from the route table and the Zod contracts:
 * - `GET /.well-known/x402`: the x402 v2 payment catalog, every tool with both price points;
 * - `GET /.well-known/ai-tool/<slug>.json`: each tool's ERC-8257 manifest, served as its canonical (JCS)
 *   bytes, so keccak256 of the body is the `manifestHash` (also in the `Manifest-Hash` header).
 */
export function discoveryRoutes(deps: DiscoveryRoutesDeps): Router {
  const { publicUrl, payment } = deps;
  const now = deps.now ?? (() => new Date());
  const router = Router();

  // Everything but `generatedAt` depends on the configuration only: build it once.
  const catalog = buildPaymentCatalog({
    publicUrl,
    payment,
    now: now(),
    ...(deps.receiptSigner ? { receiptSigner: deps.receiptSigner } : {}),
  });
  router.get(PAYMENT_CATALOG_PATH, (_req, res) => {
    res.set("Cache-Control", "public, max-age=60").json({ ...catalog, generatedAt: now().toISOString() });
  });

  const manifests = new Map(
    Object.entries(
      buildToolManifests({
        publicUrl,
        payment,
        ...(deps.collection ? { collection: deps.collection } : {}),
        ...(deps.creatorAddress ? { creatorAddress: deps.creatorAddress } : {}),
      }),
    ).map(([slug, manifest]) => {
      const canonical = canonicalToolManifest(manifest);
      return [slug, { canonical, hash: keccak256(toBytes(canonical)) }] as const;
    }),
  );
  const known = [...manifests.keys()].map(toolManifestPath).join(", ");

  router.get("/.well-known/ai-tool/:file", (req, res) => {
    const slug = MANIFEST_FILE.exec(req.params.file)?.[1];
    const manifest = slug === undefined ? undefined : manifests.get(slug);
    if (!manifest) throw new ServiceError("not_found", `No tool has a manifest here. The tool manifests are ${known}.`);
    // UTF-8 without a byte-order mark, as ERC-8257 requires.
    res
      .type("application/json")
      .set(MANIFEST_HASH_HEADER, manifest.hash)
      .set("Cache-Control", "public, max-age=300")
      .send(manifest.canonical);
  });

  return router;
}

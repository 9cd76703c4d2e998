import { z } from "zod";
import { canonicalize } from "./jcs.js";
import { requestJsonSchema, responseJsonSchema } from "./json-schema.js";
import { mcpEndpointOf, mcpToolNameOf } from "./mcp.js";
import { paidRoutes, routeMethod, type ToolRoute } from "./paid-routes.js";
import type { PaymentTerms } from "./payment-terms.js";
import { clearanceWording, formatUsd, pricePoints } from "./pricing.js";
import { type Clearance, clearanceMeets, clearances } from "./primitives.js";
import { PAYMENT_CATALOG_PATH, SERVICE_DISPLAY_NAME, SERVICE_ICON_PATH } from "./service.js";

/*
 * ERC-8257 (Agent Tool Registry) tool manifests: one per tool, served at `/.well-known/ai-tool/<slug>.json` on
 * the endpoint's origin. The registry commits `keccak256` of the manifest's RFC 8785 (JCS) form on chain
 * (`ToolConfig.manifestHash`); the hash is of the whole document as served, so it is not a field of the
 * manifest itself.
 */

/** `type` of an ERC-8257 v1 tool manifest. */
export const TOOL_MANIFEST_TYPE = "https://ercs.ethereum.org/ERCS/erc-8257#tool-manifest-v1";

/** Version of the tool interface (the OpenAPI document's `info.version`). */
export const TOOL_MANIFEST_VERSION = "1.0.0";

/**
 * ERC-8257 `AccessRequirement.kind` of an ERC-721 holding gated by an ERC-7496 trait value:
 * `bytes4(keccak256("erc7496Trait()"))`, the marker interface `IERC7496Trait` of the trait-gated predicate.
 * Its `data` is `abi.encode(address collection, address traitsContract, bytes32 traitKey, bytes32[] allowedValues)`.
 */
export const ERC7496_TRAIT_REQUIREMENT_KIND = "0x37d8dc22";

/** ERC-7496 trait key of the collection's clearance trait: `keccak256("clearance")`. */
export const ERC7496_CLEARANCE_TRAIT_KEY = "0x694cba7b970e6c32b37e56c790692b70616087d9c170389427c070869bcafdbc";

/** Namespaced extension key (ERC-8257 "Unknown Fields and Extensions") with what the ERC has no field for. */
export const TOOL_MANIFEST_EXTENSION = "x-agent-tools";

/** Well-known path of a tool's manifest. */
export function toolManifestPath(slug: string): string {
  return `/.well-known/ai-tool/${slug}.json`;
}

const codePoints = (text: string) => [...text].length;
/** Control characters (Unicode general category Cc). */
const controlCharacters = /\p{Cc}/u;
const controlCharactersButLineBreaksAndTabs = /[^\P{Cc}\t\n\r]/u;
const lowerHexAddress = /^0x[0-9a-f]{40}$/;
const ZERO_ADDRESS = `0x${"0".repeat(40)}`;
const tagPattern = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const uint256Max = 2n ** 256n - 1n;

const pricingEntrySchema = z.object({
  amount: z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/)
    .max(78)
    .refine((amount) => BigInt(amount) <= uint256Max, { error: "must fit in uint256" })
    .meta({ description: "Price per call in the asset's smallest unit." }),
  asset: z
    .string()
    .regex(/^eip155:[0-9]+\/erc20:0x[0-9a-f]{40}$/)
    .meta({ description: "CAIP-19 asset id, lowercase hex." }),
  recipient: z
    .string()
    .regex(/^eip155:[0-9]+:0x[0-9a-f]{40}$/)
    .meta({ description: "CAIP-10 account that receives the payment, lowercase hex." }),
  protocol: z.literal("x402"),
});

const accessRequirementSchema = z.object({
  kind: z
    .string()
    .regex(/^0x[0-9a-f]{8}$/)
    .meta({ description: "ERC-165-style 4-byte requirement kind." }),
  data: z
    .string()
    .regex(/^0x([0-9a-f]{2})*$/)
    .refine((hex) => (hex.length - 2) / 2 <= 4096, { error: "at most 4096 bytes" })
    .meta({ description: "ABI-encoded payload; its layout is set by `kind`." }),
  label: z
    .string()
    .refine((label) => new TextEncoder().encode(label).length <= 256, { error: "at most 256 bytes of UTF-8" }),
});

const pricePointInfoSchema = z.object({
  name: z.enum(["standard", "discounted"]),
  amount: z.string(),
  usd: z.string(),
  who: z.string(),
});

/** What a caller needs beyond the ERC's fields: how to call the tool and who each price point is for. */
const extensionSchema = z.object({
  method: z.enum(["POST", "GET"]),
  operationId: z.string(),
  x402Version: z.literal(2),
  minimumClearance: z.enum(clearances),
  pricePoints: z.array(pricePointInfoSchema),
  paymentCatalog: z.string(),
  openapi: z.string(),
  mcp: z
    .object({ endpoint: z.string(), transport: z.literal("streamable-http"), toolName: z.string() })
    .meta({ description: "The same tool at the MCP endpoint, paid with x402 over MCP." }),
});

/** An ERC-8257 v1 tool manifest as this service produces it (the ERC's constraints on every field it uses). */
export const toolManifestSchema = z
  .object({
    type: z.literal(TOOL_MANIFEST_TYPE),
    name: z
      .string()
      .refine((name) => codePoints(name) >= 1 && codePoints(name) <= 128, { error: "1 to 128 code points" })
      .refine((name) => !controlCharacters.test(name), { error: "no control characters" }),
    description: z
      .string()
      .refine((text) => codePoints(text) >= 1 && codePoints(text) <= 500, { error: "1 to 500 code points" })
      .refine((text) => !controlCharactersButLineBreaksAndTabs.test(text), { error: "no control characters" }),
    endpoint: z.url().meta({
      description: "URL of the tool. ERC-8257 requires https; a local deployment on http serves it as it is.",
    }),
    inputs: z.record(z.string(), z.unknown()).meta({ description: "JSON Schema of the request body." }),
    outputs: z.record(z.string(), z.unknown()).meta({ description: "JSON Schema of the 200 response." }),
    creatorAddress: z
      .string()
      .regex(lowerHexAddress)
      .refine((address) => address !== ZERO_ADDRESS, { error: "must not be the zero address" })
      .meta({ description: "Address entitled to register the tool in an ERC-8257 registry (lowercase)." }),
    version: z.string(),
    image: z.url(),
    tags: z
      .array(z.string().regex(tagPattern).max(32))
      .max(16)
      .refine((tags) => new Set(tags).size === tags.length, { error: "tags must not repeat" }),
    pricing: z.array(pricingEntrySchema).min(1).max(32),
    access: z
      .object({ logic: z.enum(["AND", "OR"]), requirements: z.array(accessRequirementSchema).min(1).max(256) })
      .optional()
      .meta({ description: "Advisory preflight hint of what earns the discounted price point." }),
    [TOOL_MANIFEST_EXTENSION]: extensionSchema,
  })
  .meta({ id: "ToolManifest", description: "ERC-8257 v1 tool manifest." });
/** An ERC-8257 tool manifest, as served under `/.well-known/tools/`. */
export type ToolManifest = z.infer<typeof toolManifestSchema>;

/** Options of `buildToolManifest`: the service's public origin and payment terms. */
export interface ToolManifestOptions {
  /** Public origin of the service, for example `https://tools.example.com` (no trailing slash). */
  publicUrl: string;
  payment: PaymentTerms;
  /**
   * The collection contract (ERC-721 with the ERC-7496 `clearance` trait). Without it the manifests carry no
   * `access` block.
   */
  collection?: string;
  /** Address entitled to register the tools in an ERC-8257 registry; defaults to the payee (`payment.payTo`). */
  creatorAddress?: string;
}

/* ------------------------------ ABI encoding ------------------------------ */

const hexOfBytes = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");

function addressWord(address: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new Error(`not an address: ${address}`);
  return address.slice(2).toLowerCase().padStart(64, "0");
}

function uintWord(value: number): string {
  return value.toString(16).padStart(64, "0");
}

/** A short string as a left-aligned, zero-padded bytes32 (Solidity's `bytes32("Rare")`), without `0x`. */
function bytes32Word(text: string): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length > 32) throw new Error(`longer than 32 bytes: ${text}`);
  return hexOfBytes(bytes).padEnd(64, "0");
}

/** The ERC-7496 encoding of a clearance value (`bytes32` of its name), `0x`-prefixed. */
export function clearanceTraitValue(clearance: Clearance): string {
  return `0x${bytes32Word(clearance)}`;
}

/** `abi.encode(address collection, address traitsContract, bytes32 traitKey, bytes32[] allowedValues)`. */
function encodeTraitRequirement(collection: string, traitKey: string, allowedValues: string[]): string {
  const head = [addressWord(collection), addressWord(collection), traitKey.slice(2).toLowerCase(), uintWord(4 * 32)];
  const tail = [uintWord(allowedValues.length), ...allowedValues.map((value) => value.slice(2).toLowerCase())];
  return `0x${[...head, ...tail].join("")}`;
}

/* -------------------------------- Builders -------------------------------- */

/** Clearances that meet a route's minimum, ascending. */
export function clearancesMeeting(minimum: Clearance): Clearance[] {
  return clearances.filter((clearance) => clearanceMeets(clearance, minimum));
}

/**
 * The `access` block of a route: hold a token of the collection whose ERC-7496 `clearance` is one of those that
 * meet the route's minimum. It is what earns the discounted price; anyone may still call at the standard price.
 */
export function clearanceAccess(collection: string, minimum: Clearance): NonNullable<ToolManifest["access"]> {
  const allowed = clearancesMeeting(minimum);
  return {
    logic: "AND",
    requirements: [
      {
        kind: ERC7496_TRAIT_REQUIREMENT_KIND,
        data: encodeTraitRequirement(collection, ERC7496_CLEARANCE_TRAIT_KEY, allowed.map(clearanceTraitValue)),
        label:
          `Discounted price: sign in owning a token of the collection with ERC-7496 clearance ${allowed.join(" or ")}. ` +
          "Any other caller pays the standard price.",
      },
    ],
  };
}

/** Lowercases the scheme and host, elides the default port and A-label encodes the host (ERC-8257 §6 G1-G3). */
function normalizeUrl(url: string): string {
  return new URL(url).href;
}

/** NFC-normalizes every string of a JSON value, member names included (ERC-8257 "Canonical Manifest Bytes"). */
function nfc<T>(value: T): T {
  if (typeof value === "string") return value.normalize("NFC") as T;
  if (Array.isArray(value)) return value.map(nfc) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.normalize("NFC"), nfc(item)])) as T;
  }
  return value;
}

/** The ERC-8257 v1 manifest of one tool route. */
export function buildToolManifest(route: ToolRoute, options: ToolManifestOptions): ToolManifest {
  const { publicUrl, payment } = options;
  const network = payment.network;
  const asset = `${network}/erc20:${payment.asset.toLowerCase()}`;
  const recipient = `${network}:${payment.payTo.toLowerCase()}`;
  const discountedFor = clearanceWording[route.minimumClearance];
  const manifest: ToolManifest = {
    type: TOOL_MANIFEST_TYPE,
    name: `${SERVICE_DISPLAY_NAME}: ${route.summary}`,
    description: route.description,
    endpoint: normalizeUrl(`${publicUrl}${route.path}`),
    inputs: requestJsonSchema(route),
    outputs: responseJsonSchema(route),
    creatorAddress: (options.creatorAddress ?? payment.payTo).toLowerCase(),
    version: TOOL_MANIFEST_VERSION,
    image: normalizeUrl(`${publicUrl}${SERVICE_ICON_PATH}`),
    tags: [...route.tags],
    // Creator preference first: the standard point is open to every caller; the discounted one needs the access below.
    pricing: [
      { amount: pricePoints.standard, asset, recipient, protocol: "x402" },
      { amount: pricePoints.discounted, asset, recipient, protocol: "x402" },
    ],
    ...(options.collection ? { access: clearanceAccess(options.collection, route.minimumClearance) } : {}),
    [TOOL_MANIFEST_EXTENSION]: {
      method: routeMethod(route),
      operationId: route.operationId,
      x402Version: 2,
      minimumClearance: route.minimumClearance,
      pricePoints: [
        {
          name: "standard",
          amount: pricePoints.standard,
          usd: formatUsd(pricePoints.standard),
          who: "any caller; no token or account needed",
        },
        {
          name: "discounted",
          amount: pricePoints.discounted,
          usd: formatUsd(pricePoints.discounted),
          who: `${discountedFor}, signed in with Ethereum (header SIGN-IN-WITH-X)`,
        },
      ],
      paymentCatalog: `${publicUrl}${PAYMENT_CATALOG_PATH}`,
      openapi: `${publicUrl}/openapi.json`,
      mcp: { ...mcpEndpointOf(publicUrl), toolName: mcpToolNameOf(route) },
    },
  };
  return nfc(manifest);
}

/** Every tool's manifest, keyed by the route's slug. */
export function buildToolManifests(options: ToolManifestOptions): Record<string, ToolManifest> {
  return Object.fromEntries(Object.values(paidRoutes).map((route) => [route.slug, buildToolManifest(route, options)]));
}

/**
 * The RFC 8785 canonical JSON of a manifest: what ERC-8257's `manifestHash` is `keccak256` of (as UTF-8 bytes).
 * A `manifestHash` member, should a copy of the manifest carry one, is not part of the hashed document.
 */
export function canonicalToolManifest(manifest: ToolManifest | Record<string, unknown>): string {
  const { manifestHash: _ignored, ...document } = manifest as Record<string, unknown>;
  return canonicalize(document);
}

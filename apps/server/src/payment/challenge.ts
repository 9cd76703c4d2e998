import { randomBytes } from "node:crypto";
import type { PaymentRequired, PaymentRequirements, ToolRoute } from "@agent-tools/schema";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { buildSIWxSchema } from "@x402/extensions/sign-in-with-x";
import { z } from "zod";

export interface ChallengeContext {
  publicUrl: string;
  /** CAIP-2 chains a holder may sign in on (SIWE chainId). */
  signInChains: string[];
  now: () => Date;
}

const discoveryCache = new WeakMap<ToolRoute, Record<string, unknown>>();

/** x402 Bazaar discovery info of a route: sample input, its JSON Schema and a sample output. */
function discoveryExtension(route: ToolRoute): Record<string, unknown> {
  let extension = discoveryCache.get(route);
  if (!extension) {
    extension = declareDiscoveryExtension({
      bodyType: "json",
      input: route.sampleInput,
      inputSchema: z.toJSONSchema(route.request, { io: "input" }) as Record<string, unknown>,
      output: { example: route.sampleOutput },
    });
    discoveryCache.set(route, extension);
  }
  return extension;
}

/** The SIWX extension's JSON Schema is the same for every challenge: built once. */
const siwxSchema = buildSIWxSchema();

/**
 * The PaymentRequired answer of a tool route: the price point that applies to this caller, the
 * `sign-in-with-x` extension (so a holder learns it can sign in for the discount) and Bazaar discovery info.
 */
export function buildPaymentRequired(
  route: ToolRoute,
  accepts: PaymentRequirements[],
  error: string,
  context: ChallengeContext,
): PaymentRequired {
  const url = `${context.publicUrl}${route.path}`;
  return {
    x402Version: 2,
    error,
    resource: { url, description: route.summary, mimeType: "application/json" },
    accepts,
    extensions: {
      "sign-in-with-x": {
        info: {
          domain: new URL(context.publicUrl).host,
          uri: url,
          version: "1",
          statement: "Sign in as a holder of the collection to pay the holder price.",
          nonce: randomBytes(16).toString("hex"),
          issuedAt: context.now().toISOString(),
          resources: [url],
        },
        supportedChains: context.signInChains.map((chainId) => ({ chainId, type: "eip191" })),
        schema: siwxSchema,
      },
      ...discoveryExtension(route),
    },
  };
}

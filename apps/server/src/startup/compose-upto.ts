/**
 * x402's `upto` scheme, composed when the service can take it (docs/api.md, "Prices by the work done"): the payment
 * chain has Permit2 and x402's upto proxy at their canonical addresses, and a facilitator settles the scheme. The
 * built-in facilitator does, with x402's own upto facilitator (../schemes/upto/upto-facilitator.ts) over its first
 * key; facilitators over HTTP do when one lists `upto` on the payment network with the address its payers must name.
 * Otherwise the service takes the other schemes and says once in its log why `upto` is off: a configuration that
 * worked before keeps working.
 */
import { PERMIT2_ADDRESS, UPTO_PERMIT2_PROXY_ADDRESS } from "@agent-tools/contracts";
import { UPTO_SCHEME } from "@agent-tools/schema";
import type { Logger } from "pino";
import { type Address, getAddress, isAddress, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Config } from "../config/config.js";
import { StartupError, shortReason } from "../errors/startup-error.js";
import type { HttpFacilitator } from "../settlement/http-facilitators.js";

/** Who settles the service's `upto` payments, when it takes them. */
export type UptoSettler =
  /** The built-in facilitator, from its first key. */
  | { kind: "local"; facilitatorAddress: Address }
  /** A facilitator over HTTP that lists the scheme: every `upto` payment goes to it (its payers name its address). */
  | { kind: "http"; facilitatorAddress: Address; facilitator: HttpFacilitator };

/**
 * Whether and how the service takes `upto`: undefined when `UPTO=off`, when the payment chain lacks Permit2 or the
 * upto proxy, or when no facilitator over HTTP lists the scheme (each logged once). Cheap: a code read of two
 * addresses and the `/supported` answers; composeService asks it beside the other start-up checks.
 */
export async function uptoSettler(
  config: Config,
  chain: Pick<PublicClient, "getCode">,
  facilitators: readonly HttpFacilitator[],
  logger?: Logger,
): Promise<UptoSettler | undefined> {
  if (!config.upto) return undefined;
  const network = config.payment.network;
  let codes: (string | undefined)[];
  try {
    codes = await Promise.all(
      [PERMIT2_ADDRESS, UPTO_PERMIT2_PROXY_ADDRESS].map((address) => chain.getCode({ address })),
    );
  } catch (error) {
    throw new StartupError("L2_RPC_URL", `the payment chain did not answer: ${shortReason(error)}`);
  }
  const missing = [
    ...(!codes[0] || codes[0] === "0x" ? [`Permit2 at ${PERMIT2_ADDRESS}`] : []),
    ...(!codes[1] || codes[1] === "0x" ? [`x402's upto proxy at ${UPTO_PERMIT2_PROXY_ADDRESS}`] : []),
  ];
  if (missing.length > 0) {
    logger?.warn({ network }, `the payment chain has no ${missing.join(" and no ")}: the upto scheme is off`);
    return undefined;
  }
  if (config.facilitator.kind === "local") {
    const key = config.facilitator.privateKeys[0];
    return key ? { kind: "local", facilitatorAddress: privateKeyToAccount(key).address } : undefined;
  }
  for (const facilitator of facilitators) {
    const supported = await facilitator.supported().catch(() => undefined);
    const kind = supported?.kinds.find((k) => k.x402Version === 2 && k.scheme === UPTO_SCHEME && k.network === network);
    const address = kind?.extra?.facilitatorAddress;
    if (typeof address === "string" && isAddress(address)) {
      return { kind: "http", facilitatorAddress: getAddress(address), facilitator };
    }
  }
  logger?.warn(
    { network },
    "no facilitator lists upto (with its facilitatorAddress) on the payment network: the upto scheme is off",
  );
  return undefined;
}

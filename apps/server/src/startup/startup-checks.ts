/**
 * What is checked when the server starts, before it serves anything: each port is free, each RPC endpoint answers
 * and serves the chain it is configured for, and the facilitators over HTTP settle what the service quotes. A
 * refusal is one line naming the variable to fix (never a secret's value: URLs are cut to their origin).
 */
import type { SupportedResponse } from "@x402/core/types";
import type { Logger } from "pino";
import type { PublicClient } from "viem";
import { originOf, StartupError, shortReason } from "../errors/startup-error.js";

/** Maps a listener's EADDRINUSE to a refusal naming the port variable; other errors pass. */
export function portRefusal(variable: string, host: string, port: number): (error: unknown) => never {
  return (error) => {
    if ((error as NodeJS.ErrnoException)?.code === "EADDRINUSE") {
      throw new StartupError(
        variable,
        `port ${port} on ${host} is in use; set ${variable} to a free port, or 0 for any`,
      );
    }
    throw error;
  };
}

/** The chain an RPC endpoint serves must be the one configured: refused in one line otherwise. Returns its id. */
export async function expectChain(
  client: Pick<PublicClient, "getChainId">,
  expected: { network: string; variable: string; networkVariable: string; what: string; url: string },
): Promise<number> {
  let chainId: number;
  try {
    chainId = await client.getChainId();
  } catch (error) {
    throw new StartupError(
      expected.variable,
      `the RPC of ${expected.what} at ${originOf(expected.url)} did not answer: ${shortReason(error)}`,
    );
  }
  if (`eip155:${chainId}` !== expected.network) {
    throw new StartupError(
      expected.variable,
      `${originOf(expected.url)} serves chain eip155:${chainId}, but ${expected.what} is ${expected.network} (${expected.networkVariable})`,
    );
  }
  return chainId;
}

/** A facilitator over HTTP, as the start-up check asks it. */
export interface SupportedSource {
  name: string;
  /** The variables that hold its credentials, named when it refuses them. */
  credentials: string;
  supported(): Promise<SupportedResponse>;
}

/**
 * Each facilitator that answers must take our credentials and list x402 version 2's `exact` scheme on the payment
 * network; one that does not answer now is only warned about (failover exists for that), but at least one must.
 */
export async function checkFacilitators(
  facilitators: SupportedSource[],
  network: string,
  logger?: Logger,
): Promise<void> {
  let answered = 0;
  for (const facilitator of facilitators) {
    let supported: SupportedResponse;
    try {
      supported = await facilitator.supported();
    } catch (error) {
      const refused = /\((401|403)\)/.exec(error instanceof Error ? error.message : "");
      if (refused) {
        throw new StartupError(
          facilitator.credentials,
          `${facilitator.name} refused the service's credentials (HTTP ${refused[1]}); check the key given for it`,
        );
      }
      logger?.warn(
        { facilitator: facilitator.name, reason: shortReason(error) },
        "facilitator did not answer at start",
      );
      continue;
    }
    answered++;
    const settles = supported.kinds.some(
      (kind) => kind.x402Version === 2 && kind.scheme === "exact" && kind.network === network,
    );
    if (!settles) {
      const listed = supported.kinds.map((k) => `${k.scheme} on ${k.network} (v${k.x402Version})`).join(", ");
      throw new StartupError(
        "FACILITATOR_URLS",
        `${facilitator.name} does not settle x402 v2 exact payments on ${network} (PAYMENT_NETWORK); it lists ${listed || "nothing"}`,
      );
    }
  }
  if (answered === 0) {
    throw new StartupError(
      "FACILITATOR_URLS",
      `no facilitator answered (${facilitators.map((f) => f.name).join(", ")}); payments could not be verified`,
    );
  }
}

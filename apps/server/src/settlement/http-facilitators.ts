/**
 * x402 facilitators reached over HTTP, as sellers use them: several, in order, each with its credentials (a bearer key,
 * or a Coinbase Developer Platform API key through Coinbase's own package). A `verify` fails over on any failure, a
 * `settle` only when the facilitator certainly did not take it (docs/deployment.md, "Choosing a facilitator";
 * docs/threat-model.md, "Settlements").
 */
import { HTTPFacilitatorClient } from "@x402/core/server";
import {
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
  type SettleResponse,
  type SupportedResponse,
  VerifyError,
} from "@x402/core/types";
import type { Logger } from "pino";
import type { Facilitator } from "./facilitator.js";

/** A facilitator over HTTP: its URL and, when it asks for one, a bearer key; or Coinbase's, with a CDP API key. */
export type FacilitatorEndpoint =
  | { kind: "url"; url: string; apiKey?: string }
  | { kind: "cdp"; apiKeyId: string; apiKeySecret: string };

/** One facilitator over HTTP, named by its origin for logs and metrics (never with its credentials). */
export interface HttpFacilitator extends Facilitator {
  readonly name: string;
  /** The variables that hold its credentials (what a start-up refusal names). */
  readonly credentials: string;
  /**
   * Its `/supported` answer, asked once: the start-up checks and the compositions of the channel and `upto` schemes
   * all read it. A failed ask is not kept, so a later one asks again.
   */
  supported(): Promise<SupportedResponse>;
}

/** Coinbase's hosted facilitator, configured by `@coinbase/x402` (loaded only when it is used). */
async function cdpConfig(apiKeyId: string, apiKeySecret: string) {
  const { createFacilitatorConfig } = await import("@coinbase/x402");
  return createFacilitatorConfig(apiKeyId, apiKeySecret);
}

/** A facilitator over HTTP whose refusals come back as answers (x402's client throws them for 4xx statuses). */
export async function httpFacilitator(endpoint: FacilitatorEndpoint, timeoutMs: number): Promise<HttpFacilitator> {
  const config =
    endpoint.kind === "cdp"
      ? await cdpConfig(endpoint.apiKeyId, endpoint.apiKeySecret)
      : {
          url: endpoint.url,
          ...(endpoint.apiKey
            ? {
                createAuthHeaders: async () => {
                  const headers = { Authorization: `Bearer ${endpoint.apiKey}` };
                  return { verify: headers, settle: headers, supported: headers };
                },
              }
            : {}),
        };
  const client = new HTTPFacilitatorClient({ ...config, timeoutMs });
  let supported: Promise<SupportedResponse> | undefined;
  const name = endpoint.kind === "cdp" ? "cdp" : new URL(endpoint.url).origin;
  return {
    name,
    credentials: endpoint.kind === "cdp" ? "CDP_API_KEY_ID" : "FACILITATOR_API_KEYS",
    async verify(payload, requirements) {
      try {
        return await client.verify(payload, requirements);
      } catch (error) {
        if (!(error instanceof VerifyError)) throw error;
        return {
          isValid: false,
          ...(error.invalidReason ? { invalidReason: error.invalidReason } : {}),
          ...(error.invalidMessage ? { invalidMessage: error.invalidMessage } : {}),
          ...(error.payer ? { payer: error.payer } : {}),
        };
      }
    },
    async settle(payload, requirements) {
      try {
        return await client.settle(payload, requirements);
      } catch (error) {
        if (!(error instanceof SettleError)) throw error;
        return {
          success: false,
          transaction: error.transaction ?? "",
          network: error.network,
          ...(error.errorReason ? { errorReason: error.errorReason } : {}),
          ...(error.errorMessage ? { errorMessage: error.errorMessage } : {}),
          ...(error.payer ? { payer: error.payer } : {}),
        } as SettleResponse;
      }
    },
    supported: () => {
      supported ??= client.getSupported().catch((error: unknown) => {
        supported = undefined;
        throw error;
      });
      return supported;
    },
  };
}

/** Connection failures before a request was sent: nothing reached the facilitator. */
const UNREACHABLE = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
/** Statuses a facilitator answers before doing anything with a request. */
const NOT_PROCESSED = /\((401|403|404|405|429|503)\)/;

/** Whether `error` says the facilitator certainly did not act on the request. */
export function notTaken(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } })?.cause;
  if (cause?.code && UNREACHABLE.has(cause.code)) return true;
  return error instanceof Error && NOT_PROCESSED.test(error.message);
}

export interface FailoverOptions {
  logger?: Logger;
  /** Called each time a request goes on to the next facilitator. */
  onFailover?: (from: string, operation: "verify" | "settle") => void;
  /** How long a facilitator that could not be reached is passed over (default 30 s). */
  downForMs?: number;
  now?: () => number;
}

/**
 * The facilitators in order: each request goes to the first one not known to be down, and on to the next when it
 * cannot be reached (for `verify`, also when it fails otherwise). When every one is down, they are asked anyway.
 */
export function createFailoverFacilitator(facilitators: HttpFacilitator[], options: FailoverOptions = {}): Facilitator {
  if (facilitators.length === 0) throw new Error("no facilitator to fail over between");
  const downForMs = options.downForMs ?? 30_000;
  const now = options.now ?? Date.now;
  const downUntil = new Map<string, number>();
  const inTurn = () => {
    const up = facilitators.filter((f) => (downUntil.get(f.name) ?? 0) <= now());
    return up.length > 0 ? up : facilitators;
  };

  async function ask<T>(
    operation: "verify" | "settle",
    call: (facilitator: HttpFacilitator) => Promise<T>,
    passOn: (error: unknown) => boolean,
  ): Promise<T> {
    const order = inTurn();
    for (const [i, facilitator] of order.entries()) {
      try {
        const answer = await call(facilitator);
        downUntil.delete(facilitator.name);
        return answer;
      } catch (error) {
        const last = i === order.length - 1;
        if (last || !passOn(error)) throw error;
        if (notTaken(error)) downUntil.set(facilitator.name, now() + downForMs);
        options.logger?.warn(
          { err: error, facilitator: facilitator.name, next: order[i + 1]!.name, operation },
          "facilitator failed; asking the next one",
        );
        options.onFailover?.(facilitator.name, operation);
      }
    }
    throw new Error("unreachable");
  }

  return {
    verify: (payload: PaymentPayload, requirements: PaymentRequirements) =>
      ask(
        "verify",
        (f) => f.verify(payload, requirements),
        () => true,
      ),
    settle: (payload: PaymentPayload, requirements: PaymentRequirements) =>
      ask("settle", (f) => f.settle(payload, requirements), notTaken),
  };
}

/**
 * The paid call, free of any transport: `admit` takes a request through validate, identify, policy, price and
 * pay (docs/architecture.md, "A paid call"); the caller runs the tool; `settle` takes the payment, or `release`
 * gives everything back when the tool failed. HTTP routes (and any other transport) are thin switches on what
 * these return: an admitted call, a refusal carrying the x402 `PaymentRequired` to answer 402 with, or a thrown
 * `HttpError` (400, 403, 404) for a request no payment can make right.
 */
import {
  clearanceMeets,
  formatUsd,
  type PaymentRefusalReason,
  type PaymentRequired,
  type PaymentRequirements,
  type PricePoint,
  paymentRefusal,
  queryToInput,
  routePaymentRequirements,
  type ToolRoute,
} from "@agent-tools/schema";
import type { PaymentPayload, SettleResponse } from "@x402/core/types";
import { type Address, getAddress } from "viem";
import type { CollectionIndex, IndexedToken } from "../chain/collection-index.js";
import { HttpError, uncharged, validationError } from "../http/errors.js";
import type { Slot } from "../limits/call-limiter.js";
import type { ServiceMetrics } from "../metrics/service-metrics.js";
import { buildPaymentRequired, type CallMethod } from "./challenge.js";
import { settlementRefusal, verifyRefusal } from "./facilitator-refusals.js";
import { decodePayment, paymentKey, readAuthorization, requirementMismatch } from "./payment-payload.js";
import type { PaymentService } from "./payment-service.js";
import { SIGN_IN_NONCE_RETENTION_MS, verifySignIn } from "./verify-sign-in.js";

/** A request for a paid route, as any transport hands it over. */
export interface PaidCallRequest {
  route: ToolRoute;
  /** The request's fields: a JSON body, or query parameters (strings, coerced by the route's schema). */
  input: unknown;
  inputFrom: "body" | "query";
  /** The `SIGN-IN-WITH-X` value (base64 JSON), when the caller signed in. */
  signIn?: string;
  /** The payment: a `PAYMENT-SIGNATURE` value (base64 JSON) or the payload object itself. */
  payment?: string | Record<string, unknown>;
  /** True when the payment came in x402 version 1's `X-PAYMENT` header. */
  paymentInVersion1Header?: boolean;
  method: CallMethod;
  /** Kept with the ledger's row. */
  requestId: string;
}

/** Milliseconds each step took, in order (`Server-Timing`). */
export type StepTimings = [step: string, ms: number][];

/** A call that passed every step: its payment is verified and claimed until it is settled or released. */
export interface AdmittedCall {
  route: ToolRoute;
  method: CallMethod;
  /** The request validated by the route's schema, defaults applied. */
  params: { tokenId: number } & Record<string, unknown>;
  /** The signed-in caller, when a valid sign-in came with the request. */
  caller?: Address;
  token: IndexedToken;
  price: { point: PricePoint; requirements: PaymentRequirements };
  payment: { payload: PaymentPayload; key: string; payer: Address };
  timings: StepTimings;
  /** The sign-in nonce, spent once the call is served. */
  signInNonce?: string;
  /** The request's id, in every log line about its payment. */
  requestId: string;
  /** The payer's slot (payer limits), given back when the call is settled or released. */
  slot: Slot;
}

/** Why a call was answered 402, and the x402 `PaymentRequired` to answer with. */
export interface Refusal {
  reason: PaymentRefusalReason;
  paymentRequired: PaymentRequired;
}

export type Admission = { admitted: true; call: AdmittedCall } | { admitted: false; refusal: Refusal };
export type Settlement = { settled: true; settlement: SettleResponse } | { settled: false; refusal: Refusal };

export interface PaidCalls {
  /** Validate, identify, policy, price, pay. Throws `HttpError` for a request that no payment can make right. */
  admit(request: PaidCallRequest): Promise<Admission>;
  /** Takes the payment of a call whose tool answered; the ledger records it before this resolves. */
  settle(call: AdmittedCall): Promise<Settlement>;
  /** Gives the payment and the sign-in back: the tool failed, so the call costs nothing. */
  release(call: AdmittedCall): Promise<void>;
}

export interface PaidCallDeps {
  payments: PaymentService;
  collection: CollectionIndex;
  /** Counts calls by outcome, amounts settled and refusals (metrics). */
  metrics?: Pick<ServiceMetrics, "paidCalls" | "settledAmount" | "refusals">;
}

/** x402's reason for an EIP-3009 authorization the token reports used (`authorizationState`). */
const AUTHORIZATION_USED = "invalid_exact_evm_nonce_already_used";

/** A slot for one more paid call of `payer`, or 429 `rate_limited` with Retry-After (nothing was charged). */
async function takePayerSlot(payments: PaymentService, payer: string): Promise<Slot> {
  const slot = await payments.payerLimits.take(payer.toLowerCase());
  if (slot.ok) return slot;
  const what = slot.why === "rate" ? "too many paid calls per second" : "too many paid calls at once";
  throw new HttpError(
    "rate_limited",
    uncharged(`The payer ${getAddress(payer)} has ${what}; retry in ${slot.retryAfterSeconds} s.`),
    [{ field: "PAYMENT-SIGNATURE", message: `payer limit: ${slot.why}` }],
    { "Retry-After": String(slot.retryAfterSeconds) },
  );
}

/** Until when a sign-in nonce claimed now must be kept: past the validity window of any message valid now. */
function signInExpiry(payments: PaymentService): Date {
  return new Date(payments.now().getTime() + SIGN_IN_NONCE_RETENTION_MS);
}

/** Gives a sign-in back after a failed call; should the store fail, the nonce stays taken until it expires. */
async function releaseSignIn(payments: PaymentService, caller: Address, nonce: string): Promise<void> {
  try {
    await payments.signIns.release(caller, nonce);
  } catch (error) {
    payments.logger?.warn({ err: error }, "could not give a sign-in nonce back");
  }
}

/** Marks a sign-in spent once its call was served; should the store fail, it stays claimed, which refuses it too. */
async function spendSignIn(payments: PaymentService, caller: Address, nonce: string): Promise<void> {
  try {
    await payments.signIns.spend(caller, nonce);
  } catch (error) {
    payments.logger?.warn({ err: error }, "could not mark a sign-in nonce spent");
  }
}

/** Tries a ledger write a few times: the payment was taken, so its record is worth a short wait. */
async function recordSettlement(payments: PaymentService, key: string, transaction: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await payments.ledger.markSettled(key, transaction, payments.now());
      return;
    } catch (error) {
      // After the last attempt the claim stays pending: the reconciler finds the settlement on chain.
      if (attempt === 3) {
        payments.logger?.error({ err: error, paymentKey: key, transaction }, "could not record a settlement");
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

export function createPaidCalls(deps: PaidCallDeps): PaidCalls {
  const { payments, collection, metrics } = deps;

  const refuse = (
    route: ToolRoute,
    method: CallMethod,
    point: PricePoint | undefined,
    reason: PaymentRefusalReason,
    sentence: string,
  ): { admitted: false; settled: false; refusal: Refusal } => {
    const quoted = point ?? (payments.anonymousAccess ? "standard" : "discounted");
    metrics?.refusals.inc({ reason });
    metrics?.paidCalls.inc({ route: route.path, price_point: quoted, outcome: "refused" });
    const paymentRequired = buildPaymentRequired(
      route,
      [routePaymentRequirements(payments.terms, route, quoted)],
      paymentRefusal(reason, sentence),
      { publicUrl: payments.publicUrl, signInChains: payments.signInChains, now: payments.now },
      method,
    );
    return { admitted: false, settled: false, refusal: { reason, paymentRequired } };
  };

  /** Step 1, validate: never challenged or charged when invalid. */
  function validate(request: PaidCallRequest): AdmittedCall["params"] {
    const { route } = request;
    let input = request.input;
    if (request.inputFrom === "query") {
      input = queryToInput(route.request, input as Record<string, string | string[]>);
    }
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      throw new HttpError("invalid_request", "The request body must be a JSON object.", [
        { field: "", message: "expected an object" },
      ]);
    }
    const parsed = route.request.safeParse(input);
    if (!parsed.success) throw validationError(parsed.error);
    return parsed.data as AdmittedCall["params"];
  }

  /** Step 3, policy: the token exists; a signed-in caller owns it and its clearance meets the route's. */
  async function policy(route: ToolRoute, tokenId: number, caller: Address | undefined): Promise<IndexedToken> {
    await collection.fresh();
    const token = collection.token(tokenId);
    if (!token) {
      throw new HttpError("token_not_found", `Token ${tokenId} does not exist.`, [
        { field: "tokenId", message: "no such token" },
      ]);
    }
    if ("revealedOnly" in route && route.revealedOnly && !token.revealed) {
      // Refused before any price is quoted: the route has nothing to do for an agent that is not revealed yet.
      throw new HttpError(
        "agent_not_revealed",
        `${route.path} is for revealed agents; token ${tokenId} is not revealed yet.`,
        [{ field: "tokenId", message: "not revealed yet" }],
        {},
        403,
      );
    }
    if (caller) {
      if (token.owner !== caller) {
        throw new HttpError("not_token_owner", `The signed-in address ${caller} does not own token ${tokenId}.`, [
          { field: "tokenId", message: "not owned by the signed-in caller" },
        ]);
      }
      const needed = route.minimumClearance;
      if (!clearanceMeets(token.clearance, needed)) {
        throw new HttpError(
          "insufficient_clearance",
          `${route.path} needs ${needed} clearance; token ${tokenId} has ${token.clearance}.`,
          [{ field: "tokenId", message: `clearance ${token.clearance} is below ${needed}`, requiredClearance: needed }],
        );
      }
    }
    return token;
  }

  return {
    async admit(request) {
      const { route } = request;
      const timings: StepTimings = [];
      let mark = performance.now();
      const step = (name: string) => {
        const now = performance.now();
        timings.push([name, now - mark]);
        mark = now;
      };

      const params = validate(request);
      step("validate");

      // Step 2, identify: a valid sign-in makes the signer the caller; an invalid one is refused with its reason.
      let caller: Address | undefined;
      let signInNonce: string | undefined;
      if (request.signIn !== undefined) {
        const signIn = await verifySignIn(request.signIn, payments);
        if (!signIn.ok) return refuse(route, request.method, undefined, "invalid_siwx", signIn.reason);
        caller = signIn.address;
        signInNonce = signIn.nonce;
      }
      step("identify");

      const token = await policy(route, params.tokenId, caller);
      step("policy");

      // Step 4, price: a signed-in holder pays the discounted point, anyone else the standard one.
      let point: PricePoint;
      if (caller) point = "discounted";
      else if (payments.anonymousAccess) point = "standard";
      else {
        return refuse(
          route,
          request.method,
          "discounted",
          "sign_in_required",
          "anonymous access is off; sign in as a holder with SIGN-IN-WITH-X",
        );
      }
      const requirements = routePaymentRequirements(payments.terms, route, point);
      step("price");

      // Step 5, pay: an x402 v2 payment of exactly this requirement, unused, verified by the facilitator.
      if (request.payment === undefined) {
        return refuse(route, request.method, point, "payment_required", "pay with x402 version 2 (PAYMENT-SIGNATURE)");
      }
      const decoded = decodePayment(request.payment);
      if (request.paymentInVersion1Header) {
        return refuse(
          route,
          request.method,
          point,
          "unsupported_x402_version",
          "the payment came in X-PAYMENT, the header of x402 version 1; this service speaks x402 version 2: pay " +
            "with an x402 v2 client such as @x402/fetch or @x402/axios, which send PAYMENT-SIGNATURE",
        );
      }
      if (decoded.kind === "other_version") {
        return refuse(
          route,
          request.method,
          point,
          "unsupported_x402_version",
          `this service speaks x402 version 2 and the payment is version ${String(decoded.version)}: ` +
            "pay with an x402 v2 client such as @x402/fetch or @x402/axios",
        );
      }
      if (decoded.kind === "malformed") {
        return refuse(route, request.method, point, "invalid_payment", `the payment cannot be read: ${decoded.why}`);
      }
      const { payload } = decoded;
      const wrong = requirementMismatch(payload.accepted, requirements);
      if (wrong) return refuse(route, request.method, point, "invalid_payment", wrong);
      const authorization = readAuthorization(payload, requirements, payments.now());
      if (!authorization.ok) return refuse(route, request.method, point, "invalid_payment", authorization.why);
      const { from, nonce: authorizationNonce, validBefore } = authorization;

      const key = paymentKey(payload);
      if (!payments.payments.claim(key)) {
        return payments.payments.isUsed(key)
          ? refuse(
              route,
              request.method,
              point,
              "payment_already_used",
              "this payment authorization already bought a call",
            )
          : refuse(
              route,
              request.method,
              point,
              "payment_in_use",
              "this payment authorization is being used by another request",
            );
      }
      // The payer's slot: so many paid calls at once and per second, before anything costly is done for it.
      let slot: Slot;
      try {
        slot = await takePayerSlot(payments, from);
      } catch (error) {
        payments.payments.release(key);
        throw error;
      }
      // The sign-in serves one call, on any instance and across restarts: its nonce is claimed in the store.
      if (caller && signInNonce) {
        let nonce: Awaited<ReturnType<typeof payments.signIns.claim>>;
        try {
          nonce = await payments.signIns.claim(caller, signInNonce, signInExpiry(payments));
        } catch (error) {
          payments.payments.release(key);
          slot.release();
          throw error;
        }
        if (nonce !== "claimed") {
          payments.payments.release(key);
          slot.release();
          return refuse(
            route,
            request.method,
            point,
            "invalid_siwx",
            nonce === "spent"
              ? "invalid_siwx_nonce: this sign-in was already used for a call; sign in again"
              : "invalid_siwx_nonce: this sign-in is in use by another call",
          );
        }
      }
      const giveBack = async () => {
        payments.payments.release(key);
        slot.release();
        if (caller && signInNonce) await releaseSignIn(payments, caller, signInNonce);
      };

      // The durable claim, before the facilitator is asked: shared by every instance and kept across restarts, it
      // is the ledger's row, and it tells what the payer already has in flight (docs/architecture.md).
      const payer = getAddress(from);
      let claimed: Awaited<ReturnType<typeof payments.ledger.claim>>;
      try {
        claimed = await payments.ledger.claim({
          paymentKey: key,
          route: route.path,
          method: request.method,
          tokenId: params.tokenId,
          payer,
          nonce: authorizationNonce,
          caller: caller ?? null,
          pricePoint: point,
          amount: requirements.amount,
          asset: requirements.asset,
          network: requirements.network,
          payTo: requirements.payTo,
          validBefore,
          requestId: request.requestId,
        });
      } catch (error) {
        await giveBack();
        throw error;
      } finally {
        step("claim");
      }
      if (claimed.outcome !== "claimed") {
        await giveBack();
        if (claimed.outcome === "used") {
          payments.payments.consume(key);
          return refuse(
            route,
            request.method,
            point,
            "payment_already_used",
            "this payment authorization already bought a call",
          );
        }
        return refuse(
          route,
          request.method,
          point,
          "payment_in_use",
          "this payment authorization is being used by another request, or its settlement is being confirmed",
        );
      }
      const giveAllBack = async () => {
        await payments.ledger.release(key);
        await giveBack();
      };

      let verified: Awaited<ReturnType<typeof payments.facilitator.verify>>;
      try {
        verified = await payments.facilitator.verify(payload, requirements as never);
      } catch (error) {
        await giveAllBack();
        throw unverifiable(payments, request.requestId, error);
      } finally {
        step("verify");
      }
      if (!verified.isValid) {
        await giveAllBack();
        // The chain says the authorization was used: a payment that already bought something (here or elsewhere).
        if (verified.invalidReason === AUTHORIZATION_USED) {
          payments.payments.consume(key);
          return refuse(
            route,
            request.method,
            point,
            "payment_already_used",
            "this payment authorization was already used on chain",
          );
        }
        // The facilitator's own words go to the log; the caller gets a reason and a sentence of ours.
        payments.logger?.info(
          {
            requestId: request.requestId,
            invalidReason: verified.invalidReason,
            invalidMessage: verified.invalidMessage,
          },
          "payment refused by the facilitator",
        );
        const refusal = verifyRefusal(verified.invalidReason);
        return refuse(route, request.method, point, refusal.reason, refusal.sentence);
      }

      // The facilitator checked the balance against this payment alone: with others in flight, it must cover all.
      if (claimed.inFlight > 0n) {
        const needed = claimed.inFlight + BigInt(requirements.amount);
        let balance: bigint;
        try {
          balance = await payments.payerBalance(payer);
        } catch (error) {
          await giveAllBack();
          throw unverifiable(payments, request.requestId, error);
        } finally {
          step("funds");
        }
        if (balance < needed) {
          await giveAllBack();
          return refuse(
            route,
            request.method,
            point,
            "insufficient_funds",
            `the payer's balance does not cover this payment with the payments it has in flight ` +
              `(${formatUsd(needed.toString())} USD needed); wait for them to finish, or add funds`,
          );
        }
      }
      return {
        admitted: true,
        call: {
          route,
          method: request.method,
          params,
          ...(caller ? { caller } : {}),
          ...(signInNonce ? { signInNonce } : {}),
          token,
          price: { point, requirements },
          payment: { payload, key, payer },
          timings,
          requestId: request.requestId,
          slot,
        },
      };
    },

    async settle(call) {
      const started = performance.now();
      let settlement: SettleResponse;
      try {
        settlement = await payments.facilitator.settle(call.payment.payload, call.price.requirements as never);
      } catch (error) {
        call.timings.push(["settle", performance.now() - started]);
        // The settlement may have gone through before the answer was lost: the claim stays pending until the
        // reconciler reads the chain, so the payment is neither recorded twice nor reused meanwhile.
        await releaseGuards(call);
        payments.logger?.error(
          { err: error, requestId: call.requestId, paymentKey: call.payment.key },
          "settlement failed",
        );
        throw unconfirmed();
      }
      call.timings.push(["settle", performance.now() - started]);
      if (!settlement.success) {
        if (settlement.transaction) {
          // Sent, but not seen through (a receipt that did not come in time): the payer may be charged, so the
          // claim is kept for the reconciler, which records it once mined or gives it back once it expires.
          await releaseGuards(call);
          payments.logger?.warn(
            {
              requestId: call.requestId,
              paymentKey: call.payment.key,
              transaction: settlement.transaction,
              reason: settlement.errorReason,
            },
            "settlement not confirmed; left for reconciliation",
          );
          throw unconfirmed();
        }
        await releaseGuards(call);
        await payments.ledger.release(call.payment.key);
        payments.logger?.warn(
          {
            requestId: call.requestId,
            paymentKey: call.payment.key,
            errorReason: settlement.errorReason,
            errorMessage: settlement.errorMessage,
          },
          "settlement refused by the facilitator",
        );
        const refusal = settlementRefusal(settlement.errorReason);
        return refuse(call.route, call.method, call.price.point, refusal.reason, refusal.sentence);
      }
      await recordSettlement(payments, call.payment.key, settlement.transaction);
      payments.payments.consume(call.payment.key);
      call.slot.release();
      if (call.caller && call.signInNonce) await spendSignIn(payments, call.caller, call.signInNonce);
      const labels = { route: call.route.path, price_point: call.price.point };
      metrics?.paidCalls.inc({ ...labels, outcome: "settled" });
      metrics?.settledAmount.inc(labels, Number(call.price.requirements.amount));
      return { settled: true, settlement };
    },

    async release(call) {
      await releaseGuards(call);
      await payments.ledger.release(call.payment.key);
      metrics?.paidCalls.inc({ route: call.route.path, price_point: call.price.point, outcome: "released" });
    },
  };

  /** This instance's fast guard and the sign-in; the ledger's claim is the caller's to keep or give back. */
  async function releaseGuards(call: AdmittedCall): Promise<void> {
    payments.payments.release(call.payment.key);
    call.slot.release();
    if (call.caller && call.signInNonce) await releaseSignIn(payments, call.caller, call.signInNonce);
  }
}

/** The facilitator or the payment chain could not be asked: 503, nothing charged; the cause goes to the log only. */
function unverifiable(payments: PaymentService, requestId: string, error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  payments.logger?.warn({ err: error, requestId }, "could not verify a payment");
  return new HttpError(
    "upstream_unavailable",
    uncharged("The payment could not be verified right now.", "try again shortly"),
    [],
    { "Retry-After": "5" },
  );
}

function unconfirmed(): HttpError {
  return new HttpError(
    "upstream_error",
    "The payment could not be confirmed, so the call was not answered. Should the chain show it taken, it is " +
      "recorded and cannot buy another call; try again with a new payment.",
  );
}

/**
 * `admit`, the first half of a paid call: validate, identify, policy, price, then recall or pay
 * (docs/architecture.md, "A paid call"). Each step is a function below; a refusal is a 402 with its reason, a
 * request no payment can make right throws a `ServiceError`.
 */
import {
  formatUsd,
  type PaymentRefusalReason,
  type PaymentRequirements,
  type PricePoint,
  paidRoutes,
  routeAccepts,
  routePaymentRequirements,
} from "@agent-tools/schema";
import type { Address } from "viem";
import type { Slot } from "../limits/call-limiter.js";
import { AUTHORIZATION_USED } from "../settlement/facilitator.js";
import { verifyRefusal } from "../settlement/facilitator-refusals.js";
import type { SettlementClaim } from "../store/settlement-ledger.js";
import { releaseSignIn, signInExpiry, takePayerSlot, unverifiable } from "./call-bookkeeping.js";
import { checkTokenPolicy, validateCall } from "./call-checks.js";
import { paymentFields, signInPath } from "./challenge.js";
import type { Admission, AdmittedCall, PaidCallContext, PaidCallRequest, StepTimings } from "./paid-call-types.js";
import { checkPayer } from "./payer-checks.js";
import { identifierTaken, type Recall, recall } from "./payment-identifier.js";
import { decodePayment, readDecodedPayment } from "./payment-payload.js";
import { type PaymentScheme, type SchemeHold, schemeOf } from "./payment-scheme.js";
import type { PaymentService } from "./payment-service.js";
import { SIGN_IN_SPENT, verifySignIn } from "./verify-sign-in.js";

/** A 402 of this request, quoting `point` (with a scheme's corrective fields in its requirement's `extra`). */
type Refused = (
  point: PricePoint | undefined,
  reason: PaymentRefusalReason,
  sentence: string,
  extra?: { scheme: string; fields: Record<string, unknown> },
) => Admission;

/** What every step after the price knows of the call. */
interface Priced {
  request: PaidCallRequest;
  params: AdmittedCall["params"];
  caller: Address | undefined;
  signInNonce: string | undefined;
  token: AdmittedCall["token"];
  price: AdmittedCall["price"];
  fields: ReturnType<typeof paymentFields>;
  timings: StepTimings;
  step: (name: string) => void;
  refused: Refused;
}

/** The steps of `admit`: a call to run, or why not. */
export async function admitCall(context: PaidCallContext, request: PaidCallRequest): Promise<Admission> {
  const { payments, collection } = context;
  const { route, method } = request;
  const timings: StepTimings = [];
  let mark = performance.now();
  const step = (name: string) => {
    const now = performance.now();
    timings.push([name, now - mark]);
    mark = now;
  };
  const refused: Refused = (point, reason, sentence, extra) =>
    context.refuse(route, method, point, reason, sentence, extra);

  const params = validateCall(request);
  step("validate");
  // Where this call's transport carries the payment and the sign-in: what its refusals name.
  const fields = paymentFields(method);

  const identified = await identify(payments, request, fields.signIn);
  if (!identified.ok) return refused(undefined, "invalid_siwx", identified.reason);
  const { caller, signInNonce } = identified;
  step("identify");

  const token = await checkTokenPolicy(collection, route, params.tokenId, caller);
  step("policy");

  // Step 4, price: a signed-in holder pays the discounted point, anyone else the standard one.
  const point: PricePoint | undefined = caller ? "discounted" : payments.anonymousAccess ? "standard" : undefined;
  if (!point) {
    return refused(
      "discounted",
      "sign_in_required",
      `anonymous access is off; sign in as a holder with ${fields.signIn}`,
    );
  }
  const requirements = routePaymentRequirements(payments.terms, route, point);
  step("price");

  const priced: Priced = {
    request,
    params,
    caller,
    signInNonce,
    token,
    price: { point, requirements },
    fields,
    timings,
    step,
    refused,
  };
  return recallOrPay(payments, priced);
}

/** Step 2, identify: a valid sign-in makes the signer the caller; an invalid one is refused with its reason. */
async function identify(
  payments: PaymentService,
  request: PaidCallRequest,
  signInField: string,
): Promise<{ ok: true; caller?: Address; signInNonce?: string } | { ok: false; reason: string }> {
  if (request.signIn === undefined) return { ok: true };
  // With a payment, the nonce is claimed when the call pays (a spent one is refused there), or not at all when the
  // payment is one sent again to have its answer again, which may come with its spent sign-in.
  const signIn = await verifySignIn(request.signIn, payments, signInPath(request.route, request.method), {
    claimedNext: request.payment !== undefined,
    ...(request.method === "MCP" || request.method === "A2A" ? { field: signInField } : {}),
  });
  return signIn.ok ? { ok: true, caller: signIn.address, signInNonce: signIn.nonce } : signIn;
}

/**
 * A payment naming an identifier its payer used before: that call's answer again, or run again at no charge when it
 * was cut before its answer was kept (./payment-identifier.ts). Read before the payment is checked as a new one,
 * whose authorization may have expired since. Any other payment pays.
 */
async function recallOrPay(payments: PaymentService, priced: Priced): Promise<Admission> {
  const { request, params, caller, fields, refused } = priced;
  const decoded = request.payment === undefined ? undefined : decodePayment(request.payment);
  // The requirement the payment names, of those quoted for this price point (`exact`, and channels when offered).
  priced.price = { point: priced.price.point, requirements: quotedFor(payments, priced, decoded) };
  const recalled: Recall = request.paymentInVersion1Header
    ? { kind: "new" }
    : await recall(payments, decoded, {
        route: request.route,
        params,
        caller,
        requirements: priced.price.requirements,
        paymentField: fields.payment,
      });
  if (recalled.kind === "answer") return { admitted: false, answered: recalled.answer };
  if (recalled.kind === "refused") return refused(priced.price.point, "invalid_payment", recalled.sentence);
  if (recalled.kind === "run_again") {
    const slot = await takePayerSlot(payments, recalled.payer, fields.payment);
    priced.step("recall");
    return {
      admitted: true,
      call: {
        ...admittedBase(priced),
        payment: { payload: recalled.payload, key: recalled.key, payer: recalled.payer },
        slot,
        identifier: recalled.identifier,
        paidBefore: recalled.settlement,
      },
    };
  }
  return pay(payments, priced, decoded, recalled.identifier);
}

/** What an admitted call carries from its request and price, whether it pays now or was paid before. */
function admittedBase(priced: Priced) {
  const { request, params, caller, token, price, timings } = priced;
  return {
    route: request.route,
    method: request.method,
    params,
    ...(caller ? { caller } : {}),
    token,
    price,
    timings,
    requestId: request.requestId,
  };
}

/**
 * Step 5, pay: an x402 v2 payment of exactly this requirement, signed by its payer, unused here and in the ledger,
 * verified by the facilitator, and covered by the payer's balance with its other payments in flight.
 */
async function pay(
  payments: PaymentService,
  priced: Priced,
  decoded: ReturnType<typeof decodePayment> | undefined,
  identifier: AdmittedCall["identifier"],
): Promise<Admission> {
  const { request, caller, fields, step, refused } = priced;
  const { point, requirements } = priced.price;
  const scheme = schemeOf(payments.schemes, requirements);
  const read = readDecodedPayment(decoded, requirements, payments.now(), scheme, {
    paymentField: fields.payment,
    ...(request.paymentInVersion1Header ? { inVersion1Header: true } : {}),
  });
  if (!read.ok) return refused(point, read.reason, read.sentence);
  const { payload, key } = read;
  // Nothing is done in the payer's name before the payment is known to be the payer's.
  const checked = await checkPayer(payments, scheme, payload, requirements, read.from, caller, fields.payment);
  if (!checked.ok) return refused(point, "invalid_payment", checked.sentence);
  const { payer } = checked;
  step("signature");

  // A payment that buys no call (a channel's refund) is the scheme's to carry out, without the tool.
  const operation = await scheme.operation?.(payload, requirements, { payer, requestId: request.requestId });
  if (operation) {
    step("operation");
    if (!operation.done) {
      return refused(point, operation.reason, operation.sentence, schemeExtra(requirements, operation.extra));
    }
    const { status, output, settlement } = operation;
    return { admitted: false, answered: { status, output, settlement } };
  }

  const stale = await outOfStep(payments, priced, scheme, read.payload, key, payer);
  if (stale) return stale;

  const guards = await takeGuards(payments, priced, key, payer);
  if (!guards.ok) return refused(point, guards.reason, guards.sentence);
  const { slot, giveBack } = guards;

  // A payment its scheme holds and settles itself (a channel's voucher) is never in flight on chain: its ledger entry
  // is written once, settled with the charge, unless the call needs it before (an identifier's answer to keep, a
  // mission bound to it).
  const booking =
    scheme.hold && !identifier && request.route !== paidRoutes.dispatch
      ? ledgerClaimOf(priced, read, payer, identifier)
      : undefined;
  const claimed = booking ? { inFlight: 0n } : await claimInLedger(payments, priced, read, payer, identifier, giveBack);
  if ("admitted" in claimed) return claimed;
  const giveAllBack = async () => {
    if (!booking) await payments.ledger.release(key);
    await giveBack();
  };

  let hold: SchemeHold | undefined;
  if (scheme.hold) {
    // The scheme checks and holds the payment itself (a channel's voucher): no facilitator, no balance to read.
    const held = await holdByScheme(payments, priced, scheme, read.payload, { key, payer, booking }, giveAllBack);
    if (!held.held) return held.admission;
    hold = held.hold;
  } else {
    const verified = await verify(payments, priced, read.payload, key, giveAllBack);
    if (verified) return verified;
    const short = await fundsShort(payments, priced, payer, claimed.inFlight, giveAllBack);
    if (short) return short;
  }
  return {
    admitted: true,
    call: {
      ...admittedBase(priced),
      ...(priced.signInNonce ? { signInNonce: priced.signInNonce } : {}),
      payment: { payload, key, payer, ...(hold ? { hold } : {}) },
      slot,
      ...(identifier ? { identifier } : {}),
    },
  };
}

/**
 * A payment its scheme holds (a channel's voucher) whose key already bought a call: a client out of step with the
 * channel (its state lost, or behind), not a replay to refuse flatly. The scheme's own check answers it, with the
 * corrective 402 that says where the channel stands and lets x402's client sign the next voucher (docs/channels.md,
 * "Out of step"); nothing is held or charged. Undefined for any other payment.
 */
async function outOfStep(
  payments: PaymentService,
  priced: Priced,
  scheme: PaymentScheme,
  payload: AdmittedCall["payment"]["payload"],
  key: string,
  payer: Address,
): Promise<Admission | undefined> {
  if (!scheme.hold || !payments.payments.isUsed(key)) return undefined;
  const { point, requirements } = priced.price;
  let held: Awaited<ReturnType<NonNullable<PaymentScheme["hold"]>>>;
  try {
    held = await scheme.hold(payload, requirements, { key, payer, requestId: priced.request.requestId });
  } catch (error) {
    throw unverifiable(payments, priced.request.requestId, error);
  }
  if (!held.held) return priced.refused(point, held.reason, held.sentence, schemeExtra(requirements, held.extra));
  // A charged voucher can never be held again (the channel's total has moved past it); should it be, it is let go.
  await held.release();
  return priced.refused(point, "payment_already_used", "this payment authorization already bought a call");
}

/** What was paid, by whom, for what: the call's entry of the ledger. */
function ledgerClaimOf(
  priced: Priced,
  read: PaymentRead,
  payer: Address,
  identifier: AdmittedCall["identifier"],
): SettlementClaim {
  const { request, caller } = priced;
  const { point, requirements } = priced.price;
  return {
    paymentKey: read.key,
    route: request.route.path,
    method: request.method,
    tokenId: priced.params.tokenId,
    payer,
    nonce: read.nonce,
    caller: caller ?? null,
    pricePoint: point,
    amount: requirements.amount,
    asset: requirements.asset,
    network: requirements.network,
    payTo: requirements.payTo,
    validBefore: read.validBefore,
    requestId: request.requestId,
    ...(identifier ? { identifier } : {}),
    ...(read.channel ? { channel: read.channel } : {}),
  };
}

/** A payment as read, for the ledger. */
interface PaymentRead {
  payload: AdmittedCall["payment"]["payload"];
  key: string;
  nonce: string;
  validBefore: Date;
  channel?: { id: string; cumulative: string };
}

/**
 * The durable claim, before the facilitator is asked: shared by every instance and kept across restarts, it is the
 * ledger's row, and it tells what the payer already has in flight (docs/architecture.md, "A paid call"). A claim
 * refused gives the guards back and answers why.
 */
async function claimInLedger(
  payments: PaymentService,
  priced: Priced,
  read: PaymentRead,
  payer: Address,
  identifier: AdmittedCall["identifier"],
  giveBack: () => Promise<void>,
): Promise<{ inFlight: bigint } | Admission> {
  const { step, refused } = priced;
  const { point } = priced.price;
  const { key } = read;
  let claimed: Awaited<ReturnType<typeof payments.ledger.claim>>;
  try {
    claimed = await payments.ledger.claim(ledgerClaimOf(priced, read, payer, identifier));
  } catch (error) {
    await giveBack();
    throw error;
  } finally {
    step("claim");
  }
  if (claimed.outcome === "claimed") return { inFlight: claimed.inFlight };
  await giveBack();
  if (claimed.outcome === "identifier_taken" && identifier) throw identifierTaken(identifier.paymentId);
  if (claimed.outcome === "used") {
    payments.payments.consume(key);
    return refused(point, "payment_already_used", "this payment authorization already bought a call");
  }
  return refused(
    point,
    "payment_in_use",
    "this payment authorization is being used by another request, or its settlement is being confirmed",
  );
}

/**
 * This instance's fast guard of the payment, the payer's slot (so many paid calls at once and per second, before
 * anything costly is done for it) and the sign-in's nonce, claimed in the store (it serves one call, on any
 * instance and across restarts); `giveBack` returns all three.
 */
async function takeGuards(
  payments: PaymentService,
  priced: Priced,
  key: string,
  payer: Address,
): Promise<
  | { ok: true; slot: Slot; giveBack: () => Promise<void> }
  | { ok: false; reason: "payment_already_used" | "payment_in_use" | "invalid_siwx"; sentence: string }
> {
  const { caller, signInNonce } = priced;
  if (!payments.payments.claim(key)) {
    return payments.payments.isUsed(key)
      ? { ok: false, reason: "payment_already_used", sentence: "this payment authorization already bought a call" }
      : {
          ok: false,
          reason: "payment_in_use",
          sentence: "this payment authorization is being used by another request",
        };
  }
  let slot: Slot;
  try {
    slot = await takePayerSlot(payments, payer, priced.fields.payment);
  } catch (error) {
    payments.payments.release(key);
    throw error;
  }
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
      return {
        ok: false,
        reason: "invalid_siwx",
        sentence: nonce === "spent" ? SIGN_IN_SPENT : "invalid_siwx_nonce: this sign-in is in use by another call",
      };
    }
  }
  const giveBack = async () => {
    payments.payments.release(key);
    slot.release();
    if (caller && signInNonce) await releaseSignIn(payments, caller, signInNonce);
  };
  return { ok: true, slot, giveBack };
}

/**
 * The requirement a payment names among those quoted for the price point: its scheme's when the service offers that
 * scheme, else `exact`'s (whose read then says what differs).
 */
function quotedFor(
  payments: PaymentService,
  priced: Priced,
  decoded: ReturnType<typeof decodePayment> | undefined,
): PaymentRequirements {
  const accepts = routeAccepts(payments.terms, priced.request.route, priced.price.point);
  const named = decoded?.kind === "payment" ? decoded.payload.accepted?.scheme : undefined;
  return accepts.find((accept) => accept.scheme === named) ?? accepts[0]!;
}

/** A scheme's corrective fields for its requirement in the 402, when it has any. */
function schemeExtra(requirements: PaymentRequirements, fields: Record<string, unknown> | undefined) {
  return fields ? { scheme: requirements.scheme, fields } : undefined;
}

/** The scheme's own hold of the payment; a refusal gives everything back. */
async function holdByScheme(
  payments: PaymentService,
  priced: Priced,
  scheme: PaymentScheme,
  payload: AdmittedCall["payment"]["payload"],
  payment: { key: string; payer: Address; booking: SettlementClaim | undefined },
  giveAllBack: () => Promise<void>,
): Promise<{ held: true; hold: SchemeHold } | { held: false; admission: Admission }> {
  const { requirements, point } = priced.price;
  let held: Awaited<ReturnType<NonNullable<PaymentScheme["hold"]>>>;
  try {
    const { booking, ...call } = payment;
    held = await scheme.hold!(payload, requirements, {
      ...call,
      requestId: priced.request.requestId,
      ...(booking ? { booking } : {}),
    });
  } catch (error) {
    await giveAllBack();
    throw unverifiable(payments, priced.request.requestId, error);
  } finally {
    priced.step("verify");
  }
  if (held.held) return { held: true, hold: held };
  await giveAllBack();
  return {
    held: false,
    admission: priced.refused(point, held.reason, held.sentence, schemeExtra(requirements, held.extra)),
  };
}

/** The facilitator's check of the payment: undefined when it is valid, else the refusal (everything given back). */
async function verify(
  payments: PaymentService,
  priced: Priced,
  payload: AdmittedCall["payment"]["payload"],
  key: string,
  giveAllBack: () => Promise<void>,
): Promise<Admission | undefined> {
  const { request, refused, step } = priced;
  const { point, requirements } = priced.price;
  let verified: Awaited<ReturnType<typeof payments.facilitator.verify>>;
  try {
    verified = await payments.facilitator.verify(payload, requirements as never);
  } catch (error) {
    await giveAllBack();
    throw unverifiable(payments, request.requestId, error);
  } finally {
    step("verify");
  }
  if (verified.isValid) return undefined;
  await giveAllBack();
  // The chain says the authorization was used: a payment that already bought something (here or elsewhere).
  if (verified.invalidReason === AUTHORIZATION_USED) {
    payments.payments.consume(key);
    return refused(point, "payment_already_used", "this payment authorization was already used on chain");
  }
  // The facilitator's own words go to the log; the caller gets a reason and a sentence of ours.
  payments.logger?.info(
    { requestId: request.requestId, invalidReason: verified.invalidReason, invalidMessage: verified.invalidMessage },
    "payment refused by the facilitator",
  );
  const refusal = verifyRefusal(verified.invalidReason);
  return refused(point, refusal.reason, refusal.sentence);
}

/**
 * The facilitator checked the balance against this payment alone: with others in flight, it must cover all.
 * Undefined when it does, else the refusal (everything given back).
 */
async function fundsShort(
  payments: PaymentService,
  priced: Priced,
  payer: Address,
  inFlight: bigint,
  giveAllBack: () => Promise<void>,
): Promise<Admission | undefined> {
  if (inFlight <= 0n) return undefined;
  const needed = inFlight + BigInt(priced.price.requirements.amount);
  let balance: bigint;
  try {
    balance = await payments.payerBalance(payer);
  } catch (error) {
    await giveAllBack();
    throw unverifiable(payments, priced.request.requestId, error);
  } finally {
    priced.step("funds");
  }
  if (balance >= needed) return undefined;
  await giveAllBack();
  return priced.refused(
    priced.price.point,
    "insufficient_funds",
    `the payer's balance does not cover this payment with the payments it has in flight ` +
      `(${formatUsd(needed.toString())} USD needed); wait for them to finish, or add funds`,
  );
}

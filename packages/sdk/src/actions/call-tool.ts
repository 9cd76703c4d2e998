import {
  inputToQuery,
  type PaidRouteName,
  type PaymentRequired,
  paidRoutes,
  parsePaymentRefusal,
  routeMethod,
  type ToolInput,
  type ToolOutput,
  type ToolRoute,
} from "@agent-tools/schema";
import type { ClientContext } from "../context.js";
import { PaymentRequiredError } from "../errors.js";
import {
  decodeSettlementHeader,
  type Payment,
  readSettlement,
  signPayment,
  unitsToUsd,
  whilePaymentInUse,
} from "../payment.js";
import { pickSignInChain, signInHeader } from "../sign-in.js";
import { type Answer, errorFromAnswer, parseAnswer, validateLocally, withRetries } from "../transport.js";

/** A paid tool's answer and what it cost. */
export interface ToolResult<T> {
  data: T;
  /** The settled payment; null only if the service answered without charging. */
  payment: Payment | null;
}

/** Parameters of {@link callTool}: the paid route, and its request as the contract types it. */
export type CallToolParameters<N extends PaidRouteName> = { name: N; input: ToolInput<N> };
/** What {@link callTool} resolves with: the route's answer and the payment it settled. */
export type CallToolReturnType<N extends PaidRouteName> = ToolResult<ToolOutput<N>>;

/**
 * One paid call: validate locally, ask (signed in when there is an account), check the quote against the cap,
 * pay, and read the answer. A GET route sends its input as query parameters, other routes as a JSON body; the
 * route's `successStatus` (200 unless it says 202) is the answer that counts. A request that fails on the
 * network is sent again as it was: the paid one with the same signed payment, which buys one call at most, so
 * nothing is ever paid twice; its payment identifier (x402's payment-identifier extension, when the service
 * declares it) gets the answer of a call whose answer was lost on the way.
 */
export async function callTool<N extends PaidRouteName>(
  context: ClientContext,
  { name, input }: CallToolParameters<N>,
): Promise<CallToolReturnType<N>> {
  const { transport, account, learnt } = context;
  const route: ToolRoute = paidRoutes[name];
  validateLocally(route.request, input, name);
  const isGet = routeMethod(route) === "GET";
  const url = `${transport.baseUrl}${route.path}${isGet ? inputToQuery(input as Record<string, unknown>) : ""}`;
  const successStatus: number = ("successStatus" in route ? route.successStatus : undefined) ?? 200;
  const body = isGet ? undefined : JSON.stringify(input);
  const ask = (headers: Record<string, string>) =>
    withRetries(() =>
      transport.send(
        url,
        isGet
          ? { method: "GET", headers: { accept: "application/json", ...headers } }
          : {
              method: "POST",
              headers: { "content-type": "application/json", accept: "application/json", ...headers },
              body,
            },
      ),
    );
  const read = (answer: Answer) => parseAnswer(route.response, answer, name) as ToolOutput<N>;

  const signingIn = account !== undefined && context.signIn;
  let headers: Record<string, string> = {};
  if (signingIn && learnt.signInChain) {
    headers = { "SIGN-IN-WITH-X": await signInHeader(account, url, learnt.signInChain) };
  }
  let res = await ask(headers);
  if (signingIn && !learnt.signInChain && res.status === 402) {
    // The first call learns which chain the service takes sign-ins on from its challenge, then asks again
    // signed in; later calls sign in on their first request.
    learnt.signInChain = pickSignInChain(res.body as PaymentRequired);
    headers = { "SIGN-IN-WITH-X": await signInHeader(account, url, learnt.signInChain) };
    res = await ask(headers);
  }
  if (res.status === successStatus) return { data: read(res), payment: null };
  if (res.status !== 402) throw errorFromAnswer(res);

  const quote = res.body as PaymentRequired;
  const quoted = parsePaymentRefusal(quote.error);
  const requirement = quote.accepts?.[0];
  if (!requirement) {
    throw new PaymentRequiredError(
      `The service asked for payment but quoted no price: ${quote.error ?? ""}`,
      quote,
      quoted.reason ?? "no_price",
    );
  }
  if (signingIn && quoted.reason === "invalid_siwx") {
    throw new PaymentRequiredError(`The service refused the sign-in: ${quoted.message}`, quote, quoted.reason);
  }
  const cap = context.maxPaymentUnits;
  if (BigInt(requirement.amount) > cap) {
    throw new PaymentRequiredError(
      `${name} costs ${unitsToUsd(requirement.amount)} USD, above maxPaymentPerCall ${unitsToUsd(cap)} USD; nothing was paid.`,
      quote,
      "over_max_payment",
    );
  }
  if (!account) {
    throw new PaymentRequiredError(
      `${name} costs ${unitsToUsd(requirement.amount)} USD: pass an account to pay for it.`,
      quote,
      "no_account",
    );
  }

  // One signed payment for every attempt: sent again (a retry, or a wait while an earlier attempt holds it), it
  // buys one call at most, and its identifier gets the answer it paid for.
  const paying = { ...headers, "PAYMENT-SIGNATURE": await signPayment(account, quote, cap) };
  const paid = await whilePaymentInUse(
    () => ask(paying),
    (answer) => (answer.status === 402 ? (answer.body as PaymentRequired) : undefined),
  );
  if (paid.status === 402) {
    const refused = paid.body as PaymentRequired;
    const why = parsePaymentRefusal(refused.error);
    throw new PaymentRequiredError(`The payment was refused: ${why.message || "no reason given"}`, refused, why.reason);
  }
  if (paid.status !== successStatus) throw errorFromAnswer(paid);
  const data = read(paid);
  const header = paid.headers.get("payment-response");
  if (!header) return { data, payment: null };
  const payment = await readSettlement(
    decodeSettlementHeader(header),
    {
      quote,
      requirement,
      payer: account.address,
      ...(context.receiptSigner ? { receiptSigner: context.receiptSigner } : {}),
    },
    data,
  );
  return { data, payment };
}

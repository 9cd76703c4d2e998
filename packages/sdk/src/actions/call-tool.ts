import {
  inputToQuery,
  type PaidRouteName,
  type PaymentRequired,
  paidRoutes,
  routeMethod,
  type ToolInput,
  type ToolOutput,
  type ToolRoute,
} from "@agent-tools/schema";
import { payDecided } from "../channel-payment.js";
import type { ClientContext } from "../context.js";
import { decodeSettlementHeader, encodePaymentHeader, type Payment, whilePaymentInUse } from "../payment.js";
import {
  decideCallPayment,
  learnSignInChain,
  paymentRefusalError,
  refusedPaymentError,
  settledPayment,
  signInFor,
  type signPayment,
} from "../payment-policy.js";
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
 * One paid call: validate locally, ask (signed in when there is an account), let the payment policy
 * (`../payment-policy.ts`) check the quote against the caller's cap and budget, pay, and read the answer. A GET route sends its input as query parameters, other routes as a JSON body; the
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

  // Sign in (a holder is quoted the holder price), ask, and learn the sign-in chain from the first quote.
  const signInOptions = { account, signIn: context.signIn, resource: url };
  const signedIn = (value: string | undefined): Record<string, string> => (value ? { "SIGN-IN-WITH-X": value } : {});
  let headers = signedIn(await signInFor({ ...signInOptions, chainId: learnt.signInChain }));
  let res = await ask(headers);
  const learntChain =
    res.status === 402
      ? learnSignInChain({ ...signInOptions, chainId: learnt.signInChain, quote: res.body as PaymentRequired })
      : undefined;
  if (learntChain) {
    learnt.signInChain = learntChain;
    headers = signedIn(await signInFor({ ...signInOptions, chainId: learntChain }));
    res = await ask(headers);
  }
  if (res.status === successStatus) return { data: read(res), payment: null };
  if (res.status !== 402) throw errorFromAnswer(res);

  // The payment policy decides, before anything is signed; this transport carries its values in headers.
  const quote = res.body as PaymentRequired;
  const { limits, spending } = context;
  const { decision, hold } = await decideCallPayment({
    quote,
    limits,
    spending,
    account,
    channels: context.channels,
    upto: context.upto,
  });
  if (!decision.pay) throw paymentRefusalError({ tool: name, quote, refusal: decision.refusal, capWording: "option" });
  // Held until the answer: settled with what the call was charged, or let go when nothing was.
  const { requirement } = decision;
  try {
    // One signed payment for every attempt: sent again (a retry, or a wait while an earlier attempt holds it), it
    // buys one call at most, and its identifier gets the answer it paid for.
    const send = (payment: Awaited<ReturnType<typeof signPayment>>) =>
      whilePaymentInUse(
        () => ask({ ...headers, "PAYMENT-SIGNATURE": encodePaymentHeader(payment) }),
        (answer) => (answer.status === 402 ? (answer.body as PaymentRequired) : undefined),
      );
    const { answer: paid } = await payDecided({
      tool: name,
      quote,
      requirement,
      account: decision.account,
      channels: context.channels,
      limits,
      capWording: "option",
      send,
      outcomeOf: (answer) => {
        const header = answer.headers.get("payment-response");
        return {
          settlement: header ? decodeSettlementHeader(header) : undefined,
          paymentRequired: answer.status === 402 ? (answer.body as PaymentRequired) : undefined,
        };
      },
    });
    if (paid.status === 402) throw refusedPaymentError(paid.body as PaymentRequired);
    if (paid.status !== successStatus) throw errorFromAnswer(paid);
    const data = read(paid);
    const header = paid.headers.get("payment-response");
    if (!header) return { data, payment: null };
    const payment = await settledPayment(
      hold,
      decodeSettlementHeader(header),
      {
        quote,
        requirement,
        payer: decision.account.address,
        ...(context.receiptSigner ? { receiptSigner: context.receiptSigner } : {}),
      },
      data,
    );
    return { data, payment };
  } finally {
    hold.release();
  }
}

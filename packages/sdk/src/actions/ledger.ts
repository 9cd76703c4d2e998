import {
  inputToQuery,
  LEDGER_PATH,
  type LedgerQuery,
  type LedgerReport,
  ledgerQuerySchema,
  ledgerReportSchema,
  siwxChallengeChains,
} from "@agent-tools/schema";
import type { ClientContext } from "../context.js";
import { UnauthorizedError } from "../errors.js";
import { signInHeader } from "../sign-in.js";
import { errorFromAnswer, parseAnswer, validateLocally, withRetries } from "../transport.js";

/** What an operator's sign-in says. */
const OPERATOR_STATEMENT = "Sign in as the operator to read the settlement ledger.";

/** Parameters of `client.ledger()`: a range of UTC days (`from`, `to`). */
export type GetLedgerParameters = LedgerQuery;
/** What `client.ledger()` resolves with: the operator's ledger report. */
export type GetLedgerReturnType = LedgerReport;

/**
 * The operator's ledger: a GET signed in with a fresh SIWX header per request, on the first chain the service's
 * `WWW-Authenticate` names (learnt from an unsigned request's 401, then remembered). Not paid, so the whole
 * exchange is retried on network errors.
 */
export async function getLedger(context: ClientContext, query: GetLedgerParameters = {}): Promise<GetLedgerReturnType> {
  const { transport, account, learnt } = context;
  if (!account) {
    throw new UnauthorizedError(
      "The ledger is the operator's: create the client with the operator's account to sign in.",
      401,
      "sign_in_required",
    );
  }
  validateLocally(ledgerQuerySchema, query, "ledger");
  const url = `${transport.baseUrl}${LEDGER_PATH}${inputToQuery(query as Record<string, unknown>)}`;
  const ask = async (chain: string | undefined) =>
    transport.send(url, {
      headers: {
        accept: "application/json",
        ...(chain ? { "SIGN-IN-WITH-X": await signInHeader(account, url, chain, OPERATOR_STATEMENT) } : {}),
      },
    });
  const exchange = async (): Promise<LedgerReport> => {
    let res = await ask(learnt.operatorChain);
    if (res.status === 401 && !learnt.operatorChain) {
      const chain = siwxChallengeChains(res.headers.get("www-authenticate"))[0];
      if (!chain) {
        throw new UnauthorizedError(
          "The service asks for a sign-in but names no EVM chain to sign in on (WWW-Authenticate).",
          401,
          "sign_in_required",
        );
      }
      learnt.operatorChain = chain;
      res = await ask(learnt.operatorChain);
    }
    if (res.status !== 200) throw errorFromAnswer(res);
    return parseAnswer(ledgerReportSchema, res, LEDGER_PATH);
  };
  return withRetries(exchange);
}

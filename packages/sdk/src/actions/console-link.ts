import {
  LEDGER_ENTRIES_PATH,
  ledgerPageQuerySchema,
  OPERATOR_SESSION_PATH,
  operatorConsoleLink,
  operatorSessionStateSchema,
} from "@agent-tools/schema";
import type { ClientContext } from "../context.js";
import { UnauthorizedError } from "../errors.js";
import { signInHeader } from "../sign-in.js";
import { errorFromAnswer, parseAnswer, withRetries } from "../transport.js";
import { operatorRequest } from "./ledger.js";

/** What a console link's sign-in says. */
const CONSOLE_STATEMENT = "Sign in as the operator to open the operator console.";

/** What `client.consoleLink()` resolves with: the link, the address it signs in as, and until when it is taken. */
export interface CreateConsoleLinkReturnType {
  /** `<public origin>/operator#sign-in=<SIGN-IN-WITH-X>`: opens the operator console signed in, once. */
  url: string;
  /** The operator address the link signs in as. */
  address: string;
  /** When the service stops taking the link (ISO-8601): its sign-in's age limit after it was made. */
  expiresAt: string;
}

/**
 * A one-time link that opens the operator console signed in, in a browser without a wallet: the service's public
 * origin and the sign-in it takes for `/operator/session` (from `GET /operator/session`), a signed read of one ledger
 * entry to learn that the account is the operator before anything is handed out, then a `SIGN-IN-WITH-X` made for
 * `/operator/session` at that origin, carried in the link's fragment (a fragment is never sent to a server).
 */
export async function createConsoleLink(context: ClientContext): Promise<CreateConsoleLinkReturnType> {
  const { transport, account, learnt } = context;
  if (!account) {
    throw new UnauthorizedError(
      "The console is the operator's: create the client with the operator's account to make a link.",
      401,
      "sign_in_required",
    );
  }
  const answer = await withRetries(() =>
    transport.send(`${transport.baseUrl}${OPERATOR_SESSION_PATH}`, { headers: { accept: "application/json" } }),
  );
  if (answer.status !== 200) throw errorFromAnswer(answer);
  const { signIn } = parseAnswer(operatorSessionStateSchema, answer, OPERATOR_SESSION_PATH);
  const chain = signIn.chains.find((c) => c.startsWith("eip155:"));
  if (!chain) {
    throw new UnauthorizedError("The service names no EVM chain to sign in on.", 401, "sign_in_required");
  }
  learnt.operatorChain ??= chain;
  // The service says whether the account is the operator (403 `not_operator` otherwise), signed in for the origin
  // the link will be: a link another key made would only be refused once opened.
  await operatorRequest(context, {
    method: "GET",
    path: LEDGER_ENTRIES_PATH,
    schema: ledgerPageQuerySchema,
    input: { limit: 1 },
    signedForOrigin: signIn.origin,
  });
  // Read before signing: the link is taken until at least this time plus the age limit.
  const madeAt = Date.now();
  const header = await signInHeader(account, `${signIn.origin}${OPERATOR_SESSION_PATH}`, chain, CONSOLE_STATEMENT);
  return {
    url: operatorConsoleLink(signIn.origin, header),
    address: account.address,
    expiresAt: new Date(madeAt + signIn.maxAgeSeconds * 1000).toISOString(),
  };
}

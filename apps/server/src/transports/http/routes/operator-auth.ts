/**
 * Who is asking, on the operator's routes: a `SIGN-IN-WITH-X` header made for the route (one request each, on any
 * instance), or, on reads, the operator console's session cookie that such a sign-in opened (operator-console.ts).
 * Anyone but the operator address is refused.
 */
import { siwxChallenge } from "@agent-tools/schema";
import type { Request } from "express";
import { getAddress } from "viem";
import { ServiceError } from "../../../errors/service-error.js";
import type { PaymentService } from "../../../paid-call/payment-service.js";
import { SIGN_IN_NONCE_RETENTION_MS, verifySignIn } from "../../../paid-call/verify-sign-in.js";
import type { OperatorSessionStore } from "../../../store/operator-sessions.js";

/** The console's session cookie: HttpOnly, sent to `/operator` paths of this site only. */
export const SESSION_COOKIE = "agent_tools_operator";

export interface OperatorAuth {
  /**
   * The operator's address when `req` is signed in as the operator for `path` (a session cookie counts when
   * `session` is true); otherwise the refusal, thrown: 401 `sign_in_required` with the chains it takes, or 403
   * `not_operator`.
   */
  operatorOf(req: Request, path: string, options?: { session?: boolean }): Promise<string>;
  /** The operator's open console session that `req`'s cookie names, if any; never a refusal. */
  sessionOf(req: Request): Promise<{ address: string; expiresAt: Date } | undefined>;
}

export function sessionTokenOf(req: Request): string | undefined {
  for (const pair of (req.get("cookie") ?? "").split(";")) {
    const [name, ...value] = pair.trim().split("=");
    if (name === SESSION_COOKIE) return value.join("=");
  }
  return undefined;
}

export function createOperatorAuth(deps: {
  payments: PaymentService;
  operator: string;
  sessions?: OperatorSessionStore;
}): OperatorAuth {
  const { payments, sessions } = deps;
  const operator = getAddress(deps.operator);
  const challenge = siwxChallenge("agent-tools operator", payments.signInChains);
  const refuse = (message: string, reason: string): never => {
    throw new ServiceError("sign_in_required", message, [{ field: "SIGN-IN-WITH-X", message: reason }], {
      "WWW-Authenticate": challenge,
    });
  };
  const onlyOperator = (address: string) => {
    if (address !== operator) {
      throw new ServiceError("not_operator", `${address} is not the operator of this service.`, [
        { field: "SIGN-IN-WITH-X", message: "not the operator address" },
      ]);
    }
    return address;
  };

  const sessionOf = async (req: Request) => {
    const token = sessions ? sessionTokenOf(req) : undefined;
    const session = token ? await sessions!.find(token, payments.now()) : undefined;
    return session ? { address: getAddress(session.address), expiresAt: session.expiresAt } : undefined;
  };

  return {
    sessionOf: async (req) => {
      const session = await sessionOf(req);
      // A session opened by an address that is no longer the operator (OPERATOR_ADDRESS changed) is none.
      return session?.address === operator ? session : undefined;
    },
    async operatorOf(req, path, options = {}) {
      const header = req.get("sign-in-with-x");
      if (header === undefined) {
        const session = options.session ? await sessionOf(req) : undefined;
        if (session) return onlyOperator(session.address);
        return refuse(
          "Sign in as the operator with a SIGN-IN-WITH-X header (agent-tools ledger does it with the operator key).",
          "missing",
        );
      }
      const signIn = await verifySignIn(header, payments, path);
      if (!signIn.ok) return refuse(`The sign-in was refused: ${signIn.reason}.`, signIn.reason);
      onlyOperator(signIn.address);
      // A sign-in serves one request, on any instance and across restarts.
      const nonce = await payments.signIns.claim(
        signIn.address,
        signIn.nonce,
        new Date(payments.now().getTime() + SIGN_IN_NONCE_RETENTION_MS),
      );
      if (nonce !== "claimed") {
        throw new ServiceError("sign_in_required", "This sign-in was already used; sign in again.", [
          { field: "SIGN-IN-WITH-X", message: "nonce already used" },
        ]);
      }
      await payments.signIns.spend(signIn.address, signIn.nonce);
      return signIn.address;
    },
  };
}

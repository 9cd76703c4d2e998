import { HOLDER_SIGN_IN_STATEMENT, type PaymentRequired } from "@agent-tools/schema";
import { createSIWxPayload, encodeSIWxHeader } from "@x402/extensions/sign-in-with-x";
import type { LocalAccount } from "viem";
import { PaymentRequiredError } from "./errors.js";

/** Random hex nonce from the platform's crypto (Node 20+ and browsers). */
function freshNonce(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A fresh `SIGN-IN-WITH-X` header for one request: an EIP-4361 message for the service's origin and this URL,
 * issued now with a new nonce, signed (eip191) by `account`.
 */
export async function signInHeader(
  account: LocalAccount,
  url: string,
  chainId: string,
  statement: string = HOLDER_SIGN_IN_STATEMENT,
): Promise<string> {
  const payload = await createSIWxPayload(
    {
      domain: new URL(url).host,
      uri: url,
      version: "1",
      statement,
      nonce: freshNonce(),
      issuedAt: new Date().toISOString(),
      chainId,
      type: "eip191",
      resources: [url],
    },
    account,
    url,
  );
  return encodeSIWxHeader(payload);
}

/** The first EVM chain a challenge's `sign-in-with-x` extension lists; `PaymentRequiredError` when it lists none. */
export function pickSignInChain(challenge: PaymentRequired): string {
  const siwx = challenge.extensions?.["sign-in-with-x"] as { supportedChains?: { chainId: string }[] } | undefined;
  const chain = siwx?.supportedChains?.find((c) => c.chainId.startsWith("eip155:"))?.chainId;
  if (!chain) {
    throw new PaymentRequiredError("The service does not offer sign-in with Ethereum.", challenge, "no_sign_in");
  }
  return chain;
}

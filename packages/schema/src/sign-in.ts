/**
 * Sign-In-With-X as this service speaks it: what a holder's sign-in says, and the `WWW-Authenticate` challenge of
 * the routes that need a sign-in (the operator's ledger), written by the service and read by the SDK.
 */

/** The statement of a holder's sign-in: the 402 challenge offers it, the SDK signs it. */
export const HOLDER_SIGN_IN_STATEMENT = "Sign in as a holder of the collection to pay the holder price.";

/** `SIWX realm="<realm>", chains="eip155:31337 eip155:31338"`: a 401's `WWW-Authenticate` for a sign-in. */
export function siwxChallenge(realm: string, chains: readonly string[]): string {
  return `SIWX realm="${realm}", chains="${chains.join(" ")}"`;
}

/** The EVM chains a `WWW-Authenticate: SIWX ...` challenge names, in its order; none for any other scheme. */
export function siwxChallengeChains(header: string | null): string[] {
  if (!header || !/^\s*SIWX\b/i.test(header)) return [];
  const chains = /\bchains="([^"]*)"/i.exec(header)?.[1] ?? "";
  return chains.split(/[\s,]+/).filter((chain) => /^eip155:\d+$/.test(chain));
}

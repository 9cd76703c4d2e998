import { encodeSIWxHeader } from "@x402/extensions/sign-in-with-x";

/**
 * A holder's sign-in as a transport without headers carries it (MCP's `_meta`, an A2A message's metadata): the
 * `SIGN-IN-WITH-X` header's value, or its decoded payload object. Returns the header's value for the paid call; a
 * payload that cannot be encoded becomes an empty value, which the paid call refuses as an invalid sign-in.
 */
export function signInHeaderValue(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") return value;
  try {
    return encodeSIWxHeader(value as Parameters<typeof encodeSIWxHeader>[0]);
  } catch {
    return "";
  }
}

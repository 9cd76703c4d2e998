/**
 * The marketplace OAuth tokens (`read:eligibility`) that wallets granted the service, read from the operator's file
 * (`ELIGIBILITY_TOKENS_FILE`): a JSON object of wallet addresses to tokens. The marketplace answers a wallet's drop
 * eligibility only with that wallet's token; without one, the allowlist scan says the wallet has not authorized the
 * service (docs/deployment.md, "The marketplace").
 */
import { readFile } from "node:fs/promises";
import { StartupError, shortReason } from "../errors/startup-error.js";

/** A wallet's marketplace token for its drop eligibility, when it granted one. */
export type EligibilityTokens = (wallet: string) => string | undefined;

export async function readEligibilityTokens(file: string): Promise<EligibilityTokens> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new StartupError("ELIGIBILITY_TOKENS_FILE", `${file} cannot be read as JSON: ${shortReason(error)}`);
  }
  const entries = json !== null && typeof json === "object" && !Array.isArray(json) ? Object.entries(json) : undefined;
  const valid = entries?.every(([wallet, token]) => /^0x[0-9a-fA-F]{40}$/.test(wallet) && typeof token === "string");
  if (!entries || !valid) {
    throw new StartupError(
      "ELIGIBILITY_TOKENS_FILE",
      `${file} must be a JSON object of wallet addresses (0x...) to OAuth tokens (strings)`,
    );
  }
  const tokens = new Map(entries.map(([wallet, token]) => [wallet.toLowerCase(), token as string]));
  return (wallet) => tokens.get(wallet.toLowerCase());
}

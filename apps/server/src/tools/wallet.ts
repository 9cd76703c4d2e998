import { type Address, getAddress } from "viem";
import { ServiceError, uncharged } from "../errors/service-error.js";

/**
 * The wallet a wallet tool (drop radar's eligibility check, allowlist scan, portfolio, their missions) works on:
 * `walletAddress` when the request names one, else the signed-in caller, else none (docs/decisions.md, "Access,
 * identity and price").
 */
export function resolveWallet(walletAddress: string | undefined, caller: Address | undefined): Address | undefined {
  return walletAddress ? getAddress(walletAddress) : caller;
}

/** {@link resolveWallet}, or 400 `invalid_request` naming `field` when there is none. */
export function requireWallet(
  walletAddress: string | undefined,
  caller: Address | undefined,
  refusal: { message: string; field?: string; detail: string },
): Address {
  const wallet = resolveWallet(walletAddress, caller);
  if (wallet) return wallet;
  throw new ServiceError("invalid_request", uncharged(refusal.message), [
    { field: refusal.field ?? "walletAddress", message: refusal.detail },
  ]);
}

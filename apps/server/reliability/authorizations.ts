/**
 * x402 `exact` payments with real EIP-3009 signatures whose every field can be chosen: the payment abuse cases sign
 * what an attacker would (a lower value, another payee, an expired window...) with a real key.
 */
import type { PaymentRequirements } from "@x402/core/types";
import { type Address, type Hex, type PrivateKeyAccount, toHex } from "viem";
import { transferWithAuthorizationTypes } from "../src/payment/exact-evm-facilitator.js";

export interface AuthorizationFields {
  from?: Address;
  to?: Address;
  value?: string;
  validAfter?: number;
  validBefore?: number;
  nonce?: Hex;
  /** The EIP-712 domain's contract (the asset) and chain. */
  verifyingContract?: Address;
  chainId?: number;
  /** Fields of `accepted` (the requirement the payment says it pays). */
  accepted?: Partial<PaymentRequirements>;
}

/** A PAYMENT-SIGNATURE header for `requirements`, signed by `signer`, with `fields` overriding what a client sets. */
export async function signedPayment(
  signer: PrivateKeyAccount,
  requirements: PaymentRequirements,
  chainId: number,
  fields: AuthorizationFields = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: fields.from ?? signer.address,
    to: fields.to ?? (requirements.payTo as Address),
    value: fields.value ?? requirements.amount,
    validAfter: String(fields.validAfter ?? now - 600),
    validBefore: String(fields.validBefore ?? now + requirements.maxTimeoutSeconds),
    nonce: fields.nonce ?? toHex(crypto.getRandomValues(new Uint8Array(32))),
  };
  const extra = requirements.extra as { name: string; version: string };
  const signature = await signer.signTypedData({
    domain: {
      name: extra.name,
      version: extra.version,
      chainId: fields.chainId ?? chainId,
      verifyingContract: fields.verifyingContract ?? (requirements.asset as Address),
    },
    types: transferWithAuthorizationTypes,
    primaryType: "TransferWithAuthorization",
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    },
  });
  const payload = {
    x402Version: 2,
    accepted: { ...requirements, ...fields.accepted },
    payload: { signature, authorization },
  };
  return Buffer.from(JSON.stringify(payload)).toString("base64");
}
